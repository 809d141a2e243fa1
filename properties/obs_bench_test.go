package properties

import (
	"flag"
	"testing"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties/gen"
)

// BenchmarkObsWithin measures Within and Naive on a 64×1024 forward: the
// naive float32 result against the oracle and its bound.
func BenchmarkObsWithin(b *testing.B) {
	rows, hidden := 64, 1024
	x := gen.MakeTensor(gen.Normal, 0, 1, rows, hidden).Data
	g := gen.MakeTensor(gen.Normal, 0, 2, 1, hidden).Data
	got := make([]float32, len(x))
	oracle.RMSNormForward32Naive(got, nil, x, g, rows, hidden, 1e-5)
	want, tol := make([]float64, len(x)), make([]float64, len(x))
	oracle.RMSNormForwardWithTol(want, nil, tol, nil, gen.F64(x), gen.F64(g), rows, hidden, 1e-5, oracle.SerialReduction())
	old := flag.Lookup("rapid.checks").Value.String()
	defer flag.Set("rapid.checks", old)
	flag.Set("rapid.checks", "1")
	for _, name := range []string{"within", "naive"} {
		b.Run(name, func(b *testing.B) {
			rapid.Check(b, func(rt *rapid.T) {
				o := &Obs{rt: rt}
				for b.Loop() {
					if name == "within" {
						o.Within("y", got, want, tol)
					} else {
						o.Naive(got, want, tol)
					}
				}
			})
		})
	}
}
