package binding_test

import (
	"testing"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/properties"
)

// ptxprop's own PTX, bound by files alone: every prediction of the claimed
// contracts must discharge through the binding path as it does through
// package kernels.

func load(t *testing.T, path string) *binding.Binding {
	t.Helper()
	b, err := binding.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOwnRMSNormForward(t *testing.T) {
	b := load(t, "testdata/rmsnorm_fwd.yaml")
	properties.RMSNormForwardContract(t, b.Impl().(properties.RMSNormForwarder))
}

func TestOwnRMSNormBackwardChunk(t *testing.T) {
	b := load(t, "testdata/rmsnorm_bwd_chunk.yaml")
	properties.RMSNormBackwardContract(t, b.Impl().(properties.RMSNormBackwarder))
}
