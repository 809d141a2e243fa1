package properties

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
)

// BackendFlag selects the device backend: "gpu", "emu", "emu-checked" (the
// emulator seen as a GPU: buffers checked after each launch by the verify
// kernel, as on a GPU, instead of trapped as they are touched), or "auto"
// (the GPU when the binary was built with -tags cuda and a device is
// present, the emulator otherwise).
var BackendFlag = flag.String("backend", "auto", "device backend: gpu, emu, emu-checked or auto")

// AdversarialFlag makes the emulator return, for every approximate
// instruction (RoPE's ex2.approx), a value anywhere inside the PTX ISA's
// documented error bound, chosen from the seed — so a discharged prediction
// holds on any conforming GPU, not only on the one at hand.
var AdversarialFlag = flag.Int64("emu-adversarial", 0, "emulator: adversarial approximate instructions with this seed (0: off)")

var (
	devOnce sync.Once
	dev     cudart.Device
	devErr  error
)

// Device returns the process-wide device every contract launches on, opened
// on first use from -backend. It is safe for concurrent use.
func Device() (cudart.Device, error) {
	devOnce.Do(func() {
		name := *BackendFlag
		if name == "auto" && !cudart.Registered("gpu") && gpuVisible() {
			fmt.Fprintln(os.Stderr, "ptxprop: a GPU is visible but this binary was built without -tags cuda; using the PTX emulator (set GOFLAGS=-tags=cuda to test on the GPU)")
		}
		opts := cudart.DefaultOptions()
		var eo emu.Options
		if name == "emu-checked" { // the emulator, checked as a GPU is (make test-checked)
			name, eo.DeviceChecks = "emu", true
		}
		if *AdversarialFlag != 0 {
			eo.Config.Approx, eo.Config.Seed = emu.ApproxAdversarial, *AdversarialFlag
		}
		if name != "gpu" && eo != (emu.Options{}) {
			opts.Backend = eo // on "auto", used only if the emulator is picked
		}
		dev, devErr = cudart.Open(name, opts)
	})
	return dev, devErr
}

// DeviceFor returns the device for t, or skips prediction id with the reason
// when no backend can run it.
func DeviceFor(t TB, id string) cudart.Device {
	t.Helper()
	d, err := Device()
	if err != nil {
		Skip(t, id, fmt.Sprintf("no device backend: %v", err))
		return nil
	}
	return d
}

// Emulated reports whether the process-wide device is the PTX emulator; the
// shape limits of generators depend on it.
func Emulated() bool {
	d, err := Device()
	return err == nil && d.Info().Backend == "emu"
}

// ShapeLimits are the generator limits for the current backend.
func ShapeLimits() Limits {
	lim := GPULimits
	if Emulated() {
		lim = EmuLimits
	}
	if *MaxElementsFlag > 0 {
		lim = lim.Cap(*MaxElementsFlag)
	}
	return lim
}

// gpuVisible reports whether an NVIDIA device node exists.
func gpuVisible() bool {
	_, err := os.Stat("/dev/nvidia0")
	return err == nil
}

// CloseDevice releases the process-wide device.
func CloseDevice() error {
	if dev != nil {
		return dev.Close()
	}
	return nil
}

// DefaultChecks sets rapid's check count to n unless -rapid.checks or
// RAPID_CHECKS was given: the suite's predictions need more than rapid's
// default 100 to have teeth. Call it after flag.Parse.
func DefaultChecks(n int) {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if _, env := os.LookupEnv("RAPID_CHECKS"); set || env {
		return
	}
	flag.Set("rapid.checks", fmt.Sprint(n))
}

// WatchdogLimit bounds how long a launcher may take before a contract calls
// it a liveness failure (a deadlock, or a kernel that never returns).
var WatchdogLimit = 2 * time.Minute
