package reports

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// countPredictionLines counts the unindented lines that start with a
// prediction status.
func countPredictionLines(s string) int {
	n := 0
	for _, l := range lines(s) {
		f := strings.Fields(l)
		if len(f) > 0 && l[0] != ' ' && PredictionStatus(f[0]).Valid() {
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
		regexp.MustCompile(`^discharged +FALSIFY-DIM-001  Output shape follows input shape +10000 checks  worst err/tol 0\.31  \(12\.3k checks/s\)$`),
		regexp.MustCompile(`^falsified +FALSIFY-RMS-002  Backward matches the float64 derivative +37 checks  1 failed  worst err/tol \+Inf  \(3\.1k checks/s\)  \[unproven nondeterministic\]  -- max error above bound … \(21 bytes more; see the report\)$`),
		regexp.MustCompile(`^skipped +FALSIFY-X-003 +0 checks  -- no GPU$`),
		regexp.MustCompile(`^not_run +FALSIFY-Y-004 +0 checks  -- filtered out by -run$`),
		regexp.MustCompile(`^5 predictions: 1 discharged, 1 falsified, 1 inconclusive, 1 skipped, 1 not_run; backend gpu \(NVIDIA H200, sm 9\.0\); 2 devices: 0 \(3 runs, 10046 launches\), 1 \(1 runs, 0 launches\); 1m23s$`),
		regexp.MustCompile(`^partial: stopped: deadline 7m0s; 1 prediction not run: FALSIFY-Y-004$`),
		regexp.MustCompile(`^mutation score 2/3 = 66\.7% \(5 mutants: 2 killed, 1 survived, 1 equivalent, 1 not_exercised\)$`),
		regexp.MustCompile(`^named mutants: 2/2 = 100\.0%$`),
		regexp.MustCompile(`^  wrong-axis  killed +by FALSIFY-RMS-002 after 1 checks \(0\.25s\)$`),
		regexp.MustCompile(`^generic mutants: 0/1 = 0\.0%$`),
		regexp.MustCompile(`^  rmsnorm_bwd +- +2 +0 +0 +1 +1 +0  0/1 = 0\.0%$`),
		regexp.MustCompile(`^    ptx:mul@7  not exercised: no check launched it$`),
		regexp.MustCompile(`^unproven: FALSIFY-RMS-002$`),
		regexp.MustCompile(`^reproduce FALSIFY-RMS-002: go test \./properties -run '\^TestRMSNormBackward\$' -rapid\.seed=18446744073709551615  \(fail file testdata/rapid/.*\.fail\)$`),
		regexp.MustCompile(`^nondeterministic FALSIFY-RMS-002: failed on the first run, passed on replay$`),
	} {
		if !slices.ContainsFunc(ls, want.MatchString) {
			t.Errorf("no line matches %s", want)
		}
	}
	// Mutation lines come after all prediction lines.
	if i := slices.IndexFunc(ls, func(l string) bool { return strings.HasPrefix(l, "mutation score") }); i <= len(r.Predictions) {
		t.Errorf("mutation score on line %d, want after the predictions and totals", i)
	}
	// A named mutant killed by another prediction than those expected.
	r.Mutants[4].KilledBy = "FALSIFY-DIM-001"
	if out := summary(t, r); !strings.Contains(out, "  wrong-axis  killed         by FALSIFY-DIM-001 after 1 checks (0.25s)  UNEXPECTED (expected FALSIFY-RMS-002)\n") {
		t.Errorf("unexpected killer not marked:\n%s", out)
	}
}

// TestFormatRatio: a ratio is never printed as 1 unless it is 1, nor on the
// other side of 1 than it is.
func TestFormatRatio(t *testing.T) {
	for x, want := range map[float64]string{
		0: "0", 0.31: "0.31", 0.99999: "0.99999", 0.9999999999: "0.9999999999", 1: "1", 1.00001: "1.00001",
		math.Nextafter(1, 0): "0.9999999999999999", math.Nextafter(1, 2): "1.0000000000000002",
		4.2: "4.2", 1234.5: "1.23e+03", math.Inf(1): "+Inf", math.NaN(): "NaN",
	} {
		if got := formatRatio(x); got != want {
			t.Errorf("formatRatio(%v) = %q, want %q", x, got, want)
		}
	}
	r := minimalReport()
	r.Predictions = []Prediction{{ID: "A", Title: "t", Status: Discharged, Checks: 10, ErrorStats: &ErrorStats{MaxRatio: 0.99999}}}
	if out := summary(t, r); !strings.Contains(out, "worst err/tol 0.99999\n") {
		t.Errorf("summary:\n%s", out)
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
	if out != "skipped       P-0  0 checks\n1 prediction: 1 skipped; backend emu\n" {
		t.Errorf("minimal summary = %q", out)
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
		"Mutation score 2/3 = 66.7% (5 mutants: 2 killed, 1 survived, 1 equivalent, 1 not_exercised).",
		"**Partial report.** Stopped: deadline 7m0s; 1 prediction not run: FALSIFY-Y-004.",
		"| Run ID | `run-sample` |",
		"| Merged from | `shard-a shard-b` |",
		"go test ./properties -run '^TestRMSNormForward$' -rapid.checks=10000",
		"Unproven predictions (killed no mutant): FALSIFY-RMS-002.",
		"| **killed** | `drop-eps` | named | rmsnorm_fwd | | | `FALSIFY-DIM-001` | | 3 | |",
		"| **killed** | `wrong-axis` | named | rmsnorm_bwd | | | `FALSIFY-RMS-002` | FALSIFY-RMS-002 | 1 | |",
		"| **not_exercised** | `ptx:mul@7` | generic | rmsnorm_bwd | arith-swap |",
		"| `FALSIFY-DIM-001` | 1 | drop-eps |",
		"| `FALSIFY-RMS-002` | 1 | wrong-axis |",
		"| `FALSIFY-X-003` | 0 | |",
		"| `rmsnorm_fwd` | ours | kernels/ptx/rmsnorm.ptx | `rmsnorm_fwd` | `" + shaA + "` | | | kernels/rmsnorm.cu | `" + shaB + "` |",
		"| `rmsnorm_bwd` | binding | rmsnorm_bwd.ptx | `rmsnorm_bwd_kernel` | `" + shaB + "` | testdata/triton-rmsnorm-bwd.yaml | rmsnorm.backward | | |",
		"| Copy bandwidth | 3.2TB/s |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if !strings.Contains(md, "### FALSIFY-DIM-001 (discharged)") {
		t.Errorf("a discharged prediction with a rerun command has no details section")
	}

	b.Reset()
	if err := Markdown(&b, minimalReport()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"No mutants.", "No kernels."} {
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

// TestSummaryCutsLongReasons: a huge single-line reason does not make a
// huge summary line; the cut says how much is left out.
func TestSummaryCutsLongReasons(t *testing.T) {
	r := minimalReport()
	r.Predictions[0].Reason = strings.Repeat("é", 10<<20)
	want := fmt.Sprintf("é … (%d bytes more; see the report)\n", len(r.Predictions[0].Reason)-2*lineMax)
	if out := summary(t, r); len(out) > 1000 || !strings.Contains(out, want) {
		t.Errorf("summary of %d bytes, want it to end its line with %q: %.300q", len(out), want, out)
	}
}

// TestRenderCapsHugeFields: every field that can be megabytes — reason,
// statement, counterexample output and draws, reproduction, rerun, notes,
// a mutant's reason — is cut in the summary and in the Markdown, with a
// marker saying how many bytes the report holds beyond it. Before, the
// Markdown printed them whole (a 10 MB counterexample, 10 MB of output).
func TestRenderCapsHugeFields(t *testing.T) {
	const n = 10 << 20
	huge := func(c string) string { return strings.Repeat(c, n) }
	r := sampleReport()
	p := &r.Predictions[1]
	p.Reason = huge("r")
	p.Statement = huge("s")
	p.Counterexample.Text = huge("c")
	p.Counterexample.Draws[0].Value = huge("d")
	p.Reproduction.Command = huge("p")
	p.Reproduction.FailFile = huge("f")
	p.NonDeterministic = huge("n")
	p.Rerun = huge("`") // a code fence's worth of backticks, and more
	r.Run.Notes = append(r.Run.Notes, huge("|"))
	r.Mutants[2].Reason = huge("m")
	marker := func(kept int) string { return fmt.Sprintf("… (%d bytes more; see the report)", n-kept) }

	out := summary(t, r)
	if len(out) > 64<<10 {
		t.Errorf("summary of %d bytes", len(out))
	}
	for _, want := range []string{"-- " + strings.Repeat("r", lineMax) + " " + marker(lineMax) + "\n",
		"reproduce FALSIFY-RMS-002: " + strings.Repeat("p", cellMax) + marker(cellMax),
		"(fail file " + strings.Repeat("f", cellMax) + marker(cellMax) + ")"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %.80q…%.60q", want, want[len(want)-60:])
		}
	}

	var b strings.Builder
	if err := Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if len(md) > 256<<10 {
		t.Errorf("markdown of %d bytes", len(md))
	}
	for _, want := range []string{
		"```\n" + strings.Repeat("r", fenceMax) + "\n```\n\n" + marker(fenceMax), // reason
		"```\n" + strings.Repeat("c", fenceMax) + "\n```\n\n" + marker(fenceMax), // counterexample output
		"```\n" + strings.Repeat("p", fenceMax) + "\n```\n\n" + marker(fenceMax), // reproduction
		"\n" + strings.Repeat("s", cellMax) + marker(cellMax) + "\n",             // statement
		"`" + strings.Repeat("d", codeMax) + "` " + marker(codeMax) + " |",       // draw, its span closed
		"`" + strings.Repeat("f", codeMax) + "` " + marker(codeMax),              // fail file
		strings.Repeat("m", cellMax) + marker(cellMax) + " |",                    // mutant reason
		strings.Repeat(`\|`, cellMax) + marker(cellMax) + "\n",                   // note, escaped after the cut
		"\n" + strings.Repeat("`", fenceMax+1) + "\n" + strings.Repeat("`", fenceMax) + "\n" + strings.Repeat("`", fenceMax+1) + "\n\n" + marker(fenceMax),
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %.80q…%.60q", want, want[len(want)-60:])
		}
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		max  int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc… (1 byte more; see the report)"},
		{"ééé", 3, "é… (4 bytes more; see the report)"}, // whole runes: é is 2 bytes
		{"", 0, ""},
	} {
		if got := Clip(c.s, c.max); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
	}
}
