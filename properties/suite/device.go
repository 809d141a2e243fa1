package suite

import (
	"fmt"
	"os"

	"github.com/ptxprop/ptxprop/cudart"
	_ "github.com/ptxprop/ptxprop/cudart/backends" // every backend -ptxprop.backend can name
	"github.com/ptxprop/ptxprop/cudart/emu"
)

// OpenDevice opens the device c names (Backend, EmuAdversarial, Watchdog).
// It is the one place a run opens its device; note, when not empty, is a
// line worth showing the user (a GPU the binary cannot use).
func OpenDevice(c Config) (dev cudart.Device, note string, err error) {
	name := c.Backend
	if name == "" {
		name = "auto"
	}
	if name == "auto" && !cudart.Registered("gpu") && gpuVisible() {
		note = "ptxprop: a GPU is visible but this binary was built without -tags cuda; using the PTX emulator (set GOFLAGS=-tags=cuda to test on the GPU)"
	}
	opts := cudart.DefaultOptions()
	if c.Watchdog > 0 {
		opts.Watchdog = c.Watchdog
	}
	var eo emu.Options
	if name == "emu-checked" { // the emulator, checked as a GPU is (make test-checked)
		name, eo.DeviceChecks = "emu", true
	}
	if c.EmuAdversarial != 0 {
		if name == "gpu" {
			return nil, note, fmt.Errorf("-ptxprop.emu-adversarial needs the emulator, not backend %q", name)
		}
		eo.Config.Approx, eo.Config.Seed = emu.ApproxAdversarial, c.EmuAdversarial
	}
	if name != "gpu" && eo != (emu.Options{}) {
		opts.Backend = eo // on auto, used only if the emulator is picked
	}
	dev, err = cudart.Open(name, opts)
	if err != nil {
		return nil, note, err
	}
	if c.EmuAdversarial != 0 && dev.Info().Backend != "emu" {
		dev.Close()
		return nil, note, fmt.Errorf("-ptxprop.emu-adversarial needs the emulator, not backend %q", dev.Info().Backend)
	}
	return dev, note, nil
}

// gpuVisible reports whether an NVIDIA device node exists.
func gpuVisible() bool {
	_, err := os.Stat("/dev/nvidia0")
	return err == nil
}
