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
		for i := 1; i < len(devs); i++ {
			got, err := p.run(devs[i])
			what := deviceName(devs, i) + " vs " + deviceName(devs, 0)
			o.Check(deviceName(devs, i), err)
			if p.approxTol == nil {
				o.Identical(what, got, ref)
				continue
			}
			o.Within(what, got, gen.F64(ref), p.approxTol())
		}
	})
}

// deviceName names devs[i] in a failure: its backend and ordinal.
func deviceName(devs []cudart.Device, i int) string {
	info := devs[i].Info()
	return fmt.Sprintf("%s device %d", info.Backend, info.Ordinal)
}
