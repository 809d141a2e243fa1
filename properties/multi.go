package properties

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/properties/gen"
)

// DeviceParityContract checks MULTI-DEVICE-PARITY-001: every family of im
// on each device of the run (Config.Devices), same inputs, compared with
// the first device. It is skipped (with the reason) when the run has fewer
// than two devices.
func DeviceParityContract(t TB, im Impls) {
	t.Helper()
	if deviceFor(t, MultiDeviceParity) == nil {
		return
	}
	devs := t.Config().Devices
	if len(devs) < 2 {
		skip(t, MultiDeviceParity, fmt.Sprintf("needs two devices (this run has %d; -ptxprop.devices selects them)", max(len(devs), 1)))
		return
	}
	lim := t.Config().Limits()
	check(t, MultiDeviceParity, ImplKernels(im), func(rt *rapid.T, o *Obs) {
		p := drawProblem(rt, im, lim)
		o.Context(p.outCols, "%v", p)
		ref, err := p.run(devs[0])
		o.Check(deviceName(devs, 0), err)
		o.finiteOutputs(p, deviceName(devs, 0), ref, nil)
		var tol []float64
		if p.approxTol != nil {
			tol = p.approxTol()
		}
		for i := 1; i < len(devs); i++ {
			got, err := p.run(devs[i])
			what := deviceName(devs, i) + " vs " + deviceName(devs, 0)
			o.Check(deviceName(devs, i), err)
			cls := classified(func() parityClass { return classifyDevices(p, devs, i, ref, got) })
			if parityDiffers(got, ref, tol) {
				what += " (" + cls().class + ")"
			}
			o.note = func() string { return "; " + cls().detail }
			if tol == nil {
				o.Identical(what, got, ref)
				continue
			}
			o.Within(what, got, gen.F64(ref), tol)
		}
	})
}

// classifyDevices says why devs[i]'s outputs got disagree with the first
// device's ref for p: a device whose own runs of the launch differ is
// non-deterministic (the one that disagrees is tried first), not another
// device; else the two disagree for real, each repeating its own bits.
// The devices are the run's, shared with other contracts, so their
// schedules are left as they are.
func classifyDevices(p problem, devs []cudart.Device, i int, ref, got []float32) parityClass {
	for _, c := range []struct {
		at    int
		first []float32
	}{{i, got}, {0, ref}} {
		name := deviceName(devs, c.at)
		run := func(k int) string { return fmt.Sprintf("run %d", k+1) }
		if d := rerunDiffers(p, devs[c.at], c.first, nil, run); d != "" {
			return parityClass{name + " " + parityNondeterministic,
				name + " is non-deterministic, not another device: of the same launch on the same inputs, its " + d}
		}
	}
	return parityClass{parityReal, fmt.Sprintf("a real disagreement: %s and %s each repeat their own bits over runs 1 to %d",
		deviceName(devs, i), deviceName(devs, 0), parityReruns+1)}
}

// deviceName names devs[i] in a failure: its backend and ordinal.
func deviceName(devs []cudart.Device, i int) string {
	info := devs[i].Info()
	return fmt.Sprintf("%s device %d", info.Backend, info.Ordinal)
}
