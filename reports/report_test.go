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
	good := []enum{BackendGPU, BackendEmu, Discharged, Falsified, Inconclusive, Skipped, Error,
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
		e := ErrorStats{MaxAbs: x, MaxRel: x, MaxULP: x, MaxRatio: x, NaiveRatio: &x}
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
		if !same(got.MaxAbs, x) || !same(got.MaxRatio, x) || got.NaiveRatio == nil || !same(*got.NaiveRatio, x) {
			t.Errorf("%v: round trip via %s gave %+v", x, b, got)
		}
	}
}

func TestUpsertAndLookup(t *testing.T) {
	r := minimalReport()
	r.UpsertPrediction(Prediction{ID: "A", Status: Discharged})
	r.UpsertPrediction(Prediction{ID: "B", Status: Discharged})
	r.UpsertPrediction(Prediction{ID: "A", Status: Falsified, Checks: 5, ChecksFailed: 1})
	if len(r.Predictions) != 2 || r.Predictions[0].ID != "A" || r.Predictions[0].Status != Falsified {
		t.Errorf("UpsertPrediction: %+v", r.Predictions)
	}
	r.UpsertMutant(Mutant{Name: "m1", Kind: MutantNamed, Status: MutantSurvived})
	r.UpsertMutant(Mutant{Name: "m2", Kind: MutantGeneric, Status: MutantSurvived})
	r.UpsertMutant(Mutant{Name: "m1", Kind: MutantNamed, Status: MutantKilled, KilledBy: "A"})
	if len(r.Mutants) != 2 || r.Mutant("m1").Status != MutantKilled || r.Mutants[1].Name != "m2" {
		t.Errorf("UpsertMutant: %+v", r.Mutants)
	}
	r.UpsertKernel(Kernel{Name: "k", Entry: "e1"})
	r.UpsertKernel(Kernel{Name: "k", Entry: "e2"})
	if len(r.Kernels) != 1 || r.Kernel("k").Entry != "e2" {
		t.Errorf("UpsertKernel: %+v", r.Kernels)
	}
	if r.Prediction("Z") != nil || r.Mutant("Z") != nil || r.Kernel("Z") != nil {
		t.Errorf("lookup of a missing name returned non-nil")
	}
	r.Prediction("B").SetFlag(FlagNonDeterministic)
	if err := r.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestMarkUnproven(t *testing.T) {
	r := sampleReport()
	for i := range r.Predictions {
		r.Predictions[i].Flags = nil
	}
	r.Predictions[1].SetFlag(FlagNonDeterministic)
	got := r.MarkUnproven()
	if want := []string{"FALSIFY-RMS-002", "FALSIFY-X-003"}; !slices.Equal(got, want) {
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
	if k, c := sampleReport().MutationScore(); k != 1 || c != 2 {
		t.Errorf("MutationScore = %d/%d, want 1/2", k, c)
	}
	if k, c := minimalReport().MutationScore(); k != 0 || c != 0 {
		t.Errorf("empty MutationScore = %d/%d", k, c)
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
	float := rapid.OneOf(rapid.Float64Min(0), rapid.SampledFrom([]float64{0, math.NaN(), math.Inf(1), math.Inf(-1), -1, 5e-324}))
	opt := func(t *rapid.T, label string) bool { return rapid.Bool().Draw(t, label) }
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
		r := New(Run{Start: start, GoVersion: name.Draw(t, "go"), Backend: rapid.SampledFrom(backends).Draw(t, "backend")})
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
		for i := range rapid.IntRange(0, 4).Draw(t, "predictions") {
			checks := rapid.IntRange(0, 1e6).Draw(t, "checks")
			p := Prediction{
				ID:             name.Draw(t, "id") + "#" + string(rune('a'+i)),
				Title:          optStr(t, "title"),
				Status:         rapid.SampledFrom(predictionStatuses).Draw(t, "status"),
				Reason:         optStr(t, "reason"),
				Checks:         checks,
				ChecksFailed:   rapid.IntRange(0, checks).Draw(t, "failed"),
				Counterexample: cex(t),
				Duration:       rapid.Float64Range(0, 1e4).Draw(t, "duration"),
			}
			if opt(t, "stats") {
				p.ErrorStats = &ErrorStats{MaxAbs: float.Draw(t, "abs"), MaxRel: float.Draw(t, "rel"),
					MaxULP: float.Draw(t, "ulp"), MaxRatio: float.Draw(t, "ratio"), ToleranceFormula: optStr(t, "tol")}
				if opt(t, "naive") {
					p.ErrorStats.NaiveRatio = ptr(float.Draw(t, "naive"))
				}
			}
			if opt(t, "repro") {
				p.Reproduction = &Reproduction{Command: "go test -run " + name.Draw(t, "run"), FailFile: optStr(t, "failfile")}
			}
			for _, f := range flags {
				if opt(t, "flag") {
					p.SetFlag(f)
				}
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
			}
			if m.Status == MutantKilled {
				m.KilledBy = name.Draw(t, "killer")
				m.ChecksToKill = rapid.IntRange(1, 1e4).Draw(t, "ctk")
			}
			r.UpsertMutant(m)
		}
		for i := range rapid.IntRange(0, 2).Draw(t, "kernels") {
			k := Kernel{Name: name.Draw(t, "kernel") + "#" + string(rune('a'+i)), Entry: name.Draw(t, "entry")}
			if opt(t, "sha") {
				k.PTXSHA256 = shaA
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
