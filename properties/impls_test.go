package properties_test

import (
	"slices"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/reports"
)

type goRMSNorm struct{}

func (*goRMSNorm) RMSNormForward(cudart.Device, *op.RMSNormForwardArgs) error { return nil }

type namedRMSNorm struct{ goRMSNorm }

func (namedRMSNorm) Name() string { return "team-rmsnorm" }

func myForward(cudart.Device, *op.RMSNormForwardArgs) error { return nil }

// A report credits an outcome to what ran: ptxprop's kernels by their
// descriptors (origin ours, pinned by their PTX), a user's implementation
// by its own name or Go type (origin user), a kernel of ours whose PTX was
// changed as the user's, a bare function by its symbol; each once.
func TestImplKernels(t *testing.T) {
	changed := kernels.RMSNormFwd
	changed.K = changed.K.WithPTX(append([]byte("// edited\n"), changed.K.PTX...))
	for _, c := range []struct {
		name  string
		impls []any
		want  []string
		orig  []reports.KernelOrigin
	}{
		{"ours", []any{kernels.RMSNormFwd}, []string{"rmsnorm_fwd", "rmsnorm_fwd_rms"}, []reports.KernelOrigin{"ours", "ours"}},
		{"go type", []any{&goRMSNorm{}}, []string{"properties_test.goRMSNorm"}, []reports.KernelOrigin{"user"}},
		{"named", []any{namedRMSNorm{}}, []string{"team-rmsnorm"}, []reports.KernelOrigin{"user"}},
		{"changed PTX", []any{changed}, []string{"kernels.RMSNormForward/rmsnorm_fwd", "rmsnorm_fwd_rms"}, []reports.KernelOrigin{"user", "ours"}},
		{"func", []any{properties.RMSNormForwardOp.Func(myForward, nil)}, []string{"github.com/ptxprop/ptxprop/properties_test.myForward"}, []reports.KernelOrigin{"user"}},
		{"impls, once", []any{properties.Impls{kernels.RMSNormFwd, namedRMSNorm{}}, kernels.RMSNormFwd}, []string{"rmsnorm_fwd", "rmsnorm_fwd_rms", "team-rmsnorm"}, []reports.KernelOrigin{"ours", "ours", "user"}},
	} {
		ks := properties.ImplKernels(c.impls...)
		var names []string
		var origins []reports.KernelOrigin
		r := reports.New(reports.NewRun(reports.BackendEmu))
		r.UpsertPrediction(reports.Prediction{ID: "P", Status: reports.Discharged, Checks: 1})
		for _, k := range ks {
			names, origins = append(names, k.Name), append(origins, k.Origin)
			r.UpsertKernel(k)
		}
		if !slices.Equal(names, c.want) || !slices.Equal(origins, c.orig) {
			t.Errorf("%s: kernels %v %v, want %v %v", c.name, names, origins, c.want, c.orig)
		}
		if err := r.Validate(); err != nil {
			t.Errorf("%s: a report of them is invalid: %v", c.name, err)
		}
	}
}
