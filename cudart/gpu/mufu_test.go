//go:build cuda

package gpu

import (
	"testing"
	"time"
)

// TestApproxModelsExhaustive runs every approximate instruction the
// emulator models on the GPU over all its inputs (2^32 for 32-bit
// operands, every high word for .f64) and compares each output with
// emu.ApproxModel's, bit for bit: the models are the GPU's. About 40 s on
// an H200; skipped under -short.
func TestApproxModelsExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("long: 2^32 inputs for each of 16 instructions")
	}
	b := open(t, Config{})
	if cc := b.Info().ComputeCapability; cc != "9.0" {
		t.Skipf("the models are sm_90's; this GPU has compute capability %s", cc)
	}
	for _, op := range approxOps {
		start := time.Now()
		inputs, bad, first, err := approxSweep(b, op, 28, 0)
		switch {
		case err != nil:
			t.Errorf("%s: %v", op, err)
		case bad > 0:
			t.Errorf("%s: %d of %d inputs differ from the GPU, first %s", op, bad, inputs, first)
		default:
			t.Logf("%s: all %d inputs as the GPU computes them (%v)", op, inputs, time.Since(start).Round(time.Millisecond))
		}
	}
}
