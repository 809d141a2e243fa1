package cudart

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestVerifyPTXAssembles checks ptxprop_verify with the toolkit's ptxas when
// one is on PATH (the emulator runs it in cudart/emu's TestDeviceChecks).
func TestVerifyPTXAssembles(t *testing.T) {
	ptxas, err := exec.LookPath("ptxas")
	if err != nil {
		t.Skip("ptxas not on PATH")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "verify.ptx")
	if err := os.WriteFile(f, []byte(verifyPTX), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(ptxas, "-arch=sm_70", "-o", filepath.Join(dir, "verify.cubin"), f).CombinedOutput(); err != nil {
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
