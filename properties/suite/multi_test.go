package suite_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

func TestParseDevices(t *testing.T) {
	for v, want := range map[string]suite.Devices{
		"all": {}, "": {}, "2": {Count: 2}, "1": {Count: 1},
		"0,2": {Ordinals: []int{0, 2}}, "1-3": {Ordinals: []int{1, 2, 3}}, "1-1": {Ordinals: []int{1}},
		"3, 0-1": {Ordinals: []int{3, 0, 1}},
	} {
		got, err := suite.ParseDevices(v)
		if err != nil || got.Count != want.Count || !slices.Equal(got.Ordinals, want.Ordinals) {
			t.Errorf("ParseDevices(%q) = %+v, %v; want %+v", v, got, err, want)
		}
		if err == nil {
			if back, err := suite.ParseDevices(got.String()); err != nil || back.Count != got.Count || !slices.Equal(back.Ordinals, got.Ordinals) {
				t.Errorf("ParseDevices(%q).String() = %q reads back as %+v, %v", v, got.String(), back, err)
			}
		}
	}
	for _, v := range []string{"0", "-1", "gpu0", "2-1", "0,0", "0-2,1", "1,"} {
		if d, err := suite.ParseDevices(v); err == nil {
			t.Errorf("ParseDevices(%q) = %+v, want an error", v, d)
		}
	}
}

// multiJobs are a few contracts over our kernels and the device parity.
func multiJobs() []suite.Job {
	return []suite.Job{
		{Name: "TestRMSNormForward", Run: func(t properties.TB) { properties.RMSNormForwardContract(t, kernels.RMSNormFwd) }},
		{Name: "TestLayerNormForward", Run: func(t properties.TB) { properties.LayerNormForwardContract(t, kernels.LayerNormFwd) }},
		{Name: "TestPerHeadRMSNorm", Run: func(t properties.TB) { properties.PerHeadRMSNormContract(t, kernels.PerHeadRMSNormFwd) }},
		{Name: "TestDeviceParity", Run: func(t properties.TB) {
			properties.DeviceParityContract(t, properties.Impls{kernels.RMSNormFwd, kernels.RoPEFwdBatched, kernels.RMSNormBwdChunk})
		}},
	}
}

func multiConfig(t *testing.T, devices string) suite.Config {
	c := testConfig(t)
	c.MaxElements = 1024
	d, err := suite.ParseDevices(devices)
	if err != nil {
		t.Fatal(err)
	}
	c.Devices = d
	return c
}

// Two emulator devices stand in for two GPUs: the contract runs spread
// over both, the report lists both and where each prediction ran, and the
// devices agree with each other.
func TestRunSpreadsOverTwoDevices(t *testing.T) {
	c := multiConfig(t, "2")
	if _, err := suite.Run(context.Background(), c, multiJobs()); err != nil {
		t.Fatal(err)
	}
	rep, err := reports.Read(c.Report) // validated: every prediction's devices are the run's
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Run.Devices) != 2 {
		t.Fatalf("run devices = %+v, want two", rep.Run.Devices)
	}
	for i, d := range rep.Run.Devices {
		if d.Ordinal != i || d.Backend != reports.BackendEmu || d.Name == "" || d.ContractRuns == 0 || d.Launches == 0 {
			t.Errorf("device %d = %+v, want emulator %d with contract runs and launches on it", i, d, i)
		}
	}
	var union []int
	for _, id := range []string{properties.RMSFwd, properties.LNForward, properties.QKNForward} {
		p := rep.Prediction(id)
		if p == nil || p.Status != reports.Discharged || len(p.Devices) != 1 {
			t.Errorf("%s = %+v, want discharged on one device", id, p)
			continue
		}
		union = append(union, p.Devices...)
	}
	if !slices.Contains(union, 0) || !slices.Contains(union, 1) {
		t.Errorf("the three single-device predictions ran on devices %v, want both 0 and 1", union)
	}
	p := rep.Prediction(properties.MultiDeviceParity)
	if p == nil || p.Status != reports.Discharged || p.Checks != ranChecks(c.Checks) || !slices.Equal(p.Devices, []int{0, 1}) {
		t.Errorf("%s = %+v, want discharged after %d checks on devices [0 1]", properties.MultiDeviceParity, p, ranChecks(c.Checks))
	}
}

// With one device the parity of devices is skipped, saying why, and the
// report lists the one device.
func TestRunOnOneDeviceSkipsDeviceParity(t *testing.T) {
	c := multiConfig(t, "all")
	rep, err := suite.Run(context.Background(), c, multiJobs()[3:])
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Prediction(properties.MultiDeviceParity)
	if p == nil || p.Status != reports.Skipped || !strings.Contains(p.Reason, "needs two devices") || len(p.Devices) != 0 {
		t.Errorf("%s = %+v, want skipped: needs two devices", properties.MultiDeviceParity, p)
	}
	if len(rep.Run.Devices) != 1 || rep.Run.Devices[0].Ordinal != 0 || rep.Run.Devices[0].Launches != 0 {
		t.Errorf("run devices = %+v, want emulator 0 alone, with no launch", rep.Run.Devices)
	}
}

// TestChildTwoDevices is the child run of TestMainSpreadsTestsOverDevices:
// parallel tests, each handing its *testing.T to contracts through T.
func TestChildTwoDevices(t *testing.T) {
	if os.Getenv(childEnv) != "TestChildTwoDevices" {
		t.Skip("run as a child by TestMainSpreadsTestsOverDevices")
	}
	for _, j := range multiJobs() {
		t.Run(j.Name, func(t *testing.T) {
			t.Parallel()
			j.Run(suite.T(t))
		})
	}
}

// Under Main (go test) too, with two emulator devices the tests spread over
// both and the report says where each prediction ran.
func TestMainSpreadsTestsOverDevices(t *testing.T) {
	cmd, out, report := childRun(t, "TestChildTwoDevices", "-ptxprop.devices=2", "-ptxprop.checks=10", "-ptxprop.max-elements=512")
	var log []string
	for out.Scan() {
		log = append(log, out.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, strings.Join(log, "\n"))
	}
	rep, err := reports.Read(report)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Run.Devices) != 2 || rep.Run.Devices[0].ContractRuns == 0 || rep.Run.Devices[1].ContractRuns == 0 {
		t.Errorf("run devices = %+v, want two, each with contract runs", rep.Run.Devices)
	}
	for _, id := range []string{properties.RMSFwd, properties.LNForward, properties.QKNForward} {
		if p := rep.Prediction(id); p == nil || p.Status != reports.Discharged || len(p.Devices) != 1 {
			t.Errorf("%s = %+v, want discharged on one device", id, p)
		}
	}
	if p := rep.Prediction(properties.MultiDeviceParity); p == nil || p.Status != reports.Discharged || !slices.Equal(p.Devices, []int{0, 1}) {
		t.Errorf("%s = %+v, want discharged on devices [0 1]", properties.MultiDeviceParity, p)
	}
}

// "all" opens GPUs until the driver has no more (ErrNoDevice); any other
// failure closes what was opened and is the run's error.
func TestOpenAllStopsAtTheLastDevice(t *testing.T) {
	var opened []cudart.Device
	open := func(fail error, n int) func(int) (cudart.Device, error) {
		return func(o int) (cudart.Device, error) {
			if o >= n {
				return nil, fail
			}
			opts := cudart.DefaultOptions()
			opts.Ordinal = o
			d, err := cudart.Open("emu", opts)
			opened = append(opened, d)
			return d, err
		}
	}
	first := func() []cudart.Device { d, _ := open(nil, 1)(0); return []cudart.Device{d} }
	devs, err := suite.OpenRest(first(), open(cudart.Errorf(cudart.ErrNoDevice, "no device 3 (3 present)"), 3))
	if err != nil || len(devs) != 3 || devs[2].Info().Ordinal != 2 {
		t.Fatalf("OpenRest = %d devices, %v; want ordinals 0, 1, 2", len(devs), err)
	}
	for _, d := range devs {
		d.Close()
	}
	opened = nil
	devs, err = suite.OpenRest(first(), open(errors.New("cuCtxCreate: out of memory"), 2))
	if err == nil || devs != nil || !strings.Contains(err.Error(), "GPU 2") {
		t.Fatalf("OpenRest with a failing GPU 2 = %v, %v; want an error naming GPU 2", devs, err)
	}
	for _, d := range opened {
		if _, err := d.Alloc(cudart.F32, 1); err == nil {
			t.Errorf("device %d left open after the failure", d.Info().Ordinal)
		}
	}
}
