package properties

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties/gen"
)

// TestEveryOperationBound checks that the row-wise families bind every
// operation of the op table, each once.
func TestEveryOperationBound(t *testing.T) {
	bound := map[string]int{}
	for _, f := range operations() {
		bound[f.operation().Name()]++
	}
	for _, o := range op.All() {
		if bound[o.Name()] != 1 {
			t.Errorf("%s is bound %d times, want once", o.Name(), bound[o.Name()])
		}
		delete(bound, o.Name())
	}
	for name := range bound {
		t.Errorf("%s is bound but not in the op table", name)
	}
}

// TestFuncJoinsOneFamily checks that an implementation made by Func joins
// its own operation's family only, that Call reaches it, and that a value
// implementing no interface is an error.
func TestFuncJoinsOneFamily(t *testing.T) {
	errRun := errors.New("ran")
	impl := RMSNormBackwardOp.Func(func(cudart.Device, *op.RMSNormBackwardArgs) error { return errRun }, nil)
	var joined []string
	for _, f := range operations() {
		if _, ok := f.family(impl, gen.EmuLimits); ok {
			joined = append(joined, f.operation().Name())
		}
	}
	if strings.Join(joined, ",") != "rmsnorm.backward" {
		t.Errorf("Func's implementation joins %v, want [rmsnorm.backward]", joined)
	}
	if err := RMSNormBackwardOp.Call(impl, nil, &op.RMSNormBackwardArgs{}); err != errRun {
		t.Errorf("Call returned %v, want the function's error", err)
	}
	if k, r := impl.(KernelLister).Kernels(), impl.(ReductionDescriber).Reductions(op.Shape{}); k != nil || r != nil {
		t.Errorf("Kernels, Reductions without a describer = %v, %v; want nil", k, r)
	}
	if _, err := (Impls{42}).families(gen.EmuLimits); err == nil || !strings.Contains(err.Error(), "int implements no operation") {
		t.Errorf("families of an int: %v", err)
	}
}

// TestDrawTable checks the problems drawn from the op table alone: every
// tensor has its shape's length, inputs are drawn, numeric parameters are
// in their generators' ranges, and a per-head shape is Heads·HeadDim.
func TestDrawTable(t *testing.T) {
	// A fixed number of draws, whatever -rapid.checks says.
	check := rapid.Custom(func(rt *rapid.T) bool {
		lim := gen.EmuLimits
		f := drawTable(op.RMSNormForward, rt, lim)
		if bad := op.RMSNormForward.Lengths(f.args); bad != nil || f.args.Eps <= 0 || f.args.RMS == nil {
			rt.Fatalf("rmsnorm.forward %s: lengths %v, eps %g, rms nil %v", f.desc, bad, f.args.Eps, f.args.RMS == nil)
		}
		l := drawTable(op.LayerNormForward, rt, lim)
		if bad := op.LayerNormForward.Lengths(l.args); bad != nil || l.args.Eps <= 0 || len(l.args.Beta) != l.args.Hidden {
			rt.Fatalf("layernorm.forward %s: lengths %v, eps %g", l.desc, bad, l.args.Eps)
		}
		h := drawTable(op.PerHeadRMSNorm, rt, lim)
		s := op.PerHeadRMSNorm.Shape(h.args)
		if bad := op.PerHeadRMSNorm.Lengths(h.args); bad != nil || s.Heads < 1 || s.HeadDim < 1 || len(h.args.Gamma) != s.HeadDim {
			rt.Fatalf("per_head_rmsnorm %s: lengths %v, shape %v", h.desc, bad, s)
		}
		r := drawTable(op.RoPEForward, rt, lim)
		if bad := op.RoPEForward.Lengths(r.args); bad != nil || r.args.Theta <= 0 || len(r.args.Positions) != r.args.Rows {
			rt.Fatalf("rope.neox.forward %s: lengths %v, theta %g", r.desc, bad, r.args.Theta)
		}
		return true
	})
	for seed := range 100 {
		check.Example(seed)
	}
}
