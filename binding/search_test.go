package binding_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// narrowCases are constraints the load-time search must satisfy beyond
// rows, hidden ≤ 64 with heads = 1: a large multiple, a row count above
// 64, a RoPE kernel specialised to its model's heads, one exact shape.
var narrowCases = []struct {
	path, constraints string
	smallest          op.Shape // the first feasible shape
}{
	{"testdata/rmsnorm_fwd.yaml", `["hidden % 128 == 0"]`, op.Shape{Rows: 1, Hidden: 128}},
	{"testdata/rmsnorm_fwd.yaml", `["rows >= 65"]`, op.Shape{Rows: 65, Hidden: 1}},
	{"testdata/rmsnorm_fwd.yaml", `["hidden == 33", "rows == 7"]`, op.Shape{Rows: 7, Hidden: 33}},
	{"testdata/rope_fwd.yaml", `["heads == 8 && head_dim == 64"]`, op.Shape{Rows: 1, Hidden: 512, Heads: 8, HeadDim: 64}},
}

// constrained loads path with constraints added before its launches.
func constrained(t *testing.T, path, constraints string) *binding.Binding {
	t.Helper()
	return rewrite(t, path, "\nlaunches:", "\nconstraints: "+constraints+"\nlaunches:")
}

// TestSearchFindsNarrowShapes: each narrow constraint loads, its first
// feasible shape is the smallest one, and every feasible shape the
// generators fall back to meets the constraints.
func TestSearchFindsNarrowShapes(t *testing.T) {
	for _, c := range narrowCases {
		t.Run(c.constraints, func(t *testing.T) {
			b := constrained(t, c.path, c.constraints)
			d := b.Domain()
			if d == nil || len(d.Feasible) == 0 {
				t.Fatalf("no feasible shapes")
			}
			if d.Feasible[0] != c.smallest {
				t.Errorf("smallest feasible shape %v, want %v", d.Feasible[0], c.smallest)
			}
			for _, s := range d.Feasible {
				if err := b.AcceptShape(s); err != nil || !d.Accepts(s) {
					t.Fatalf("feasible %v refused: %v", s, err)
				}
			}
		})
	}
}

// TestSearchErrorNamesSpace: when nothing satisfies the constraints, the
// error names the parameters searched, their ranges and what was held.
func TestSearchErrorNamesSpace(t *testing.T) {
	for _, c := range []struct {
		path, constraints string
		want              []string
	}{
		{"testdata/rmsnorm_fwd.yaml", `["rows > 100000"]`,
			[]string{"no shape meets the constraints rows > 100000", "rows in {1, 2,", "65536)", "hidden in {", "held fixed: heads = head_dim = 0"}},
		{"testdata/rope_fwd.yaml", `["head_dim % 2 == 1"]`,
			[]string{"heads in {", "head_dim in {2, 4,", "held fixed: hidden = heads·head_dim; head_dim even"}},
	} {
		src := strings.Replace(mustRead(t, c.path), "\nlaunches:", "\nconstraints: "+c.constraints+"\nlaunches:", 1)
		_, err := binding.Parse(c.path, []byte(src))
		if err == nil || !errors.Is(err, binding.ErrInvalid) {
			t.Fatalf("%s: loaded, want an error", c.constraints)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q:\n%v", c.constraints, w, err)
			}
		}
	}
}

// TestNarrowConstraintsDischarge: with narrow constraints, a correct
// kernel's predictions run and discharge, every draw within the
// constraints (before, "hidden == 33" with "rows == 7" made six
// predictions an error: test failed outside the property).
func TestNarrowConstraintsDischarge(t *testing.T) {
	if cfg := config(t); cfg.Device == nil {
		t.Skip(cfg.NoDevice)
	}
	for _, c := range narrowCases {
		b := constrained(t, c.path, c.constraints)
		for _, j := range binding.Jobs(b) {
			t.Run(c.constraints+"/"+j.ID, func(t *testing.T) {
				cfg := config(t)
				cfg.Recorder = &outcome.Recorder{}
				// Five checks: rows >= 65 launches 65 blocks and more a
				// check, which the emulator runs one thread at a time.
				q := suite.RunContract(t.Name(), cfg, suite.Rapid{Checks: 5, Exact: true, NoFailFile: true}, j.Contract)
				o := cfg.Recorder.Outcomes()[j.ID]
				if j.ID == properties.Parity && cfg.Device.Info().Backend != "gpu" {
					return
				}
				if o.Status != outcome.Discharged || o.Checks == 0 {
					t.Errorf("%s after %d checks: %s\n%.2000s", o.Status, o.Checks, o.Reason, strings.Join(q.Logs(), "\n"))
				}
			})
		}
	}
}

// TestTooFewValidDraws: constraints no shape within the run's element cap
// meets make every draw invalid; the verdict is error with rapid's reason
// and the acceptance rate, not "test failed outside the property".
func TestTooFewValidDraws(t *testing.T) {
	if cfg := config(t); cfg.Device == nil {
		t.Skip(cfg.NoDevice)
	}
	b := constrained(t, "testdata/rmsnorm_fwd.yaml", `["rows * hidden > 16384"]`)
	j := binding.Jobs(b)[0]
	cfg := config(t)
	cfg.Recorder, cfg.MaxElements = &outcome.Recorder{}, 1<<14
	properties.RunQuiet(t.Name(), cfg, j.Contract)
	o := cfg.Recorder.Outcomes()[j.ID]
	if o.Status != outcome.Errored {
		t.Fatalf("%s: %s, want error", j.ID, o.Status)
	}
	for _, w := range []string{"[rapid] only generated 0 valid tests", "acceptance 0.0%", "outside the constraint"} {
		if !strings.Contains(o.Reason, w) {
			t.Errorf("reason lacks %q: %s", w, o.Reason)
		}
	}
}
