package properties_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/gen"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// cpuForward is a forward "kernel" that runs on the CPU and ignores the
// device: the naive float32 evaluation, which the serial-order bound covers.
// It lets BenchmarkHarness measure what a check costs outside the kernel.
type cpuForward struct{}

func (cpuForward) RMSNormForward(_ cudart.Device, a *op.RMSNormForwardArgs) error {
	oracle.RMSNormForward32Naive(a.Y, a.RMS, a.X, a.Gamma, a.Rows, a.Hidden, a.Eps)
	return nil
}

// cpuBackward is the backward from a stored rms in float32, serial order
// (the bound's V2 with ri = 1/rms).
type cpuBackward struct{}

func (cpuBackward) RMSNormBackward(_ cudart.Device, a *op.RMSNormBackwardArgs) error {
	n := a.Hidden
	for i := range a.DGamma {
		a.DGamma[i] = 0
	}
	for r := 0; r < a.Rows; r++ {
		x, dy, dx := a.X[r*n:(r+1)*n], a.DY[r*n:(r+1)*n], a.DX[r*n:(r+1)*n]
		ri := 1 / a.RMS[r]
		var s float32
		for j, v := range x {
			s += a.Gamma[j] * dy[j] * v
		}
		c := s / float32(n)
		ri2 := ri * ri
		for j, v := range x {
			dx[j] = ri * (a.Gamma[j]*dy[j] - v*ri2*c)
			a.DGamma[j] += dy[j] * v * ri
		}
	}
	return nil
}

// BenchmarkHarness measures the CPU work of one check without a device: the
// drawing of the case, the float64 oracle and its bound, the element-wise
// comparison, the naive float32 yardstick and, for gradient checks, the
// finite differences of the float64 forward. The "kernel" is a float32 CPU
// evaluation (fake/... measures it alone, to subtract). Compare with
// BenchmarkThroughput, which adds the device.
func BenchmarkHarness(b *testing.B) {
	for _, s := range [][2]int{{16, 256}, {64, 1024}} {
		rows, hidden := s[0], s[1]
		b.Run(fmt.Sprintf("value/%dx%d", rows, hidden), func(b *testing.B) {
			runChecks(b, func(t properties.TB) { properties.FixedShapeValueCheck(t, cpuForward{}, rows, hidden) })
		})
		b.Run(fmt.Sprintf("gradient/%dx%d", rows, hidden), func(b *testing.B) {
			runChecks(b, func(t properties.TB) { properties.FixedShapeGradientCheck(t, cpuBackward{}, rows, hidden) })
		})
		b.Run(fmt.Sprintf("fake/value/%dx%d", rows, hidden), func(b *testing.B) {
			x := gen.MakeTensor(gen.Normal, 0, 1, rows, hidden).Data
			a := &op.RMSNormForwardArgs{Rows: rows, Hidden: hidden, Eps: 1e-5, X: x,
				Gamma: gen.MakeTensor(gen.Normal, 0, 2, 1, hidden).Data,
				Y:     make([]float32, rows*hidden), RMS: make([]float32, rows)}
			for b.Loop() {
				cpuForward{}.RMSNormForward(nil, a)
			}
		})
		b.Run(fmt.Sprintf("fake/gradient/%dx%d", rows, hidden), func(b *testing.B) {
			a := &op.RMSNormBackwardArgs{Rows: rows, Hidden: hidden,
				X:     gen.MakeTensor(gen.Normal, 0, 1, rows, hidden).Data,
				Gamma: gen.MakeTensor(gen.Normal, 0, 2, 1, hidden).Data,
				RMS:   make([]float32, rows),
				DY:    gen.MakeTensor(gen.Normal, 0, 3, rows, hidden).Data,
				DX:    make([]float32, rows*hidden), DGamma: make([]float32, hidden)}
			for i := range a.RMS {
				a.RMS[i] = float32(math.Sqrt(float64(hidden)))
			}
			for b.Loop() {
				cpuBackward{}.RMSNormBackward(nil, a)
			}
		})
	}
}

// runChecks runs b.N checks of one contract in one rapid run and reports
// the CPU time per check in ms.
func runChecks(b *testing.B, f func(properties.TB)) {
	tb := suite.T(b)
	restore := suite.SetRapid(suite.Rapid{Checks: 2})
	f(tb) // warm up
	restore()
	defer suite.SetRapid(suite.Rapid{Checks: b.N})()
	b.ReportAllocs()
	b.ResetTimer()
	f(tb)
	b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/check")
}
