package properties_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// offDevice is a device whose float results come back with their first
// element changed: a second device that disagrees with the first.
type offDevice struct{ cudart.Device }

func (d offDevice) Read(dst any, src cudart.Buffer) error {
	err := d.Device.Read(dst, src)
	if f, ok := dst.([]float32); ok && len(f) > 0 {
		f[0] = 2*f[0] + 1
	}
	return err
}

// MULTI-DEVICE-PARITY-001 has teeth: a second device that computes other
// bits falsifies it, and two that agree discharge it.
//
// It runs in parallel with the contract tests, on small tensors: its checks
// scale with -ptxprop.checks, and a test that is not parallel holds back
// every parallel one, so a GPU run would wait for this emulator-only test.
func TestDeviceParityCatchesADisagreeingDevice(t *testing.T) {
	t.Parallel()
	// The run's context: its checks stop, as the contracts' do, when the
	// run is interrupted (suite.T skips the test if it already was).
	stop := suite.T(t).Config().Context
	open := func() cudart.Device {
		d := cudart.New(emu.New(emu.Config{}), cudart.DefaultOptions())
		t.Cleanup(func() { d.Close() })
		return d
	}
	impls := properties.Impls{kernels.RMSNormFwd, kernels.LayerNormFwd}
	for name, c := range map[string]struct {
		second cudart.Device
		want   outcome.Status
	}{
		"agreeing":    {open(), outcome.Discharged},
		"disagreeing": {offDevice{open()}, outcome.Falsified},
	} {
		t.Run(name, func(t *testing.T) {
			first := open()
			cfg := properties.Config{Device: first, Devices: []cudart.Device{first, c.second}, MaxElements: 64,
				Recorder: &outcome.Recorder{}, Context: stop, Loops: suite.Checks(60)}
			q := properties.RunQuiet(t.Name(), cfg, func(tb properties.TB) { properties.DeviceParityContract(tb, impls) })
			o := q.Outcomes()[properties.MultiDeviceParity]
			// The disagreeing device fails on purpose: the fail file rapid
			// wrote for it is no finding, and left behind it would be
			// replayed by every later run (TestMain checks none is left).
			removeFailFile(o.Failfile)
			if stop.Err() != nil {
				t.Skipf("the run ended: %v", context.Cause(stop))
			}
			if o.Status != c.want || (c.want == outcome.Falsified && !strings.Contains(o.Reason, "vs")) {
				t.Fatalf("outcome %s (%s), want %s", o.Status, o.Reason, c.want)
			}
		})
	}
}

// removeFailFile removes the rapid fail file path (nothing when "") and the
// folders above it, up to testdata/rapid, that it leaves empty.
func removeFailFile(path string) {
	if path == "" {
		return
	}
	os.Remove(path)
	for d := filepath.Dir(path); d != "." && filepath.Base(d) != "testdata"; d = filepath.Dir(d) {
		if os.Remove(d) != nil { // not empty: other fail files, findings of their own
			return
		}
	}
}
