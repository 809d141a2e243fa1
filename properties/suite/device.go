package suite

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/ptxprop/ptxprop/cudart"
	_ "github.com/ptxprop/ptxprop/cudart/backends" // every backend -ptxprop.backend can name
	"github.com/ptxprop/ptxprop/cudart/emu"
)

// Devices selects the devices of a run (-ptxprop.devices). The zero value
// is every visible GPU (one emulator device on the emulator); Count picks
// the first Count ordinals; Ordinals picks those. Ordinals are the
// backend's: on a GPU the driver numbers the devices CUDA_VISIBLE_DEVICES
// leaves visible, so ordinal 0 is the first device that variable lists.
type Devices struct {
	Count    int   // the first Count devices (0: see Ordinals)
	Ordinals []int // these devices, in this order (nil and Count 0: all)
}

// All reports whether d selects every visible device.
func (d Devices) All() bool { return d.Count == 0 && len(d.Ordinals) == 0 }

func (d Devices) String() string {
	switch {
	case d.Count > 0:
		return strconv.Itoa(d.Count)
	case len(d.Ordinals) > 0:
		s := make([]string, len(d.Ordinals))
		for i, o := range d.Ordinals {
			s[i] = strconv.Itoa(o)
		}
		if len(s) == 1 {
			return s[0] + "-" + s[0]
		}
		return strings.Join(s, ",")
	}
	return "all"
}

// ParseDevices reads a -ptxprop.devices value: "all"; a count N (the first
// N devices); or ordinals and ranges separated by commas ("0,2", "1-3",
// "1-1" for device 1 alone: a lone number is a count).
func ParseDevices(v string) (Devices, error) {
	v = strings.TrimSpace(v)
	if v == "all" || v == "" {
		return Devices{}, nil
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 1 {
			return Devices{}, fmt.Errorf("a count of devices must be at least 1")
		}
		return Devices{Count: n}, nil
	}
	var d Devices
	for _, part := range strings.Split(v, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return Devices{}, fmt.Errorf("%q is not a device ordinal (want all, a count, or ordinals like 0,2 or 1-3)", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return Devices{}, fmt.Errorf("%q is not a range of ordinals", part)
			}
		}
		for o := a; o <= b; o++ {
			if slices.Contains(d.Ordinals, o) {
				return Devices{}, fmt.Errorf("device %d selected twice", o)
			}
			d.Ordinals = append(d.Ordinals, o)
		}
	}
	return d, nil
}

// OpenDevice opens the first device c selects (Backend, Devices,
// EmuAdversarial, Watchdog). note, when not empty, is a line worth showing
// the user (a GPU the binary cannot use).
func OpenDevice(c Config) (dev cudart.Device, note string, err error) {
	first := 0
	if len(c.Devices.Ordinals) > 0 {
		first = c.Devices.Ordinals[0]
	}
	return openOrdinal(c, c.Backend, first)
}

// OpenDevices opens every device c selects, one context each, in the order
// selected; on an error it closes those it opened. It is the one place a
// run opens its devices. With Backend auto the first device decides the
// backend of all of them.
func OpenDevices(c Config) (devs []cudart.Device, note string, err error) {
	fail := func(err error) ([]cudart.Device, string, error) {
		for _, d := range devs {
			d.Close()
		}
		return nil, note, err
	}
	ordinals := c.Devices.Ordinals
	if c.Devices.Count > 0 {
		ordinals = make([]int, c.Devices.Count)
		for i := range ordinals {
			ordinals[i] = i
		}
	}
	if len(ordinals) == 0 {
		ordinals = []int{0}
	}
	first, note, err := openOrdinal(c, c.Backend, ordinals[0])
	if err != nil {
		return nil, note, err
	}
	devs = append(devs, first)
	backend := first.Info().Backend
	if c.Backend == "emu-checked" {
		backend = c.Backend
	}
	if (c.Backend == "" || c.Backend == "auto") && backend == "emu" && cudart.Registered("gpu") && !c.Devices.All() {
		note = strings.TrimSpace(note + "\n" + fmt.Sprintf("ptxprop: no usable GPU %d: -ptxprop.devices=%v selects emulator devices (-ptxprop.backend=gpu insists on GPUs)", ordinals[0], c.Devices))
	}
	if c.Devices.All() {
		if backend != "gpu" {
			return devs, note, nil // the emulator has no count of its own: one device
		}
		devs, err = openRest(devs, func(o int) (cudart.Device, error) {
			d, _, err := openOrdinal(c, backend, o)
			return d, err
		})
		if err != nil {
			return devs, note, err
		}
	} else {
		for _, o := range ordinals[1:] {
			d, _, err := openOrdinal(c, backend, o)
			if err != nil {
				return fail(fmt.Errorf("opening device %d of -ptxprop.devices=%v: %w", o, c.Devices, err))
			}
			devs = append(devs, d)
		}
	}
	if backend != "gpu" || c.Contexts <= 1 {
		return devs, note, nil
	}
	// More contexts on each GPU: each is a device of its own, whose
	// launches and checks run beside the other contexts'.
	gpus := len(devs)
	for k := 1; k < c.Contexts; k++ {
		for _, d := range devs[:gpus] {
			o := d.Options().Ordinal
			e, _, err := openOrdinal(c, backend, o)
			if err != nil {
				return fail(fmt.Errorf("opening context %d of %d on GPU %d (-ptxprop.contexts=%d): %w", k+1, c.Contexts, o, c.Contexts, err))
			}
			devs = append(devs, e)
		}
	}
	return devs, note, nil
}

// openRest opens devices len(devs), len(devs)+1, … with open until one
// is absent (ErrNoDevice: past the last visible GPU) and returns them all;
// another error closes every device, those of devs included, and is
// returned.
func openRest(devs []cudart.Device, open func(ordinal int) (cudart.Device, error)) ([]cudart.Device, error) {
	for o := len(devs); ; o++ {
		d, err := open(o)
		if errors.Is(err, cudart.ErrNoDevice) {
			return devs, nil
		}
		if err != nil {
			for _, d := range devs {
				d.Close()
			}
			return nil, fmt.Errorf("opening GPU %d of all visible ones: %w (-ptxprop.devices chooses others)", o, err)
		}
		devs = append(devs, d)
	}
}

// openOrdinal opens device ordinal of backend name as c configures it.
func openOrdinal(c Config, name string, ordinal int) (dev cudart.Device, note string, err error) {
	if name == "" {
		name = "auto"
	}
	if name == "auto" && !cudart.Registered("gpu") && gpuVisible() {
		note = "ptxprop: a GPU is visible but this binary was built without -tags cuda; using the PTX emulator (set GOFLAGS=-tags=cuda to test on the GPU)"
	}
	opts := cudart.DefaultOptions()
	opts.Ordinal = ordinal
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
		eo.Config.Approx, eo.Config.ApproxSeed = emu.ApproxAdversarial, c.EmuAdversarial
	}
	if c.EmuSchedule != 0 {
		if name == "gpu" {
			return nil, note, fmt.Errorf("-ptxprop.emu-schedule needs the emulator, not backend %q", name)
		}
		eo.Config.Seed = c.EmuSchedule
	}
	if c.cov != nil {
		eo.Config.Coverage = c.cov // every emulator of the run adds to one Coverage
	}
	if name != "gpu" && eo != (emu.Options{}) {
		opts.Backend = eo // on auto, used only if the emulator is picked
	}
	dev, err = cudart.Open(name, opts)
	if err != nil {
		return nil, note, err
	}
	if c.Watchdog == 0 {
		o := dev.Options()
		o.Watchdog = cudart.WatchdogFor(dev)
		dev.SetOptions(o)
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
