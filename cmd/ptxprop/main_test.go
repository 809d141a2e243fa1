package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/reports"
)

// newReport is a valid report of one discharged prediction, P-1.
func newReport() *reports.Report {
	r := reports.New(reports.Run{ID: reports.NewRunID(), Start: time.Now().UTC(), GoVersion: "go1.26", Backend: reports.BackendEmu})
	r.UpsertPrediction(reports.Prediction{ID: "P-1", Title: "t", Statement: "s", Status: reports.Discharged, Checks: 3,
		ErrorStats: &reports.ErrorStats{MaxRatio: 0.5}})
	return r
}

// write writes r (after edit) to a new file and returns its path.
func write(t *testing.T, edit func(r *reports.Report)) string {
	t.Helper()
	r := newReport()
	if edit != nil {
		edit(r)
	}
	p := filepath.Join(t.TempDir(), "r.json")
	if err := reports.Write(p, r); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeDoc writes a valid report's JSON after editing it as a document, as a
// hand or another tool could, bypassing reports.Write's validation.
func writeDoc(t *testing.T, edit func(m map[string]any)) string {
	t.Helper()
	data, err := reports.Marshal(newReport())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	data, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func pred(m map[string]any) map[string]any {
	return m["predictions"].([]any)[0].(map[string]any)
}

type cliCase struct {
	args      []string
	code      int
	out, errs string // substrings of stdout and stderr
}

func runCases(t *testing.T, cases []cliCase) {
	t.Helper()
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		if code != c.code || !strings.Contains(out.String(), c.out) || !strings.Contains(errb.String(), c.errs) {
			t.Errorf("ptxprop %q: exit %d (want %d), stdout %q (want %q), stderr %q (want %q)",
				c.args, code, c.code, cut(out.String()), c.out, cut(errb.String()), c.errs)
		}
		for _, leak := range []string{"Go value", "struct {", "*reports.", "reports: "} {
			if strings.Contains(errb.String(), leak) {
				t.Errorf("ptxprop %q: stderr leaks %q: %s", c.args, leak, cut(errb.String()))
			}
		}
		if errb.Len() > 8<<10 {
			t.Errorf("ptxprop %q: %d bytes on stderr", c.args, errb.Len())
		}
	}
}

func cut(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// TestHelp: every way of asking for help prints usage on stdout and exits
// 0; the usage describes every command and the exit statuses, and every
// command documents itself.
func TestHelp(t *testing.T) {
	var cases []cliCase
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}, {"help", "report"}} {
		cases = append(cases, cliCase{args: args, code: 0, out: "Commands:"})
	}
	for _, c := range commands {
		for _, args := range [][]string{{"help", c.name}, {c.name, "-h"}, {c.name, "--help"}, {"report", c.name, "-h"}} {
			if args[0] == "report" && c.name == "help" {
				continue
			}
			cases = append(cases, cliCase{args: args, code: 0, out: "usage: ptxprop " + c.name + " "})
		}
	}
	runCases(t, cases)

	var out bytes.Buffer
	if code := run([]string{"help"}, &out, &out); code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	u := out.String()
	for _, c := range commands {
		if !strings.Contains(u, "  "+c.name+" "+c.synopsis) || !strings.Contains(u, c.short) {
			t.Errorf("usage lacks %s's line:\n%s", c.name, u)
		}
		var b bytes.Buffer
		commandUsage(&b, c)
		for _, want := range []string{"usage: ptxprop " + c.name, "Exit status", "0  success", "1  a finding", "2  bad usage"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("help %s lacks %q:\n%s", c.name, want, b.String())
			}
		}
		if len(c.long) < 60 {
			t.Errorf("%s: documentation %q is too short to describe it", c.name, c.long)
		}
	}
	for _, want := range []string{"Exit status:", "0  success", "1  a finding", "2  bad usage"} {
		if !strings.Contains(u, want) {
			t.Errorf("usage lacks %q", want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	huge := strings.Repeat("y", 10<<20)
	runCases(t, []cliCase{
		{nil, 2, "", "Commands:"},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{huge}, 2, "", "unknown command"},
		{[]string{"report"}, 2, "", "missing command"},
		{[]string{"report", "frob"}, 2, "", "unknown command"},
		{[]string{"help", "frob"}, 2, "", "unknown command"},
		{[]string{"check", "-bogus"}, 2, "", "usage: ptxprop check"},
		{[]string{"summary", "a.json", "b.json"}, 2, "", "at most one report"},
		{[]string{"diff", "a.json"}, 2, "", "two reports"},
		{[]string{"merge", "a.json"}, 2, "", "-o out.json"},
		{[]string{"validate"}, 2, "", "at least one report"},
	})
}

func TestCheck(t *testing.T) {
	good := write(t, nil)
	runCases(t, []cliCase{
		{[]string{"check", good}, 0, "1 predictions, 1 ran, none failed", ""},
		{[]string{"report", "check", good}, 0, "none failed", ""},
		{[]string{"check", write(t, func(r *reports.Report) {
			r.Predictions[0].Status, r.Predictions[0].Reason, r.Predictions[0].ChecksFailed = reports.Falsified, "max error above bound", 1
		})}, 1, "falsified    P-1: max error above bound", "1 finding"},
		{[]string{"check", write(t, func(r *reports.Report) {
			r.Predictions[0] = reports.Prediction{ID: "P-1", Status: reports.Skipped, Reason: "needs a GPU"}
			r.UpsertPrediction(reports.Prediction{ID: "P-2", Status: reports.Skipped, Reason: "needs a GPU"})
		})}, 1, "no prediction ran: all 2 are skipped or not run", ""},
		// The filtered run of issue 15 #4: one prediction ran, the rest were not run.
		{[]string{"check", write(t, func(r *reports.Report) {
			for _, id := range []string{"P-2", "P-3"} {
				r.UpsertPrediction(reports.Prediction{ID: id, Status: reports.NotRun, Reason: "filtered out by -run"})
			}
		})}, 1, "partial report: 2 predictions not run: P-2, P-3 (run them, or pass -allow-partial)", ""},
		{[]string{"check", "-allow-partial", write(t, func(r *reports.Report) {
			r.UpsertPrediction(reports.Prediction{ID: "P-2", Status: reports.NotRun})
		})}, 0, "(allowed by -allow-partial)", ""},
		{[]string{"check", write(t, func(r *reports.Report) { r.Run.Stopped = "deadline 45s" })}, 1, "partial report: stopped: deadline 45s", ""},
		{[]string{"check", write(t, func(r *reports.Report) {
			r.Mutants = []reports.Mutant{{Name: "g", Kind: reports.MutantGeneric, Status: reports.MutantNotExercised, Reason: "not exercised"}}
		})}, 1, "mutant not_exercised g", ""},
		{[]string{"check", write(t, func(r *reports.Report) {
			r.Mutants = []reports.Mutant{{Name: "g", Kind: reports.MutantGeneric, Status: reports.MutantSurvived}}
		})}, 1, "mutant survived", ""},
		{[]string{"check", writeDoc(t, func(m map[string]any) { m["predictions"] = []any{} })}, 2, "", "predictions: empty"},
		{[]string{"check", filepath.Join(t.TempDir(), "missing.json")}, 2, "", "no such file"},
		// Reports that contradict themselves cannot be trusted (issue 22 #5):
		// the first passed check before.
		{[]string{"check", writeDoc(t, func(m map[string]any) { pred(m)["checks"] = 0; delete(pred(m), "error_stats") })}, 2, "",
			`predictions[0] "P-1": discharged with checks 0`},
		{[]string{"check", writeDoc(t, func(m map[string]any) { pred(m)["status"], pred(m)["reason"] = "falsified", "wrong" })}, 2, "",
			`predictions[0] "P-1": falsified with checks_failed 0`},
		{[]string{"check", writeDoc(t, func(m map[string]any) {
			pred(m)["status"], pred(m)["checks"] = "skipped", 200
			delete(pred(m), "error_stats")
		})}, 2, "", `predictions[0] "P-1": skipped with 200 checks`},
	})
}

// TestValidate: the issue 15 #11 inputs are refused with the JSON path of
// the bad field, in the file's terms, without repeating a huge value.
func TestValidate(t *testing.T) {
	good := write(t, nil)
	junk := filepath.Join(t.TempDir(), "junk.json")
	os.WriteFile(junk, []byte("{"), 0o644)
	array := filepath.Join(t.TempDir(), "array.json")
	os.WriteFile(array, []byte("[1, 2, 3]"), 0o644)
	huge := strings.Repeat("z", 10<<20)
	runCases(t, []cliCase{
		{[]string{"validate", good}, 0, "valid ptxprop.contract-report/v2 (1 predictions, 0 mutants, 0 kernels)", ""},
		{[]string{"report", "validate", good, good}, 0, "valid", ""},
		{[]string{"validate", junk}, 2, "", "truncated"},
		{[]string{"validate", array}, 2, "", "holds an array, not a JSON object"},
		{[]string{"validate", writeDoc(t, func(m map[string]any) { pred(m)["error_stats"].(map[string]any)["max_ratio"] = 5 })}, 2, "",
			`predictions[0] "P-1": discharged with error_stats.max_ratio 5`},
		{[]string{"validate", writeDoc(t, func(m map[string]any) { pred(m)["error_stats"].(map[string]any)["max_ratio"] = -1 })}, 2, "",
			"error_stats.max_ratio -1 is negative"},
		{[]string{"validate", writeDoc(t, func(m map[string]any) { pred(m)["error_stats"].(map[string]any)["max_ratio"] = "NaN" })}, 2, "",
			"discharged with error_stats.max_ratio NaN"},
		{[]string{"validate", writeDoc(t, func(m map[string]any) { pred(m)["status"] = "falsified" })}, 2, "", "falsified without a reason"},
		{[]string{"validate", writeDoc(t, func(m map[string]any) { m["predictions"] = []any{} })}, 2, "", "predictions: empty"},
		{[]string{"validate", writeDoc(t, func(m map[string]any) { m["run"] = []any{} })}, 2, "", "run: want an object, got an array"},
		{[]string{"validate", writeDoc(t, func(m map[string]any) { pred(m)["checks"] = "3" })}, 2, "",
			`predictions[0].checks: want an integer, got the string "3"`},
		{[]string{"validate", writeDoc(t, func(m map[string]any) { pred(m)["status"] = huge })}, 2, "", "(10485760 bytes)"},
		{[]string{"validate", good, junk}, 2, "valid", "junk.json"},
		// Valid, but the statistics contradict each other (C-BRMS-BACK-001 at 3de989a).
		{[]string{"validate", write(t, func(r *reports.Report) {
			r.Predictions[0].ErrorStats = &reports.ErrorStats{MaxAbs: new(100.66), MaxRel: new(0.0), MaxULP: new(0.0), MaxRatio: 0.5}
		})}, 1, "max_abs 100.66 beside max_rel 0 and max_ulp 0", ""},
	})
}

func TestSummaryAndDiff(t *testing.T) {
	good := write(t, nil)
	bad := write(t, func(r *reports.Report) {
		r.Predictions[0].Status, r.Predictions[0].Reason, r.Predictions[0].ChecksFailed = reports.Falsified, "wrong", 1
	})
	runCases(t, []cliCase{
		{[]string{"summary", good}, 0, "P-1  t  3 checks  worst err/tol 0.5", ""},
		{[]string{"report", "summary", "-markdown", good}, 0, "| **discharged** | `P-1` |", ""},
		{[]string{"summary", filepath.Join(t.TempDir(), "none.json")}, 2, "", "no such file"},
		{[]string{"diff", good, bad}, 1, "regression   prediction P-1: discharged -> falsified", ""},
		{[]string{"report", "diff", good, bad}, 1, "regression   prediction P-1: discharged -> falsified", ""},
		{[]string{"diff", good, good}, 0, "no changes from " + good + " to " + good, ""},
		// Issue 22 #6: fewer checks with the same status printed nothing.
		{[]string{"diff", good, write(t, func(r *reports.Report) { r.Predictions[0].Checks = 1 })}, 0, "change       prediction P-1: checks 3 -> 1 (fewer)", ""},
		{[]string{"diff", good, write(t, func(r *reports.Report) { r.Predictions[0].ErrorStats.MaxRatio = 0.9 })}, 0,
			"prediction P-1: worst err/tol 0.5 -> 0.9 (+80%)", ""},
	})
}

// TestMerge: shards add up; the same run twice is refused, naming the files.
func TestMerge(t *testing.T) {
	a, b := write(t, nil), write(t, nil)
	dir := t.TempDir()
	ab := filepath.Join(dir, "ab.json")
	other := write(t, func(r *reports.Report) { r.Run.Device = "NVIDIA H100" })
	out := filepath.Join(dir, "out.json")
	runCases(t, []cliCase{
		{[]string{"merge", "-o", ab, a, b}, 0, "2 reports merged, 1 predictions", ""},
		{[]string{"check", ab}, 0, "none failed", ""},
		{[]string{"merge", "-o", out, a, a}, 2, "", a + " and " + a + " both hold run"},
		{[]string{"merge", "-o", out, ab, b}, 2, "", ab + " and " + b + " both hold run"},
		{[]string{"merge", "-o", out, a, other}, 2, "", "not shards of one run"},
		{[]string{"merge", "-o", out, a, write(t, func(r *reports.Report) { r.Run.Device = strings.Repeat("D", 10<<20) })}, 2, "", "(10485760 bytes)"},
		{[]string{"merge", "-o", out, a, filepath.Join(dir, "missing.json")}, 2, "", "no such file"},
	})
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused merge wrote %s (%v)", out, err)
	}
	r, err := reports.Read(ab)
	if err != nil || r.Predictions[0].Checks != 6 || len(r.Run.MergedFrom) != 2 {
		t.Errorf("merged: %v %+v", err, r)
	}
}

const mainEnv = "PTXPROP_TEST_RUN_MAIN"

// TestMain lets a test run the real main, os.Exit and all, in a child process.
func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Args = append([]string{"ptxprop"}, strings.Fields(os.Getenv(mainEnv+"_ARGS"))...)
		main()
	}
	os.Exit(m.Run())
}

// TestProcessExitStatus runs main in a child process and through the
// README's `go run ./cmd/ptxprop` form, where only the process's own exit
// status and streams count.
func TestProcessExitStatus(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	good := write(t, nil)
	partial := write(t, func(r *reports.Report) { r.UpsertPrediction(reports.Prediction{ID: "P-2", Status: reports.NotRun}) })
	for _, c := range []struct {
		args string
		code int
		out  string
	}{
		{"-h", 0, "Commands:"}, {"--help", 0, "Commands:"}, {"help", 0, "Commands:"}, {"summary -h", 0, "usage: ptxprop summary"},
		{"check " + good, 0, "none failed"}, {"check " + partial, 1, "partial report"}, {"", 2, ""}, {"frob", 2, ""},
	} {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), mainEnv+"=1", mainEnv+"_ARGS="+c.args)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || !strings.Contains(out.String(), c.out) {
			t.Errorf("ptxprop %s: exit %d (want %d), stdout %q, stderr %q", c.args, code, c.code, cut(out.String()), cut(errb.String()))
		}
	}

	if testing.Short() {
		t.Skip("go run builds the command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"summary", "-h"}} {
		cmd := exec.Command(gobin, append([]string{"run", "."}, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "usage") && !strings.Contains(out.String(), "Usage") {
			t.Errorf("go run ./cmd/ptxprop %s: %v, stdout %q, stderr %q", strings.Join(args, " "), err, cut(out.String()), cut(errb.String()))
		}
	}
}

// TestInterspersedFlags: a command's flags may follow its arguments;
// "--" ends the flags. Before, flags after an argument were arguments.
func TestInterspersedFlags(t *testing.T) {
	partial := write(t, func(r *reports.Report) { r.UpsertPrediction(reports.Prediction{ID: "P-2", Status: reports.NotRun}) })
	good := write(t, nil)
	merged := filepath.Join(t.TempDir(), "m.json")
	runCases(t, []cliCase{
		{[]string{"check", partial, "-allow-partial"}, 0, "allowed by -allow-partial", ""},
		{[]string{"summary", good, "-markdown"}, 0, "# ptxprop contract report", ""},
		{[]string{"merge", good, "-o", merged}, 0, "1 reports merged", ""},
		{[]string{"check", good, "-h"}, 0, "usage: ptxprop check", ""},
		{[]string{"check", "--", "-allow-partial"}, 2, "", "open -allow-partial: no such file"}, // a file after --
		{[]string{"check", partial, "--", "-allow-partial"}, 2, "", "at most one report"},
	})

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := fs.String("o", "", "")
	b := fs.Bool("b", false, "")
	for _, c := range []struct {
		args, want []string
		o          string
		b          bool
	}{
		{[]string{"a", "-b", "b", "-o", "x", "c"}, []string{"a", "b", "c"}, "x", true},
		{[]string{"a", "--", "-b", "--"}, []string{"a", "-b", "--"}, "", false},
		{[]string{"-o", "--", "a", "-b"}, []string{"a"}, "--", true},     // "--" as -o's value
		{[]string{"-o", "-b", "--", "-b"}, []string{"-b"}, "-b", false},  // -o takes "-b"; then "--"
		{[]string{"-b", "--", "-o", "y"}, []string{"-o", "y"}, "", true}, // -b takes no value
		{[]string{"-o=--", "--", "-b"}, []string{"-b"}, "--", false},     // value in the flag
		{[]string{"a", "-", "-b"}, []string{"a", "-"}, "", true},         // "-" is an argument
		{nil, nil, "", false},
	} {
		*o, *b = "", false
		got, err := parseInterspersed(fs, c.args)
		if err != nil || !slices.Equal(got, c.want) || *o != c.o || *b != c.b {
			t.Errorf("%q: arguments %q, -o %q, -b %v, %v; want %q, %q, %v", c.args, got, *o, *b, err, c.want, c.o, c.b)
		}
	}
}

// TestCheckCapsHugeReason: check prints a 10 MB reason cut, saying how
// much more the report holds.
func TestCheckCapsHugeReason(t *testing.T) {
	reason := strings.Repeat("r", 10<<20)
	p := write(t, func(r *reports.Report) {
		r.UpsertPrediction(reports.Prediction{ID: "P-2", Status: reports.Falsified, Reason: reason, Checks: 1, ChecksFailed: 1})
	})
	var out, errb bytes.Buffer
	if code := run([]string{"check", p}, &out, &errb); code != 1 || out.Len() > 4096 ||
		!strings.Contains(out.String(), fmt.Sprintf("… (%d bytes more; see the report)", len(reason)-lineMax)) {
		t.Errorf("exit %d, %d bytes: %.300q", code, out.Len(), out.String())
	}
}
