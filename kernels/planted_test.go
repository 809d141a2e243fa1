package kernels

import (
	_ "embed"
	"errors"
	"os"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// plantedPTX holds two kernels with planted bugs (testdata/planted.ptx):
// an out-of-bounds write and a shared-memory race.
//
//go:embed testdata/planted.ptx
var plantedPTX []byte

// plantedEnv asks TestSanitizerPlanted to launch the planted kernels on a
// GPU, for compute-sanitizer to find (scripts/gpu-nightly.sh sets it in its
// sanitizer stage, and only there).
const plantedEnv = "PTXPROP_SANITIZER_PLANTED"

// plantedElems is the planted write's buffer: 1024 float32, 4096 bytes,
// exactly one allocation of the device's smallest size class when there
// are no guard bands, so that the write one element past it leaves the
// allocation compute-sanitizer's memcheck knows.
const plantedElems = 1024

// TestSanitizerPlanted launches the planted kernels. On the emulator it
// always runs and checks that the emulator sees both bugs (so the PTX holds
// them); on a GPU, where they go unseen, it runs only under
// PTXPROP_SANITIZER_PLANTED=1 and leaves the verdict to compute-sanitizer.
func TestSanitizerPlanted(t *testing.T) {
	dev := openDevice(t)
	gpu := !onEmulator(dev)
	if gpu && os.Getenv(plantedEnv) != "1" {
		t.Skipf("launches kernels with planted bugs: only for the sanitizer pass (%s=1)", plantedEnv)
	}
	dev.SetOptions(cudart.Options{Watchdog: cudart.DefaultWatchdog}) // no guard bands: the allocation ends where the buffer does
	m, err := dev.Load("planted", plantedPTX)
	if err != nil {
		t.Fatal(err)
	}
	// The race first: on a GPU the out-of-bounds write may leave the
	// context unusable.
	t.Run("smem_race", func(t *testing.T) {
		out, err := dev.Alloc(cudart.F32, 64)
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Free(out)
		err = dev.Launch(m, "planted_smem_race", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(64)}, cudart.Out(out))
		switch {
		case !gpu && !errors.Is(err, cudart.ErrRace):
			t.Errorf("the emulator did not see the planted race: %v", err)
		case gpu:
			t.Logf("launch: %v (compute-sanitizer's racecheck judges)", err)
		}
	})
	t.Run("oob_write", func(t *testing.T) {
		out, err := dev.Alloc(cudart.F32, plantedElems)
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Free(out)
		err = dev.Launch(m, "planted_oob_write", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(32)}, cudart.Out(out), cudart.ScalarU32(plantedElems))
		switch {
		case !gpu && !errors.Is(err, cudart.ErrOutOfBounds):
			t.Errorf("the emulator did not see the planted out-of-bounds write: %v", err)
		case gpu:
			t.Logf("launch: %v (compute-sanitizer's memcheck judges)", err)
		}
	})
}
