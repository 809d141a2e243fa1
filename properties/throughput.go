package properties

import (
	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/properties/gen"
)

// FixedShapeValueCheck runs value checks of impl at one shape: random data
// and ε, the forward on the device, the oracle comparison.
func FixedShapeValueCheck(t TB, impl RMSNormForwarder, rows, hidden int) {
	t.Helper()
	dev := deviceFor(t, Throughput)
	check(t, Throughput, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := rmsCase{rows: rows, hidden: hidden, eps: gen.Eps().Draw(rt, "eps"),
			x: values(rt, gen.Limits{}, "x", rows, hidden, gen.Normal), gamma: gen.Gamma(rt, "gamma", hidden)}
		o.Context(hidden, "%v", c)
		checkRMSForward(o, dev, impl, c)
	})
}

// FixedShapeGradientCheck runs gradient checks of impl at one shape: the
// backward on the device against the analytic gradient and a finite
// difference along a random direction.
func FixedShapeGradientCheck(t TB, impl RMSNormBackwarder, rows, hidden int) {
	t.Helper()
	dev := deviceFor(t, Throughput)
	lim := gen.Limits{MaxRows: rows, MaxHidden: hidden}
	check(t, Throughput, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawBwdCaseAt(rt, lim, rows, hidden)
		o.Context(hidden, "%v", c.rmsCase)
		dx, _ := checkRMSBackward(o, dev, impl, c)
		checkDirectional(rt, o, c, dx)
	})
}
