package cost

import (
	"reflect"
	"testing"

	"github.com/ptxprop/ptxprop/kernels"
)

// TestMeasureEveryKernel measures every kernel twice: one cost a shape,
// each positive, and the same counts both times.
func TestMeasureEveryKernel(t *testing.T) {
	for _, k := range kernels.All() {
		a, err := Measure(k)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Measure(k)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: counts differ between two probes:\n%+v\n%+v", k.Name, a, b)
		}
		if len(a) != len(Shapes(k)) {
			t.Errorf("%s: %d costs for %d shapes", k.Name, len(a), len(Shapes(k)))
		}
		for i, c := range a {
			if c.Kernel != k.Name || c.Shape != Shapes(k)[i].String() || c.Elements < 1 || !(c.InstructionsPerElement > 0) || !(c.BytesPerElement > 0) {
				t.Errorf("%s: cost %+v", k.Name, c)
			}
		}
	}
}
