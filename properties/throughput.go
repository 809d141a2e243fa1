package properties

import (
	"pgregory.net/rapid"
)

// Throughput is the prediction the fixed-shape benchmarks record into; it is
// registered so their checks are reported like any other.
const Throughput = "BENCH-THROUGHPUT"

func init() {
	Register(Prediction{ID: Throughput, Title: "fixed-shape check throughput (benchmark)",
		Statement: "RMSNorm forward value checks and backward gradient checks at fixed shapes pass (run by BenchmarkThroughput only)",
		Kernels:   []string{"rmsnorm_fwd_rms", "rmsnorm_bwd_chunk"}, Tolerance: rmsFwdTolNote, Device: true})
}

// FixedShapeValueCheck runs value checks of impl at one shape: random data
// and ε, the forward on the device, the oracle comparison.
func FixedShapeValueCheck(t TB, impl RMSNormForwarder, rows, hidden int) {
	t.Helper()
	dev := DeviceFor(t, Throughput)
	Check(t, Throughput, func(rt *rapid.T, o *Obs) {
		c := rmsCase{rows: rows, hidden: hidden, eps: Eps().Draw(rt, "eps"),
			x: Values(rt, "x", rows, hidden, Normal), gamma: Gamma(rt, "gamma", hidden)}
		o.Context(hidden, "%v", c)
		checkRMSForward(o, dev, impl, c)
	})
}

// FixedShapeGradientCheck runs gradient checks of impl at one shape: the
// backward on the device against the analytic gradient and a finite
// difference along a random direction.
func FixedShapeGradientCheck(t TB, impl RMSNormBackwarder, rows, hidden int) {
	t.Helper()
	dev := DeviceFor(t, Throughput)
	lim := Limits{MaxRows: rows, MaxHidden: hidden}
	Check(t, Throughput, func(rt *rapid.T, o *Obs) {
		c := drawBwdCaseAt(rt, lim, rows, hidden)
		o.Context(hidden, "%v", c.rmsCase)
		dx, _ := checkRMSBackward(o, dev, impl, c)
		checkDirectional(rt, o, c, dx)
	})
}
