package binding_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// dependence runs DEPEND-001 alone on b, as t's subtest name.
func dependence(t *testing.T, name string, b *binding.Binding) {
	t.Helper()
	for _, j := range binding.Jobs(b) {
		if j.ID == properties.Dependence {
			t.Run(name, func(t *testing.T) { j.Contract(suite.T(t)) })
			return
		}
	}
	t.Errorf("%s: no %s job", name, properties.Dependence)
}

// TestForeignDependence runs DEPEND-001 alone on each committed foreign
// binding (-run TestForeignDependence/NAME for one): each computes its
// outputs from exactly the inputs its operation declares. The Triton
// kernels pass their values through ldmatrix and stmatrix, and every
// RMSNorm among them saves rstd, which the binding hands the contract as
// rms = 1/rstd: the binding tells the trace so.
func TestForeignDependence(t *testing.T) {
	paths, err := filepath.Glob("testdata/foreign/*/*.binding.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no foreign bindings: %v", err)
	}
	for _, path := range paths {
		dependence(t, strings.TrimSuffix(filepath.Base(path), ".binding.yaml"), load(t, path))
	}
}

// TestBindingLayoutsDependence: the layouts a binding converts through are
// told to the trace, so DEPEND-001 follows each contract element to where
// the kernel holds it: bfloat16 and float16 storage (two elements a word),
// rows padded to a stride (the gaps NaN), dγ summed on the host from
// per-row partials.
func TestBindingLayoutsDependence(t *testing.T) {
	padded := strings.Replace(mustRead(t, "testdata/foreign/nvcc13/rms_norm.binding.yaml"), "saved: rstd", "saved: rstd\nrow_stride: hidden + 8", 1)
	b, err := binding.Parse("testdata/foreign/nvcc13/rms_norm.binding.yaml", []byte(padded))
	if err != nil {
		t.Fatal(err)
	}
	dependence(t, "padded", b)
	for name, path := range map[string]string{"bf16": "testdata/bf16/rmsnorm_fwd_bf16.yaml", "f16": "testdata/f16/rmsnorm_fwd_f16.yaml",
		"host_sums": "testdata/host/rmsnorm_bwd_host.yaml", "rope_table": "testdata/inplace/rope_table.yaml"} {
		dependence(t, name, load(t, path))
	}
}
