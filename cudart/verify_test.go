package cudart

import (
	"slices"
	"testing"

	"github.com/ptxprop/ptxprop/cudart/internal/ptxas"
)

// TestVerifyPTXAssembles checks ptxprop_verify with the toolkit's ptxas when
// one is on PATH (the emulator runs it in cudart/emu's TestDeviceChecks).
func TestVerifyPTXAssembles(t *testing.T) {
	if out, err := ptxas.Assemble(t, "sm_70", "verify", verifyPTX); err != nil {
		t.Fatalf("ptxas: %v\n%s", err, out)
	}
}

func TestCanary64(t *testing.T) {
	for kind, want := range map[Kind]uint64{F32: uint64(CanaryF32)<<32 | uint64(CanaryF32), F64: 0x7FF4_BADB_ADBA_DBAD, I32: 0xCDCDCDCDCDCDCDCD} {
		if got := canary64(kind); got != want {
			t.Errorf("canary64(%v) = %#x, want %#x", kind, got, want)
		}
	}
}

// TestVerifyRows: the verify passes give each comparison enough blocks that
// no thread strides over more than verifyWordsPerThread words of the
// largest (a 64×1024 float32 tensor: 64 blocks), never fewer than 8, and
// never more than a grid's y extent allows.
func TestVerifyRows(t *testing.T) {
	for _, c := range []struct {
		words []int
		want  uint32
	}{
		{[]int{16, 16}, 8},
		{[]int{16, 64 * 1024, 300}, 64},
		{[]int{64*1024 + 1}, 65},
		{[]int{1 << 30}, 65535},
	} {
		var cs []comparison
		for _, w := range c.words {
			cs = append(cs, comparison{words: w})
		}
		got := verifyRows(cs)
		if got != c.want {
			t.Errorf("verifyRows(%v) = %d, want %d", c.words, got, c.want)
		}
		if most := slices.Max(c.words); got < 65535 && int(got)*256*verifyWordsPerThread < most {
			t.Errorf("verifyRows(%v) = %d: a thread strides over more than %d words", c.words, got, verifyWordsPerThread)
		}
	}
}
