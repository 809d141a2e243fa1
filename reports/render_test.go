package reports

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// countPredictionLines counts the lines that start with a prediction status.
func countPredictionLines(s string) int {
	n := 0
	for _, l := range lines(s) {
		f := strings.Fields(l)
		if len(f) > 0 && PredictionStatus(f[0]).Valid() {
			n++
		}
	}
	return n
}

func summary(t *testing.T, r *Report) string {
	t.Helper()
	var b strings.Builder
	if err := Summary(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestSummary(t *testing.T) {
	r := sampleReport()
	out := summary(t, r)
	t.Logf("\n%s", out)
	ls := lines(out)

	// One line per prediction, in order, status first, columns aligned.
	if len(ls) < len(r.Predictions) {
		t.Fatalf("%d lines for %d predictions", len(ls), len(r.Predictions))
	}
	idCol := -1
	for i, p := range r.Predictions {
		l := ls[i]
		if !strings.HasPrefix(l, string(p.Status)+" ") {
			t.Errorf("line %d %q does not start with status %q", i, l, p.Status)
		}
		col := strings.Index(l, p.ID)
		if col < 0 {
			t.Errorf("line %d %q lacks id %s", i, l, p.ID)
		}
		if idCol >= 0 && col != idCol {
			t.Errorf("line %d: id at column %d, want %d (aligned)", i, col, idCol)
		}
		idCol = col
		if !strings.Contains(l, " checks") {
			t.Errorf("line %d %q lacks the check count", i, l)
		}
	}
	if got := countPredictionLines(out); got != len(r.Predictions) {
		t.Errorf("%d lines start with a status, want %d", got, len(r.Predictions))
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`^discharged +FALSIFY-DIM-001 +10000 checks  worst err/tol 0\.31  \(12\.3k checks/s\)$`),
		regexp.MustCompile(`^falsified +FALSIFY-RMS-002 +37 checks  1 failed  worst err/tol \+Inf  \(3\.1k checks/s\)  \[unproven nondeterministic\]  -- max error above bound …$`),
		regexp.MustCompile(`^skipped +FALSIFY-X-003 +0 checks  -- no GPU$`),
		regexp.MustCompile(`^3 predictions: 1 discharged, 1 falsified, 1 skipped; backend gpu \(NVIDIA H200, sm 9\.0\); 1m23s$`),
		regexp.MustCompile(`^mutation score 1/2 = 50\.0% \(3 mutants: 1 killed, 1 survived, 1 equivalent\)$`),
		regexp.MustCompile(`^unproven: FALSIFY-RMS-002$`),
		regexp.MustCompile(`^reproduce FALSIFY-RMS-002: go test \./properties -run '\^TestRMSNormBackward\$' -rapid\.seed=18446744073709551615  \(fail file testdata/rapid/.*\.fail\)$`),
		regexp.MustCompile(`^nondeterministic FALSIFY-RMS-002: failed on the first run, passed on replay$`),
	} {
		if !slices.ContainsFunc(ls, want.MatchString) {
			t.Errorf("no line matches %s", want)
		}
	}
	if len(ls) != 8 {
		t.Errorf("%d lines, want 8", len(ls))
	}
	// Mutation lines come after all prediction lines.
	if i := slices.IndexFunc(ls, func(l string) bool { return strings.HasPrefix(l, "mutation score") }); i <= len(r.Predictions) {
		t.Errorf("mutation score on line %d, want after the predictions and totals", i)
	}
}

func TestSummaryWithoutMutants(t *testing.T) {
	r := sampleReport()
	r.Mutants = nil
	out := summary(t, r)
	if strings.Contains(out, "mutation") || strings.Contains(out, "unproven:") {
		t.Errorf("summary without mutants mentions mutation:\n%s", out)
	}
	out = summary(t, minimalReport())
	if out != "0 predictions; backend emu\n" {
		t.Errorf("empty summary = %q", out)
	}
	if summary(t, nil) != "0 predictions\n" {
		t.Errorf("nil summary = %q", summary(t, nil))
	}
	r.Mutants = []Mutant{{Name: "m", Kind: MutantNamed, Status: MutantEquivalent}}
	if out := summary(t, r); !strings.Contains(out, "mutation score n/a (1 mutant: 1 equivalent)\n") {
		t.Errorf("all-equivalent summary:\n%s", out)
	}
}

func TestSummaryDerivesRate(t *testing.T) {
	r := minimalReport()
	r.UpsertPrediction(Prediction{ID: "A", Status: Discharged, Checks: 2500000, Duration: 2})
	if out := summary(t, r); !strings.Contains(out, "2500000 checks  (1.2M checks/s)") {
		t.Errorf("summary:\n%s", out)
	}
}

func TestMarkdown(t *testing.T) {
	r := sampleReport()
	r.Predictions[0].Title = "a | b"
	var b strings.Builder
	if err := Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	t.Logf("\n%s", md)
	ls := lines(md)

	heads := []string{"# ptxprop contract report", "## Run", "## Predictions", "## Mutants (kill matrix)", "## Kernels"}
	last := -1
	for _, h := range heads {
		i := slices.Index(ls, h)
		if i < 0 || i < last {
			t.Errorf("heading %q at line %d, after %d", h, i, last)
		}
		last = i
	}
	// Every table row has as many cells as its header.
	cells := func(l string) int {
		return len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(l, -1)) - 1
	}
	for i := 0; i < len(ls); i++ {
		if !strings.HasPrefix(ls[i], "|") {
			continue
		}
		n := cells(ls[i])
		if i+1 >= len(ls) || !strings.HasPrefix(ls[i+1], "| --- |") || cells(ls[i+1]) != n {
			t.Fatalf("table at line %d lacks a delimiter row of %d cells", i, n)
		}
		j := i + 2
		for ; j < len(ls) && strings.HasPrefix(ls[j], "|"); j++ {
			if cells(ls[j]) != n {
				t.Errorf("line %d has %d cells, header %d: %q", j, cells(ls[j]), n, ls[j])
			}
		}
		i = j
	}
	// The predictions table: one row per prediction, status first.
	i := slices.Index(ls, "## Predictions")
	if !strings.HasPrefix(ls[i+2], "| Status | ID |") {
		t.Fatalf("predictions table header %q", ls[i+2])
	}
	for k, p := range r.Predictions {
		row := ls[i+4+k]
		if !strings.HasPrefix(row, "| **"+string(p.Status)+"** | `"+p.ID+"` |") {
			t.Errorf("prediction row %d = %q", k, row)
		}
	}
	for _, want := range []string{
		"| **discharged** | `FALSIFY-DIM-001` | a \\| b | rmsnorm_fwd | 10000 | 0 | 0.31 |",
		"### FALSIFY-RMS-002 (falsified)",
		"| hidden | `33` |",
		"go test ./properties -run '^TestRMSNormBackward$' -rapid.seed=18446744073709551615",
		"Mutation score 1/2 = 50.0% (3 mutants: 1 killed, 1 survived, 1 equivalent).",
		"Unproven predictions (killed no mutant): FALSIFY-RMS-002.",
		"| **killed** | `drop-eps` | named | rmsnorm_fwd | | | `FALSIFY-DIM-001` | 3 | |",
		"| `FALSIFY-DIM-001` | 1 | drop-eps |",
		"| `FALSIFY-RMS-002` | 0 | |",
		"| `rmsnorm_fwd` | `rmsnorm_fwd` | kernels/rmsnorm.cu | kernels/ptx/rmsnorm.ptx | `" + shaA + "` | `" + shaB + "` |",
		"| Copy bandwidth | 3.2TB/s |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if strings.Contains(md, "### FALSIFY-DIM-001") {
		t.Errorf("a discharged prediction without details got a details section")
	}

	b.Reset()
	if err := Markdown(&b, minimalReport()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"No predictions.", "No mutants.", "No kernels."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("empty markdown lacks %q:\n%s", want, b.String())
		}
	}
}

func TestCode(t *testing.T) {
	for in, want := range map[string]string{
		"":      "",
		"a":     "`a`",
		"a`b":   "``a`b``",
		"`a":    "`` `a ``",
		"a``b`": "``` a``b` ```",
	} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
}
