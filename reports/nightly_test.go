package reports

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNightlyValidateGoOnly: what the schema cannot say about the nightly's
// sections, Validate does.
func TestNightlyValidateGoOnly(t *testing.T) {
	cases := []struct {
		name, want string
		edit       func(r *Report)
	}{
		{"duplicate benchmark", "duplicate kernel and shape", func(r *Report) { r.Benchmarks = append(r.Benchmarks, r.Benchmarks[0]) }},
		{"duplicate cost", "duplicate kernel and shape", func(r *Report) { r.Costs = append(r.Costs, r.Costs[0]) }},
		{"duplicate coverage", "duplicate kernel", func(r *Report) { r.Coverage = append(r.Coverage, r.Coverage[0]) }},
		{"covered above branches", "covered 13 is above branches 12", func(r *Report) { r.Coverage[0].Covered = 13 }},
		{"too many uncovered", "3 uncovered branches listed", func(r *Report) {
			r.Coverage[0].Uncovered = append(r.Coverage[0].Uncovered, UncoveredBranch{Line: 9})
		}},
		{"too many uncovered blocks", "8 of 9 blocks covered with 2 listed uncovered", func(r *Report) {
			r.Coverage[0].UncoveredBlocks = append(r.Coverage[0].UncoveredBlocks, 61)
		}},
		{"finding of a tool that did not run", "not among sanitizer.tools", func(r *Report) { r.Sanitizer.Findings[0].Tool = "initcheck" }},
		{"size bucket upside down", "size_max 0 is below size_min 1", func(r *Report) { r.Predictions[0].ErrorStats.BySize[0].SizeMax = 0 }},
		{"duplicate size bucket", "duplicate bucket", func(r *Report) {
			b := r.Predictions[0].ErrorStats.BySize
			r.Predictions[0].ErrorStats.BySize = append(b, b[0])
		}},
		{"NaN copy ratio", "copy_ratio[1] NaN", func(r *Report) { r.Benchmarks[0].CopyRatio[1] = math.NaN() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := sampleReport()
			c.edit(r)
			err := r.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want a problem containing %q", err, c.want)
			}
		})
	}
}

func TestMergeNightly(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	pred := func(sizes ...SizeStat) Prediction {
		return Prediction{ID: "A", Status: Discharged, Checks: 10, ErrorStats: &ErrorStats{MaxRatio: 0.5, BySize: sizes}}
	}
	a := shard(t0, 10, pred(SizeStat{SizeMin: 32, SizeMax: 63, Checks: 4, MaxRatio: 0.2}, SizeStat{SizeMin: 64, SizeMax: 127, Checks: 6, MaxRatio: 0.5}))
	b := shard(t0, 10, pred(SizeStat{SizeMin: 32, SizeMax: 63, Checks: 10, MaxRatio: 0.4}))
	a.Benchmarks = []Benchmark{{Kernel: "rmsnorm_fwd", Shape: "s1", CopyRatio: []float64{0.5}}}
	b.Benchmarks = []Benchmark{{Kernel: "rmsnorm_fwd", Shape: "s2", CopyRatio: []float64{0.7}}}
	a.Sanitizer = &Sanitizer{Tools: []string{"memcheck"}}
	b.Sanitizer = &Sanitizer{Tools: []string{"racecheck"}, Findings: []SanitizerFinding{{Tool: "racecheck", Kind: "RAW hazard"}}}
	a.Run.Environment = map[string]string{"torch": "2.5"}
	b.Run.Environment = map[string]string{"torch": "2.5", "python": "3.12"}
	a.Costs = []Cost{{Kernel: "rmsnorm_fwd", Shape: "s1", Elements: 4, InstructionsPerElement: 1, BytesPerElement: 8}}
	b.Coverage = []Coverage{{Kernel: "rmsnorm_fwd", Branches: 2, Covered: 2}}
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Benchmarks) != 2 || len(m.Costs) != 1 || len(m.Coverage) != 1 {
		t.Errorf("benchmarks %d, costs %d, coverage %d; want 2, 1, 1", len(m.Benchmarks), len(m.Costs), len(m.Coverage))
	}
	if s := m.Sanitizer; s == nil || !slices.Equal(s.Tools, []string{"memcheck", "racecheck"}) || len(s.Findings) != 1 {
		t.Errorf("sanitizer %+v, want both tools and the one finding", s)
	}
	if len(m.Run.Environment) != 2 {
		t.Errorf("environment %v, want both keys", m.Run.Environment)
	}
	want := []SizeStat{{SizeMin: 32, SizeMax: 63, Checks: 14, MaxRatio: 0.4}, {SizeMin: 64, SizeMax: 127, Checks: 6, MaxRatio: 0.5}}
	if got := m.Predictions[0].ErrorStats.BySize; !slices.Equal(got, want) {
		t.Errorf("by_size %+v, want %+v", got, want)
	}

	b.Benchmarks[0].Shape = "s1"
	b.Run.Environment["torch"] = "2.6"
	_, err = Merge(a, b)
	for _, w := range []string{`benchmark "rmsnorm_fwd @ s1" is in an earlier report too`, `environment "torch" is "2.6"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Merge = %v, want an error containing %q", err, w)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(c.xs); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

func TestSummaryNightly(t *testing.T) {
	var b strings.Builder
	if err := Summary(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"bench rmsnorm_fwd rows=4096 hidden=4096: copy 0.82 (3 runs, 0.81–0.83)  torch eager 2.1×  torch.compile 1.1×\n",
		"bench rmsnorm_fwd rows=4096 hidden=512: copy 0.6 (1 run)\n",
		"coverage rmsnorm_fwd: 10/12 branch directions (83.3%), 8/9 blocks, 1 explained unreachable, uncovered: line 57 @%p3 taken (setp.lt.s32 %p3, %r5, %r2;)\n",
		"coverage rmsnorm_bwd: 0/0 branch directions (100.0%)\n",
		"cost rmsnorm_fwd rows=3 hidden=33: 41.5 instructions, 12.1 bytes per element\n",
		"sanitizer (memcheck, racecheck): 2 findings\n  racecheck rmsnorm_bwd:88 RAW hazard: Race reported",
		"  memcheck (api) CUDA_ERROR_INVALID_VALUE: cuFuncGetParamInfo\n",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("summary lacks %q:\n%s", w, b.String())
		}
	}
}

func TestMarkdownNightly(t *testing.T) {
	var b strings.Builder
	if err := Markdown(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"## Benchmarks", "| `rmsnorm_fwd` | rows=4096 hidden=4096 | 0.82 (3 runs, 0.81–0.83) | 2.1× | 1.1× |",
		"## Branch coverage", "| `rmsnorm_fwd` | 10/12 (83.3%) | 8/9 | line 57 @%p3 taken (setp.lt.s32 %p3, %r5, %r2;); line 70 @!%p4 not taken unreachable: hidden ≤ 2³¹−1 |",
		"## Emulator costs", "| `rmsnorm_fwd` | rows=3 hidden=33 | 99 | 41.5 | 12.1 |",
		"## Sanitizer", "Tools: memcheck, racecheck. 2 findings.", "| racecheck | `rmsnorm_bwd` | 88 | RAW hazard |",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("Markdown lacks %q", w)
		}
	}
	b.Reset()
	if err := Markdown(&b, minimalReport()); err != nil || strings.Contains(b.String(), "## Sanitizer") {
		t.Errorf("Markdown of a report without a sanitizer pass shows one (%v)", err)
	}
}
