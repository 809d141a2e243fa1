package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/reports"
)

func TestVerifyExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := "../../binding/testdata/rmsnorm_fwd.yaml"
	src, err := os.ReadFile("../../binding/testdata/rmsnorm_bwd_chunk.yaml")
	if err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string {
		a, err := filepath.Abs(filepath.Join(cwd0, p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// x and dy swapped: loads, then is falsified.
	wrong := filepath.Join(dir, "swapped.yaml")
	src = bytes.Replace(src, []byte("[x, gamma, rms, dy,"), []byte("[dy, gamma, rms, x,"), 1)
	src = bytes.ReplaceAll(src, []byte("../../kernels/ptx/"), []byte(abs("../../kernels/ptx")+"/"))
	src = bytes.Replace(src, []byte("forward: rmsnorm_fwd.yaml"), []byte("forward: "+abs("../../binding/testdata/rmsnorm_fwd.yaml")), 1)
	if err := os.WriteFile(wrong, src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // relative paths resolve here
	cases := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"help", []string{"-h"}, 0, ""},
		{"no binding", nil, 2, "usage: ptxprop verify"},
		{"missing binding", []string{filepath.Join(dir, "nope.yaml")}, 2, "nope.yaml: cannot read the binding file: no such file or directory"},
		{"discharged", []string{abs(good)}, 0, ""},
		{"falsified", []string{wrong}, 1, ""},
		// Binding errors that show at some shapes only: exit 2 with the
		// file:line, before anything is launched (no report).
		{"scratch divides by zero", []string{abs("../../binding/testdata/faults/scratch_div7.yaml")}, 2, "scratch_div7.yaml:9: scratch tmp size at rows=1 hidden=7: division by zero"},
		{"grid below one", []string{abs("../../binding/testdata/faults/grid_negative.yaml")}, 2, "grid_negative.yaml:9: rmsnorm_fwd_rms at rows=1 hidden=3: impossible launch: grid.x = 0"},
		{"scratch over the cap", []string{abs("../../binding/testdata/faults/scratch_huge.yaml")}, 2, "scratch_huge.yaml:9: scratch big has 4913000 elements at rows=1 hidden=17"},
		{"layernorm without statistics", []string{abs("../../binding/testdata/faults/layernorm_fwd_no_stats.yaml")}, 2, "layernorm_fwd_no_stats.yaml:4: layernorm.forward saves statistics its predictions check, and none are bound"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			report := filepath.Join(dir, c.name+".json")
			var out, errb bytes.Buffer
			code := run(append([]string{"verify", "-ptxprop.checks=5", "-ptxprop.report=" + report}, c.args...), &out, &errb)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out.String(), errb.String())
			}
			if !strings.Contains(errb.String(), c.err) {
				t.Fatalf("stderr does not contain %q:\n%s", c.err, errb.String())
			}
			if c.code == 2 || c.name == "help" {
				if _, err := os.Stat(report); err == nil {
					t.Errorf("exit %d wrote a report", c.code)
				}
				return
			}
			rep, err := reports.Read(report)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]reports.PredictionStatus{"RMS-FWD-001": reports.Discharged}
			if c.name == "falsified" {
				want = map[string]reports.PredictionStatus{"P-BRMS-BACK-001": reports.Falsified}
			}
			for _, p := range rep.Predictions {
				id, _, _ := strings.Cut(p.ID, "@") // ID@binding
				if s, ok := want[id]; ok {
					if p.Status != s || p.Checks == 0 {
						t.Errorf("%s: %s after %d checks, want %s", p.ID, p.Status, p.Checks, s)
					}
					delete(want, id)
				}
				if p.Status == reports.NotRun {
					t.Errorf("%s: not run: a verify report lists only the claimed predictions", p.ID)
				}
			}
			if c.name == "falsified" {
				for _, p := range rep.Predictions {
					if p.Reproduction != nil && !strings.HasPrefix(p.Reproduction.Command, "ptxprop verify ") {
						t.Errorf("%s: reproduction %q, want a ptxprop verify command", p.ID, p.Reproduction.Command)
					}
				}
			}
			if len(want) > 0 {
				t.Errorf("not in the report: %v", want)
			}
		})
	}
}

var cwd0, _ = os.Getwd()
