package reports

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestEnums(t *testing.T) {
	type enum interface {
		Valid() bool
		MarshalText() ([]byte, error)
	}
	good := []enum{BackendGPU, BackendEmu, Discharged, Falsified, Inconclusive, Skipped, Error, NotRun, NotClaimed,
		MutantNamed, MutantGeneric, MutantKilled, MutantSurvived, MutantEquivalent, MutantError, MutantSkipped,
		FlagUnproven, FlagNonDeterministic}
	for _, e := range good {
		if !e.Valid() {
			t.Errorf("%v.Valid() = false", e)
		}
		if b, err := e.MarshalText(); err != nil || string(b) != reflect.ValueOf(e).String() {
			t.Errorf("%v.MarshalText() = %q, %v", e, b, err)
		}
	}
	bad := []enum{Backend(""), Backend("GPU"), PredictionStatus("passed"), PredictionStatus("Discharged"),
		MutantKind("random"), MutantStatus("alive"), MutantStatus("killed "), Flag("flaky")}
	for _, e := range bad {
		if e.Valid() {
			t.Errorf("%q.Valid() = true", e)
		}
		if _, err := e.MarshalText(); err == nil {
			t.Errorf("%q.MarshalText() succeeded", e)
		}
		if _, err := json.Marshal(e); err == nil {
			t.Errorf("json.Marshal(%q) succeeded", e)
		}
	}
	var s PredictionStatus
	if err := json.Unmarshal([]byte(`"falsified"`), &s); err != nil || s != Falsified {
		t.Errorf("unmarshal falsified: %q, %v", s, err)
	}
	if err := json.Unmarshal([]byte(`"FALSIFIED"`), &s); err == nil {
		t.Errorf("unmarshal FALSIFIED succeeded")
	} else if !strings.Contains(err.Error(), "discharged, falsified, inconclusive, skipped, error") {
		t.Errorf("error %q should list the valid values", err)
	}
	if _, err := json.Marshal(Prediction{ID: "X", Status: "ok"}); err == nil {
		t.Errorf("json.Marshal of a prediction with status ok succeeded")
	}
}

func TestErrorStatsNonFinite(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e-300, math.MaxFloat64} {
		e := ErrorStats{MaxAbs: &x, MaxRel: &x, MaxULP: &x, MaxRatio: x, NaiveRatio: &x}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("%v: %v", x, err)
		}
		var got ErrorStats
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%v: %s: %v", x, b, err)
		}
		same := func(a, b float64) bool {
			return a == b && math.Signbit(a) == math.Signbit(b) || math.IsNaN(a) && math.IsNaN(b)
		}
		if got.MaxAbs == nil || !same(*got.MaxAbs, x) || !same(got.MaxRatio, x) || got.NaiveRatio == nil || !same(*got.NaiveRatio, x) {
			t.Errorf("%v: round trip via %s gave %+v", x, b, got)
		}
	}
}

func TestUpsertAndLookup(t *testing.T) {
	r := minimalReport()
	r.UpsertPrediction(Prediction{ID: "A", Status: Discharged, Checks: 1})
	r.UpsertPrediction(Prediction{ID: "B", Status: Inconclusive, Checks: 2, ChecksFailed: 1})
	r.UpsertPrediction(Prediction{ID: "A", Status: Falsified, Reason: "r", Checks: 5, ChecksFailed: 1})
	if len(r.Predictions) != 3 || r.Predictions[1].ID != "A" || r.Predictions[1].Status != Falsified {
		t.Errorf("UpsertPrediction: %+v", r.Predictions)
	}
	r.UpsertMutant(Mutant{Name: "m1", Kind: MutantNamed, Status: MutantSurvived})
	r.UpsertMutant(Mutant{Name: "m2", Kind: MutantGeneric, Status: MutantSurvived})
	r.UpsertMutant(Mutant{Name: "m1", Kind: MutantNamed, Status: MutantKilled, KilledBy: "A"})
	if len(r.Mutants) != 2 || r.Mutant("m1").Status != MutantKilled || r.Mutants[1].Name != "m2" {
		t.Errorf("UpsertMutant: %+v", r.Mutants)
	}
	r.UpsertKernel(NewKernel("k", KernelOurs, "k.ptx", "e1", []byte("a")))
	r.UpsertKernel(NewKernel("k", KernelOurs, "k.ptx", "e2", []byte("a")))
	if len(r.Kernels) != 1 || r.Kernel("k").Entry != "e2" || r.Kernel("k").PTXSHA256 != "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb" {
		t.Errorf("UpsertKernel: %+v", r.Kernels)
	}
	if r.Prediction("Z") != nil || r.Mutant("Z") != nil || r.Kernel("Z") != nil {
		t.Errorf("lookup of a missing name returned non-nil")
	}
	r.Prediction("B").SetFlag(FlagNonDeterministic)
	r.Prediction("B").NonDeterministic = "failed once, passed on replay"
	if err := r.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestMarkUnproven(t *testing.T) {
	r := sampleReport()
	r.Mutants = r.Mutants[:4] // without wrong-axis, FALSIFY-RMS-002 killed nothing
	for i := range r.Predictions {
		r.Predictions[i].Flags = nil
	}
	r.Predictions[1].SetFlag(FlagNonDeterministic)
	got := r.MarkUnproven()
	if want := []string{"FALSIFY-RMS-002", "FALSIFY-X-003", "FALSIFY-Y-004", "FALSIFY-Z-005"}; !slices.Equal(got, want) {
		t.Errorf("MarkUnproven = %v, want %v", got, want)
	}
	if !slices.Equal(r.Unproven(), got) {
		t.Errorf("Unproven = %v, want %v", r.Unproven(), got)
	}
	if !slices.Equal(r.Predictions[1].Flags, []Flag{FlagNonDeterministic, FlagUnproven}) {
		t.Errorf("flags %v", r.Predictions[1].Flags)
	}
	// A kill clears the flag.
	r.Mutants[1].Status, r.Mutants[1].KilledBy = MutantKilled, "FALSIFY-RMS-002"
	r.MarkUnproven()
	if r.Predictions[1].HasFlag(FlagUnproven) || !r.Predictions[1].HasFlag(FlagNonDeterministic) {
		t.Errorf("after a kill: flags %v", r.Predictions[1].Flags)
	}
	// No mutants: no evidence, no change.
	r.Mutants = nil
	if ids := r.MarkUnproven(); ids != nil || !r.Predictions[2].HasFlag(FlagUnproven) {
		t.Errorf("without mutants: %v, flags %v", ids, r.Predictions[2].Flags)
	}
}

func TestMutationScore(t *testing.T) {
	// sampleReport: killed drop-eps (named) and wrong-axis (named); survived
	// one generic; one generic equivalent, one generic not exercised.
	r := sampleReport()
	if s := r.MutationScore(""); s != (Score{Killed: 2, Survived: 1, Equivalent: 1, NotExercised: 1}) || s.Counted() != 3 || s.Total() != 5 {
		t.Errorf("MutationScore(all) = %+v", s)
	}
	if s := r.MutationScore(MutantGeneric); s.Killed != 0 || s.Counted() != 1 || s.String() != "0/1 = 0.0%" {
		t.Errorf("MutationScore(generic) = %+v %s", s, s)
	}
	if s := r.MutationScore(MutantNamed); s.String() != "2/2 = 100.0%" {
		t.Errorf("MutationScore(named) = %s", s)
	}
	// Errors count as not killed; skipped, equivalent, not exercised do not count.
	s := ScoreOf([]Mutant{{Status: MutantKilled}, {Status: MutantError}, {Status: MutantSkipped}, {Status: MutantNotExercised}, {Status: MutantEquivalent}}, "")
	if x, ok := s.Ratio(); !ok || x != 0.5 || s.Counted() != 2 {
		t.Errorf("ScoreOf = %+v, ratio %v %v; want 1/2", s, x, ok)
	}
	if _, ok := minimalReport().MutationScore("").Ratio(); ok {
		t.Errorf("the score of no mutants is defined")
	}
	if x := (Score{Killed: 999, Survived: 1}).String(); x != "999/1000 = 99.9%" {
		t.Errorf("%s", x)
	}
	if x := (Score{Killed: 9999, Survived: 1}).String(); x != "9999/10000 = >99.9%" {
		t.Errorf("%s: a score below 1 must not print as 100%%", x)
	}
}

func TestParseDraws(t *testing.T) {
	out := `=== RUN   TestRMSNorm
    rmsnorm_test.go:40: [rapid] draw rows: 7
    engine.go:313: [rapid] failed after 36 tests: err/tol 4.2
        To reproduce, specify -run="TestRMSNorm" -rapid.seed=42
        Failed test output:
    generator.go:64: [rapid] draw rows: 1
    generator.go:64: [rapid] draw hidden: 33
    generator.go:64: [rapid] draw x: []float32{0, -0, NaN}
    generator.go:64: [rapid] draw note: "a: b"
    rmsnorm_test.go:50: row 0: got 1, want 2
`
	got := ParseDraws(out)
	want := []Draw{{"rows", "1"}, {"hidden", "33"}, {"x", "[]float32{0, -0, NaN}"}, {"note", `"a: b"`}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseDraws = %q, want %q", got, want)
	}
	if got := ParseDraws("[rapid] draw a: 1\r\n[rapid] draw b: 2"); !reflect.DeepEqual(got, []Draw{{"a", "1"}, {"b", "2"}}) {
		t.Errorf("without marker: %q", got)
	}
	if ParseDraws("nothing here") != nil {
		t.Errorf("draws from nothing")
	}
}

func TestNewRun(t *testing.T) {
	r := New(NewRun(BackendGPU))
	if r.SchemaVersion != SchemaVersion || r.Run.Backend != BackendGPU || r.Run.GoVersion == "" || r.Run.Start.IsZero() || len(r.Run.CommandLine) == 0 {
		t.Errorf("New(NewRun(gpu)) = %+v", r)
	}
	if r.Run.ID == "" || r.Run.ID == NewRun(BackendGPU).ID {
		t.Errorf("run id %q: want a fresh one each time", r.Run.ID)
	}
	r.Predictions = []Prediction{{ID: "P", Status: Skipped}}
	if err := r.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if r.Run.Start.Location() != time.UTC {
		t.Errorf("start not in UTC: %v", r.Run.Start)
	}
}

// genReport draws valid reports with every optional field present or not.
func genReport() *rapid.Generator[*Report] {
	str := rapid.StringMatching(`[ -~\p{Greek}<>&|\n"\x60]{0,12}`)
	name := rapid.StringMatching(`[A-Za-z0-9_.:@>-]{1,10}`)
	float := rapid.OneOf(rapid.Float64Min(0), rapid.SampledFrom([]float64{0, math.NaN(), math.Inf(1), 5e-324}))
	opt := func(t *rapid.T, label string) bool { return rapid.Bool().Draw(t, label) }
	optFloat := func(t *rapid.T, label string) *float64 {
		if opt(t, label) {
			return ptr(float.Draw(t, label))
		}
		return nil
	}
	optStr := func(t *rapid.T, label string) string {
		if opt(t, label) {
			return str.Draw(t, label)
		}
		return ""
	}
	cex := func(t *rapid.T) *Counterexample {
		if !opt(t, "cex") {
			return nil
		}
		c := &Counterexample{Text: optStr(t, "text")}
		n := rapid.IntRange(0, 3).Draw(t, "draws")
		if c.Text == "" {
			n = max(n, 1)
		}
		for range n {
			c.Draws = append(c.Draws, Draw{Label: str.Draw(t, "label"), Value: str.Draw(t, "value")})
		}
		return c
	}
	return rapid.Custom(func(t *rapid.T) *Report {
		start := time.Unix(rapid.Int64Range(0, 4e9).Draw(t, "start"), rapid.Int64Range(0, 1e9-1).Draw(t, "ns")).UTC()
		r := New(Run{ID: name.Draw(t, "runid"), Start: start, GoVersion: name.Draw(t, "go"), Backend: rapid.SampledFrom(backends).Draw(t, "backend")})
		r.Run.Stopped = optStr(t, "stopped")
		if opt(t, "merged") {
			r.Run.MergedFrom = []string{"a", "b"}
		}
		if opt(t, "end") {
			r.Run.End = start.Add(time.Duration(rapid.Int64Range(0, 1e12).Draw(t, "dur")))
		}
		r.Run.Device, r.Run.GitCommit, r.Run.Host = optStr(t, "device"), optStr(t, "git"), optStr(t, "host")
		r.Run.SMCount = rapid.IntRange(0, 200).Draw(t, "sm")
		if opt(t, "bw") {
			r.Run.CopyBandwidth = ptr(rapid.Float64Range(0, 1e13).Draw(t, "bw"))
		}
		if opt(t, "seed") {
			r.Run.RapidSeed = ptr(rapid.Uint64().Draw(t, "seed"))
		}
		r.Run.Notes = rapid.SliceOfN(str, 0, 2).Draw(t, "notes")
		if len(r.Run.Notes) == 0 {
			r.Run.Notes = nil
		}
		for i := range rapid.IntRange(1, 4).Draw(t, "predictions") {
			status := rapid.SampledFrom(predictionStatuses).Draw(t, "status")
			checks := rapid.IntRange(0, 1e6).Draw(t, "checks")
			failed := rapid.IntRange(0, checks).Draw(t, "failed")
			switch status {
			case Discharged:
				checks, failed = max(checks, 1), 0
			case Falsified:
				checks = max(checks, 1)
				failed = rapid.IntRange(1, checks).Draw(t, "failed")
			case Skipped, NotRun, NotClaimed:
				checks, failed = 0, 0
			}
			// What a failure leaves (Validate's consistent): its evidence
			// goes with a status that saw one.
			sawFailure := status != Discharged && status != Skipped && status != NotRun && status != NotClaimed
			p := Prediction{
				ID:           name.Draw(t, "id") + "#" + string(rune('a'+i)),
				Title:        optStr(t, "title"),
				Status:       status,
				Reason:       optStr(t, "reason"),
				Checks:       checks,
				ChecksFailed: failed,
				Duration:     rapid.Float64Range(0, 1e4).Draw(t, "duration"),
				Rerun:        optStr(t, "rerun"),
			}
			if sawFailure {
				p.Counterexample = cex(t)
			}
			if status == Falsified && strings.TrimSpace(p.Reason) == "" {
				p.Reason = "failed"
			}
			if opt(t, "binding") {
				p.Binding = name.Draw(t, "binding")
				p.ID += "@" + p.Binding
			}
			if checks > 0 && opt(t, "stats") {
				ratio := float.Draw(t, "ratio")
				if status == Discharged {
					ratio = rapid.Float64Range(0, 1).Draw(t, "ratio")
				}
				p.ErrorStats = &ErrorStats{MaxAbs: optFloat(t, "abs"), MaxRel: optFloat(t, "rel"),
					MaxULP: optFloat(t, "ulp"), MaxRatio: ratio, ToleranceFormula: optStr(t, "tol"), NaiveRatio: optFloat(t, "naive")}
			}
			if sawFailure && opt(t, "repro") {
				p.Reproduction = &Reproduction{Command: "go test -run " + name.Draw(t, "run"), FailFile: optStr(t, "failfile")}
			}
			if opt(t, "unproven") {
				p.SetFlag(FlagUnproven)
			}
			if nondet := sawFailure && opt(t, "nondet"); nondet || (status == Inconclusive && failed > 0) {
				p.SetFlag(FlagNonDeterministic)
				p.NonDeterministic = "did not reproduce"
			}
			r.UpsertPrediction(p)
		}
		for i := range rapid.IntRange(0, 4).Draw(t, "mutants") {
			m := Mutant{
				Name:           name.Draw(t, "mutant") + "#" + string(rune('a'+i)),
				Kind:           rapid.SampledFrom(mutantKinds).Draw(t, "kind"),
				Status:         rapid.SampledFrom(mutantStatuses).Draw(t, "mstatus"),
				Site:           optStr(t, "site"),
				Counterexample: cex(t),
				Duration:       rapid.Float64Range(0, 100).Draw(t, "mduration"),
			}
			if m.Kind == MutantNamed && opt(t, "expected") {
				m.Expected = []string{name.Draw(t, "expected")}
			}
			if m.Status == MutantKilled {
				m.KilledBy = name.Draw(t, "killer")
				m.ChecksToKill = rapid.IntRange(1, 1e4).Draw(t, "ctk")
			}
			r.UpsertMutant(m)
		}
		for i := range rapid.IntRange(0, 2).Draw(t, "kernels") {
			k := NewKernel(name.Draw(t, "kernel")+"#"+string(rune('a'+i)), rapid.SampledFrom(kernelOrigins).Draw(t, "origin"),
				name.Draw(t, "ptx"), name.Draw(t, "entry"), []byte(str.Draw(t, "text")))
			if k.Origin == KernelBinding {
				k.Binding = name.Draw(t, "binding")
			}
			if opt(t, "sha") {
				k.SourceSHA256 = shaA
			}
			r.UpsertKernel(k)
		}
		return r
	})
}

// TestGeneratedReports: every valid report marshals into a document the
// schema accepts, Parse restores it exactly, and the renderers cope.
func TestGeneratedReports(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genReport().Draw(t, "report")
		if err := r.Validate(); err != nil {
			t.Fatalf("generator made an invalid report: %v", err)
		}
		data, err := Marshal(r)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		if err := schemaValidate(t, data); err != nil {
			t.Fatalf("schema rejects:\n%s\n%v", data, err)
		}
		back, err := Parse(data)
		if err != nil {
			t.Fatalf("Parse: %v\n%s", err, data)
		}
		again, err := Marshal(back)
		if err != nil || string(again) != string(data) {
			t.Fatalf("Marshal(Parse(x)) != x: %v\n%s\nwant\n%s", err, again, data)
		}
		var sb strings.Builder
		if err := Summary(&sb, r); err != nil {
			t.Fatal(err)
		}
		if got := countPredictionLines(sb.String()); got != len(r.Predictions) {
			t.Fatalf("Summary has %d prediction lines, want %d:\n%s", got, len(r.Predictions), sb.String())
		}
		sb.Reset()
		if err := Markdown(&sb, r); err != nil {
			t.Fatal(err)
		}
		if d := Diff(r, back); len(d) != 0 {
			t.Fatalf("Diff of a report and its round trip: %q", d)
		}
	})
}

// TestPartial: a report is partial when a prediction did not run or the run
// was stopped, and only then.
func TestPartial(t *testing.T) {
	r := sampleReport()
	if !r.Partial() || !slices.Equal(r.NotRun(), []string{"FALSIFY-Y-004"}) {
		t.Errorf("sample: partial %v, not run %v", r.Partial(), r.NotRun())
	}
	r.Run.Stopped = ""
	if !r.Partial() {
		t.Errorf("a report with a not_run prediction is not partial")
	}
	r.Predictions[3].Status = Skipped
	if r.Partial() || r.NotRun() != nil {
		t.Errorf("complete report: partial %v, not run %v", r.Partial(), r.NotRun())
	}
	r.Predictions[3].Status = NotClaimed // the kernel claims none: no gap in the evidence
	if r.Partial() || r.NotRun() != nil {
		t.Errorf("report with a not_claimed prediction: partial %v, not run %v", r.Partial(), r.NotRun())
	}
	r.Run.Stopped = "interrupt"
	if !r.Partial() {
		t.Errorf("a stopped run is not partial")
	}
}

// TestLint: statistics that cannot all hold over the same elements are
// found (the C-BRMS report: max_abs 100.66 beside max_rel 0 and max_ulp 0),
// as are references to kernels the kernels section lacks.
func TestLint(t *testing.T) {
	r := sampleReport()
	if l := r.Lint(); l != nil {
		t.Errorf("sample: %q", l)
	}
	e := r.Predictions[0].ErrorStats
	e.MaxAbs, e.MaxRel, e.MaxULP = ptr(100.66), ptr(0.0), ptr(0.0)
	r.Predictions[0].Kernels = []string{"rmsnorm_fwd", "nope"}
	want := []string{
		`predictions[0] "FALSIFY-DIM-001": error_stats max_abs 100.66 beside max_rel 0 and max_ulp 0: they cannot all hold over the same elements`,
		`predictions[0] "FALSIFY-DIM-001": kernel "nope" is not in the kernels section`,
	}
	if l := r.Lint(); !slices.Equal(l, want) {
		t.Errorf("Lint = %q\nwant %q", l, want)
	}
	e.MaxAbs, e.MaxRel, e.MaxULP = ptr(0.0), ptr(1e-7), ptr(0.0)
	r.Predictions[0].Kernels = nil
	if l := r.Lint(); len(l) != 1 {
		t.Errorf("abs 0 with rel > 0: Lint = %q", l)
	}
	e.MaxAbs, e.MaxRel, e.MaxULP = ptr(0.0), nil, ptr(0.0) // absent: nothing to compare
	if l := r.Lint(); l != nil {
		t.Errorf("with max_rel absent: %q", l)
	}
}

// A prediction checked on a binding carries its name as the ID's suffix;
// a report in which the two disagree contradicts itself.
func TestValidateBindingSuffix(t *testing.T) {
	r := New(NewRun(BackendEmu))
	r.UpsertPrediction(Prediction{ID: "RMS-FWD-001@a", Binding: "a", Status: Discharged, Checks: 1})
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	r.UpsertPrediction(Prediction{ID: "RMS-FWD-001@a", Binding: "b", Status: Discharged, Checks: 1})
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), `binding "b"`) {
		t.Errorf("Validate = %v, want the binding named", err)
	}
}
