package suite

import (
	"context"
	"reflect"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/kernels/cost"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/reports"
)

// TestRunRecordsCosts runs a contract of ptxprop's RMSNorm forward on the
// emulator: the report holds the cost probe's counts of each of ptxprop's
// kernels it lists, at each fixed shape, and they are what a fresh probe
// counts (deterministic).
func TestRunRecordsCosts(t *testing.T) {
	c := Default()
	c.Backend, c.Report, c.Summary, c.Progress, c.Checks = "emu", "off", false, 0, 3
	rep, err := Run(context.Background(), c, []Job{
		{Name: "TestCostRMSNorm", Run: func(t properties.TB) { properties.RMSNormForwardContract(t, kernels.RMSNormFwd) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Validate(); err != nil {
		t.Fatal(err)
	}
	ours := 0
	for _, rk := range rep.Kernels {
		k, ok := kernels.Lookup(rk.Name)
		if rk.Origin != reports.KernelOurs || !ok {
			continue
		}
		ours++
		want, err := cost.Measure(k)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != len(cost.Shapes(k)) {
			t.Fatalf("%s: %d costs for %d shapes", k.Name, len(want), len(cost.Shapes(k)))
		}
		for _, w := range want {
			got := rep.Cost(w.Kernel, w.Shape)
			if got == nil {
				t.Errorf("%s %s: no cost in the report", w.Kernel, w.Shape)
				continue
			}
			if *got != w || w.Elements < 1 || w.InstructionsPerElement <= 0 || w.BytesPerElement <= 0 {
				t.Errorf("%s %s: report %+v, fresh probe %+v", w.Kernel, w.Shape, *got, w)
			}
		}
	}
	if ours == 0 || len(rep.Costs) == 0 {
		t.Fatalf("the report lists %d of ptxprop's kernels and %d costs", ours, len(rep.Costs))
	}
}

// TestCostsWhere checks where the probe runs: on the emulator, unsharded or
// on shard 0, for ptxprop's kernels with their committed PTX only.
func TestCostsWhere(t *testing.T) {
	k, _ := kernels.Lookup("softmax_fwd")
	dev := cudart.New(emu.New(emu.Config{}), cudart.DefaultOptions())
	defer dev.Close()
	ourK := reports.NewKernel(k.Name, reports.KernelOurs, "kernels/"+k.PTXFile, k.Entry, k.PTX)
	edited := reports.NewKernel(k.Name, reports.KernelOurs, "kernels/"+k.PTXFile, k.Entry, append(k.PTX, '\n'))
	user := ourK
	user.Origin = reports.KernelUser
	shard := func(i int) *sharding { return &sharding{Shard: properties.Shard{Index: i, Count: 2}} }
	emuInfo := cudart.Info{Backend: "emu"}
	for _, c := range []struct {
		name    string
		kernel  reports.Kernel
		devs    []cudart.Device
		info    cudart.Info
		shard   *sharding
		records bool
	}{
		{"emulator", ourK, []cudart.Device{dev}, emuInfo, nil, true},
		{"shard 0", ourK, []cudart.Device{dev}, emuInfo, shard(0), true},
		{"shard 1", ourK, []cudart.Device{dev}, emuInfo, shard(1), false},
		{"GPU", ourK, []cudart.Device{dev}, cudart.Info{Backend: "gpu"}, nil, false},
		{"no device", ourK, nil, emuInfo, nil, false},
		{"other PTX", edited, []cudart.Device{dev}, emuInfo, nil, false},
		{"user's kernel", user, []cudart.Device{dev}, emuInfo, nil, false},
	} {
		r := &runner{devs: c.devs, shard: c.shard}
		rep := reports.New(reports.Run{})
		rep.UpsertKernel(c.kernel)
		r.addCosts(rep, c.info)
		var shapes []string
		for _, cs := range rep.Costs {
			shapes = append(shapes, cs.Shape)
		}
		want := []string(nil)
		if c.records {
			want = []string{"rows=8 hidden=1024", "rows=3 hidden=33", "rows=2 hidden=9001"}
		}
		if !reflect.DeepEqual(shapes, want) {
			t.Errorf("%s: costs at %q, want %q", c.name, shapes, want)
		}
	}
}

// TestMergeCosts: merging a run's costs into its report replaces the count
// of each kernel and shape it has, keeps the others and adds new ones.
func TestMergeCosts(t *testing.T) {
	old := reports.New(reports.Run{})
	old.Costs = []reports.Cost{{Kernel: "a", Shape: "s", Elements: 1, InstructionsPerElement: 1}, {Kernel: "b", Shape: "s", Elements: 1, InstructionsPerElement: 2}}
	mergeCosts(old, []reports.Cost{{Kernel: "a", Shape: "s", Elements: 1, InstructionsPerElement: 3}, {Kernel: "c", Shape: "s", Elements: 1, InstructionsPerElement: 4}})
	want := []reports.Cost{{Kernel: "a", Shape: "s", Elements: 1, InstructionsPerElement: 3}, {Kernel: "b", Shape: "s", Elements: 1, InstructionsPerElement: 2}, {Kernel: "c", Shape: "s", Elements: 1, InstructionsPerElement: 4}}
	if !reflect.DeepEqual(old.Costs, want) {
		t.Errorf("merged costs %+v, want %+v", old.Costs, want)
	}
}
