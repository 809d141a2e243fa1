package falsify

import (
	"flag"
	"slices"
	"testing"

	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// twoDeviceSession is a session on two emulator devices, as on a host with
// two GPUs.
func twoDeviceSession(t *testing.T, devices string) *Session {
	t.Helper()
	o := opts
	o.Run.Backend, o.Run.Report = "emu", "off"
	d, err := suite.ParseDevices(devices)
	if err != nil {
		t.Fatal(err)
	}
	o.Run.Devices = d
	s, err := NewSession(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// A launcher whose summation order follows the device is killed by the
// parity of the run's devices, and skipped with one device.
func TestDeviceTunedChunkingNeedsTwoDevices(t *testing.T) {
	m, err := ParseMutant("device-tuned-chunking")
	if err != nil {
		t.Fatal(err)
	}
	if r := twoDeviceSession(t, "1").Run(m); r.Status != reports.MutantSkipped {
		t.Errorf("on one device: %s (%s), want skipped", r.Status, r.Reason)
	}
	r := twoDeviceSession(t, "2").Run(m)
	if !r.Killed() || r.KilledBy != properties.MultiDeviceParity || r.Device != 0 {
		t.Errorf("on two devices: %s by %s on device %d (%s), want killed by %s on device 0", r.Status, r.KilledBy, r.Device, r.Reason, properties.MultiDeviceParity)
	}
}

// Mutants spread over the devices, one child process per device, and each
// result names the device it ran on.
func TestMutantsSpreadOverDevices(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two child processes")
	}
	s := twoDeviceSession(t, "2")
	iso, w := opts.Isolate, opts.Workers
	opts.Isolate, opts.Workers = "always", 2
	defer func() { opts.Isolate, opts.Workers = iso, w }()
	var ms []Mutant
	for _, name := range []string{"atomic-dgamma-static", "single-row-launch", "gamma-by-head", "stale-theta-cache"} {
		m, err := ParseMutant(name)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	var devices []int
	for _, r := range runMutants(t, s, ms, func(Result) {}) {
		if !r.Killed() {
			t.Errorf("%s: %s (%s), want killed", r.Mutant, r.Status, r.Reason)
		}
		if !slices.Contains(devices, r.Device) {
			devices = append(devices, r.Device)
		}
	}
	slices.Sort(devices)
	if !slices.Equal(devices, []int{0, 1}) {
		t.Errorf("mutants ran on devices %v, want both 0 and 1", devices)
	}
}

// A child runs its mutants on the session's devices, not on those the
// process's flags name: the GPU nightly gives the test binary
// -ptxprop.backend=gpu, and a two-emulator-device session's children must
// still open emulator devices (they opened the GPU, or on a host without
// one skipped TestChild, and every mutant came back "died (<nil>): PASS").
func TestChildKeepsSessionBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	s := twoDeviceSession(t, "2")
	f := flag.Lookup("ptxprop.backend")
	old, oldBackend := f.Value.String(), opts.Run.Backend
	if err := flag.Set("ptxprop.backend", "gpu"); err != nil { // as scripts/gpu-nightly.sh's falsify stage
		t.Fatal(err)
	}
	iso, w := opts.Isolate, opts.Workers
	opts.Isolate, opts.Workers = "always", 1
	defer func() {
		flag.Set("ptxprop.backend", old)
		opts.Run.Backend, opts.Isolate, opts.Workers = oldBackend, iso, w
	}()
	m, err := ParseMutant("single-row-launch")
	if err != nil {
		t.Fatal(err)
	}
	r := runMutants(t, s, []Mutant{m}, func(Result) {})[0]
	if !r.Killed() || r.Device != 0 {
		t.Errorf("%s: %s on device %d (%s), want killed on emulator device 0", r.Mutant, r.Status, r.Device, r.Reason)
	}
	args := childArgs(s, "0,1")
	if i := slices.Index(args, "-ptxprop.backend=emu"); i < 0 || i < slices.Index(args, "-ptxprop.backend=gpu") {
		t.Errorf("child arguments %q: want -ptxprop.backend=emu after the process's -ptxprop.backend=gpu", args)
	}
}
