package binding_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// dischargesAll runs every prediction of b (five checks each, the pairs
// with its forward included) and fails t for one that is not discharged.
func dischargesAll(t *testing.T, b *binding.Binding) {
	t.Helper()
	if cfg := config(t); cfg.Device == nil {
		t.Skip(cfg.NoDevice)
	}
	jobs := binding.Jobs(b)
	if len(jobs) == 0 {
		t.Fatal("no predictions")
	}
	for _, j := range jobs {
		t.Run(j.ID, func(t *testing.T) {
			cfg := config(t)
			cfg.Recorder = &outcome.Recorder{}
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

// TestInPlaceRoPEWithTables: a RoPE kernel specialised to heads == 8 and
// head_dim == 64 that rotates x in place through one pointer (alias y: x,
// y bound to no parameter) and reads cos/sin tables (inputs) loads, and
// its predictions discharge; its positions are drawn below the tables'
// 4096 rows.
func TestInPlaceRoPEWithTables(t *testing.T) {
	dischargesAll(t, load(t, "testdata/inplace/rope_table.yaml"))
}

// TestSwappedTablesFalsified: the tables' values are computed from θ and
// the positions: bound the wrong way round, the kernel rotates by the
// wrong angle and the oracle sees it.
func TestSwappedTablesFalsified(t *testing.T) {
	if cfg := config(t); cfg.Device == nil {
		t.Skip(cfg.NoDevice)
	}
	b := rewrite(t, "testdata/inplace/rope_table.yaml", "value: rope.cos}", "value: rope.sin}")
	for _, j := range binding.Jobs(b) {
		if j.ID == properties.RoPEThetaCache {
			falsified(t, j.Contract)
			return
		}
	}
	t.Fatalf("no %s job", properties.RoPEThetaCache)
}

// TestOnePointerAndInputErrors: y bound through x's pointer needs the
// alias; a table must be a RoPE contract's and its rows constant.
func TestOnePointerAndInputErrors(t *testing.T) {
	src := mustRead(t, "testdata/inplace/rope_table.yaml")
	for _, c := range []struct{ old, new, want string }{
		{"alias: {y: x}                 # one pointer: x in, y out\n", "", `role "y" of rope.neox.forward is not bound`},
		{"shape: [max_pos,", "shape: [rows,", "cos_cache: its rows (rows) are the positions it holds, and must be an expression of the constants"},
		{"inputs:\n  cos_cache", "inputs:\n  theta", `inputs: "theta" is already a role or name of rope.neox.forward`},
	} {
		s := strings.Replace(src, c.old, c.new, 1)
		if s == src {
			t.Fatalf("%q not in the file", c.old)
		}
		_, err := binding.Parse("testdata/inplace/rope_table.yaml", []byte(s))
		if err == nil || !errors.Is(err, binding.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q → %q: %v, want an error containing %q", c.old, c.new, err, c.want)
		}
	}
}

// TestHostSum: a backward whose dγ partials the host sums (host_sums)
// discharges its predictions, the sum done by ptxprop in float32, row 0
// first.
func TestHostSum(t *testing.T) {
	dischargesAll(t, load(t, "testdata/host/rmsnorm_bwd_host.yaml"))
}
