// Package ptxas runs the CUDA toolkit's PTX assembler over hand-written
// PTX, for the tests that check it assembles without a GPU.
package ptxas

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Assemble assembles text, saved as name.ptx, for arch (such as "sm_80")
// with the ptxas on PATH, and returns ptxas's combined output and error.
// It skips t when there is no ptxas.
func Assemble(t testing.TB, arch, name, text string) ([]byte, error) {
	t.Helper()
	path, err := exec.LookPath("ptxas")
	if err != nil {
		t.Skip("ptxas not on PATH")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, name+".ptx")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return exec.Command(path, "-arch="+arch, "-o", filepath.Join(dir, name+".cubin"), f).CombinedOutput()
}
