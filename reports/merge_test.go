package reports

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// shard is a report of one shard of a run on an H200.
func shard(start time.Time, checks int, preds ...Prediction) *Report {
	r := New(Run{ID: NewRunID(), Start: start, End: start.Add(time.Minute), GitCommit: "abc", GoVersion: "go1.26.8",
		Backend: BackendGPU, Device: "NVIDIA H200", RapidChecks: checks, CommandLine: []string{"properties.test", "-rapid.checks=" + strconv.Itoa(checks)}})
	r.Predictions = preds
	r.Kernels = []Kernel{{Name: "rmsnorm_fwd", Origin: KernelOurs, PTX: "kernels/ptx/rmsnorm_fwd.ptx", Entry: "rmsnorm_fwd", PTXSHA256: shaA}}
	return r
}

func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	a := shard(t0.Add(time.Second), 100,
		Prediction{ID: "A", Status: Discharged, Checks: 100, Duration: 2,
			ErrorStats: &ErrorStats{MaxAbs: ptr(1e-6), MaxRel: ptr(1e-5), MaxULP: ptr(3.0), MaxRatio: 0.3, ToleranceFormula: "f", NaiveRatio: ptr(0.5)}},
		Prediction{ID: "B", Status: Skipped, Reason: "not run"},
		Prediction{ID: "C", Status: Discharged, Checks: 50, Duration: 1},
		Prediction{ID: "D", Status: NotRun, Reason: "filtered out"},
		Prediction{ID: "E", Status: NotRun, Reason: "filtered out"},
		Prediction{ID: "F", Status: Discharged, Checks: 5, ErrorStats: &ErrorStats{MaxRatio: 0.1}})
	b := shard(t0, 200,
		Prediction{ID: "A", Status: Discharged, Checks: 200, Duration: 4,
			ErrorStats: &ErrorStats{MaxAbs: ptr(2e-6), MaxRel: ptr(1e-6), MaxULP: ptr(2.0), MaxRatio: 0.4, ToleranceFormula: "f", NaiveRatio: ptr(0.4)}},
		Prediction{ID: "B", Status: Discharged, Checks: 10, Duration: 1},
		Prediction{ID: "C", Status: Inconclusive, Reason: "did not finish", Checks: 20, Duration: 1, Flags: []Flag{FlagNonDeterministic}, NonDeterministic: "x"},
		Prediction{ID: "D", Status: Discharged, Checks: 7},
		Prediction{ID: "E", Status: NotRun, Reason: "filtered out"},
		Prediction{ID: "F", Status: Discharged, Checks: 5, ErrorStats: &ErrorStats{MaxAbs: ptr(0.5), MaxRel: ptr(0.0), MaxULP: ptr(0.0), MaxRatio: 0.2}})
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Run.Start.Equal(t0) || !m.Run.End.Equal(t0.Add(time.Second+time.Minute)) || m.Run.RapidChecks != 300 || len(m.Run.Notes) != 2 ||
		!strings.Contains(m.Run.Notes[1], "shard 2: properties.test -rapid.checks=200") {
		t.Errorf("run = %+v", m.Run)
	}
	pa := m.Prediction("A")
	if pa.Status != Discharged || pa.Checks != 300 || pa.Duration != 6 || pa.ChecksPerSecond != 50 {
		t.Errorf("A = %+v", pa)
	}
	// Maxima over the shards; the yardstick is 0.4 over the larger naive
	// maximum, max(0.3/0.5, 0.4/0.4) = 1.
	if e := pa.ErrorStats; *e.MaxAbs != 2e-6 || *e.MaxRel != 1e-5 || *e.MaxULP != 3 || e.MaxRatio != 0.4 || e.NaiveRatio == nil || math.Abs(*e.NaiveRatio-0.4) > 1e-15 {
		t.Errorf("A's stats = %+v (naive %v)", e, e.NaiveRatio)
	}
	if pb := m.Prediction("B"); pb.Status != Discharged || pb.Checks != 10 {
		t.Errorf("B (skipped in one shard, run in the other) = %+v", pb)
	}
	if pc := m.Prediction("C"); pc.Status != Inconclusive || pc.Reason != "did not finish" || pc.Checks != 70 || !pc.HasFlag(FlagNonDeterministic) {
		t.Errorf("C = %+v", pc)
	}
	if pd := m.Prediction("D"); pd.Status != Discharged || pd.Checks != 7 {
		t.Errorf("D (not run in one shard, run in the other) = %+v", pd)
	}
	if pe := m.Prediction("E"); pe.Status != NotRun || !m.Partial() {
		t.Errorf("E (not run in either) = %+v; partial %v", pe, m.Partial())
	}
	// Absent in one shard, a statistic is the other's.
	if e := m.Prediction("F").ErrorStats; e.MaxAbs == nil || *e.MaxAbs != 0.5 || e.MaxRatio != 0.2 {
		t.Errorf("F's stats = %+v", e)
	}
	if len(m.Kernels) != 1 {
		t.Errorf("kernels = %+v", m.Kernels)
	}
	if m.Run.ID == "" || m.Run.ID == a.Run.ID || m.Run.ID == b.Run.ID || len(m.Run.MergedFrom) != 2 ||
		m.Run.MergedFrom[0] != a.Run.ID || m.Run.MergedFrom[1] != b.Run.ID {
		t.Errorf("merged run id %q from %q; shards %q, %q", m.Run.ID, m.Run.MergedFrom, a.Run.ID, b.Run.ID)
	}
}

// TestMergeRefusesTheSameRunTwice: a report given twice, or a merged report
// with one of its shards, would add the same checks up twice.
func TestMergeRefusesTheSameRunTwice(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	a := shard(t0, 10, Prediction{ID: "A", Status: Discharged, Checks: 10})
	b := shard(t0, 10, Prediction{ID: "A", Status: Discharged, Checks: 10})
	c := shard(t0, 10, Prediction{ID: "A", Status: Discharged, Checks: 10})
	ab, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	for name, rs := range map[string][]*Report{
		"twice":            {a, a},
		"merged and shard": {ab, c, b},
		"merged twice":     {ab, ab},
	} {
		m, err := Merge(rs...)
		if !errors.Is(err, ErrSameRun) {
			t.Errorf("%s: Merge = %v, %v; want ErrSameRun", name, m, err)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
	abc, err := Merge(ab, c)
	if err != nil || abc.Prediction("A").Checks != 30 || len(abc.Run.MergedFrom) != 3 {
		t.Errorf("merged with a new shard: %v, %+v", err, abc)
	}
}

func TestMergeWorstShardWins(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	ce := &Counterexample{Draws: []Draw{{Label: "n", Value: "1000"}}}
	a := shard(t0, 10, Prediction{ID: "A", Status: Discharged, Checks: 10})
	b := shard(t0, 10, Prediction{ID: "A", Status: Falsified, Checks: 3, ChecksFailed: 1, Reason: "n too large",
		Counterexample: ce, Reproduction: &Reproduction{Command: "go test -run X -rapid.seed=7"}})
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	p := m.Prediction("A")
	if p.Status != Falsified || p.Checks != 13 || p.ChecksFailed != 1 || p.Counterexample != ce || p.Reproduction.Command != "go test -run X -rapid.seed=7" {
		t.Errorf("A = %+v", p)
	}
}

func TestMergeRefusesOtherRuns(t *testing.T) {
	t0 := time.Now()
	a := shard(t0, 10)
	for name, change := range map[string]func(r *Report){
		"commit":  func(r *Report) { r.Run.GitCommit = "def" },
		"backend": func(r *Report) { r.Run.Backend = BackendEmu },
		"device":  func(r *Report) { r.Run.Device = "NVIDIA H100" },
		"kernel":  func(r *Report) { r.Kernels[0].PTXSHA256 = shaB },
		"mutant": func(r *Report) {
			r.Mutants = []Mutant{{Name: "m", Kind: MutantNamed, Status: MutantSkipped}}
			a.Mutants = r.Mutants
		},
	} {
		b := shard(t0, 10)
		a.Mutants = nil
		change(b)
		if _, err := Merge(a, b); err == nil || !strings.Contains(err.Error(), "not shards of one run") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := Merge(); err == nil {
		t.Error("Merge of nothing: no error")
	}
}
