package reports

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The rules on devices the schema cannot state: ordinals unique in a run,
// a prediction's devices ascending and among the run's.
func TestValidateDevices(t *testing.T) {
	for name, c := range map[string]struct {
		edit func(r *Report)
		want string
	}{
		"repeated ordinal":        {func(r *Report) { r.Run.Devices[1].Ordinal = 0 }, "ordinal 0 is repeated"},
		"unknown device":          {func(r *Report) { r.Predictions[1].Devices = []int{2} }, "device 2 is not among the run's devices"},
		"descending devices":      {func(r *Report) { r.Predictions[0].Devices = []int{1, 0} }, "not ascending"},
		"devices of no run":       {func(r *Report) { r.Run.Devices = nil }, "device 0 is not among the run's devices"},
		"device backend":          {func(r *Report) { r.Run.Devices[0].Backend = "cuda" }, "backend \"cuda\""},
		"mutant's unknown device": {func(r *Report) { r.Mutants[4].Device = ptr(3) }, "device 3 is not among the run's devices"},
		"negative launches":       {func(r *Report) { r.Run.Devices[0].Launches = -1 }, "launches"},
	} {
		t.Run(name, func(t *testing.T) {
			r := sampleReport()
			if err := r.Validate(); err != nil {
				t.Fatalf("the sample is invalid: %v", err)
			}
			c.edit(r)
			err := r.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want a problem containing %q", err, c.want)
			}
		})
	}
}

// Shards of one run on the same two devices add up per device, and a
// prediction's devices are the union of its shards'.
func TestMergeDevices(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	a := shard(t0, 10, Prediction{ID: "A", Status: Discharged, Checks: 10, Devices: []int{1}})
	a.Run.Devices = []Device{{Backend: BackendGPU, Ordinal: 1, UUID: "GPU-b", ContractRuns: 1, Launches: 10}}
	b := shard(t0, 20, Prediction{ID: "A", Status: Discharged, Checks: 20, Devices: []int{0, 1}})
	b.Run.Devices = []Device{{Backend: BackendGPU, Ordinal: 0, UUID: "GPU-a", ContractRuns: 1, Launches: 5},
		{Backend: BackendGPU, Ordinal: 1, UUID: "GPU-b", ContractRuns: 1, Launches: 15}}
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []Device{{Backend: BackendGPU, Ordinal: 0, UUID: "GPU-a", ContractRuns: 1, Launches: 5},
		{Backend: BackendGPU, Ordinal: 1, UUID: "GPU-b", ContractRuns: 2, Launches: 25}}
	if !slices.Equal(m.Run.Devices, want) {
		t.Errorf("merged devices = %+v, want %+v", m.Run.Devices, want)
	}
	if p := m.Prediction("A"); !slices.Equal(p.Devices, []int{0, 1}) {
		t.Errorf("A's devices = %v, want [0 1]", p.Devices)
	}
	// Ordinal 1 of another shard is another GPU: not one run's shards.
	c := shard(t0, 10, Prediction{ID: "A", Status: Discharged, Checks: 10, Devices: []int{1}})
	c.Run.Devices = []Device{{Backend: BackendGPU, Ordinal: 1, UUID: "GPU-c", ContractRuns: 1, Launches: 10}}
	if _, err := Merge(a, c); err == nil || !strings.Contains(err.Error(), "device 1") {
		t.Errorf("merging shards whose device 1 differs: %v, want an error naming device 1", err)
	}
}
