package properties_test

import (
	"flag"
	"fmt"
	"testing"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
)

// BenchmarkThroughput measures checks per second at fixed shapes, the figure
// to set beside scripts/torch_baseline.py on the same machine: a value check
// is one RMSNorm forward on the device compared element by element with the
// float64 oracle under the derived bound; a gradient check is one batched
// backward compared with the analytic oracle and, along a random direction,
// with Richardson finite differences of the float64 forward.
func BenchmarkThroughput(b *testing.B) {
	for _, s := range [][2]int{{16, 256}, {64, 1024}} {
		rows, hidden := s[0], s[1]
		b.Run(fmt.Sprintf("value/%dx%d", rows, hidden), func(b *testing.B) {
			run(b, func(t properties.TB) { properties.FixedShapeValueCheck(t, kernels.RMSNormFwd, rows, hidden) })
		})
		b.Run(fmt.Sprintf("gradient/%dx%d", rows, hidden), func(b *testing.B) {
			run(b, func(t properties.TB) { properties.FixedShapeGradientCheck(t, kernels.RMSNormBwdBlock, rows, hidden) })
		})
	}
}

func run(b *testing.B, f func(properties.TB)) {
	old := flag.Lookup("rapid.checks").Value.String()
	defer flag.Set("rapid.checks", old)
	f(b) // warm up: module load, first allocations
	flag.Set("rapid.checks", fmt.Sprint(b.N))
	b.ResetTimer()
	f(b)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
}
