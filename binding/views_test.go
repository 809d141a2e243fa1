package binding_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
)

// offsetSpy records the offset of every view allocated through it.
type offsetSpy struct {
	cudart.Device
	offs []int
}

func (s *offsetSpy) AllocAt(k cudart.Kind, n, off int) (cudart.Buffer, error) {
	s.offs = append(s.offs, off)
	return s.Device.AllocAt(k, n, off)
}

// A binding passes the contract's offsets only with views: true; then its
// kernel sees the views ours does, and computes the same bits.
func TestViewsOnlyWhenAllowed(t *testing.T) {
	dev := config(t).Device
	b := load(t, "testdata/layernorm_fwd.yaml")
	if b.Views || b.TakesOffsets() {
		t.Fatalf("views default on")
	}
	const rows, hidden = 2, 64
	args := func() *op.LayerNormForwardArgs {
		x, g := make([]float32, rows*hidden), make([]float32, hidden)
		for i := range x {
			x[i] = float32(math.Sin(float64(i)))
		}
		for i := range g {
			g[i] = 1 + float32(i)/hidden
		}
		return &op.LayerNormForwardArgs{Rows: rows, Hidden: hidden, Eps: 1e-5, X: x, Gamma: g, Beta: g,
			Y: make([]float32, rows*hidden), Mean: make([]float32, rows), Rstd: make([]float32, rows),
			Offsets: op.Offsets{"x": 1, "y": 2}}
	}
	for _, views := range []bool{false, true} {
		b.Views = views
		spy := &offsetSpy{Device: dev}
		a := args()
		if err := b.Impl().(properties.LayerNormForwarder).LayerNormForward(spy, a); err != nil {
			t.Fatal(err)
		}
		got := map[int]int{}
		for _, k := range spy.offs {
			got[k]++
		}
		want := map[int]int{0: len(spy.offs)}
		if views {
			want = map[int]int{0: len(spy.offs) - 2, 1: 1, 2: 1}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("views=%v: offsets allocated %v, want %v", views, got, want)
		}
		if !views {
			continue
		}
		ours := args()
		if err := kernels.LayerNormFwd.LayerNormForward(dev, ours); err != nil {
			t.Fatal(err)
		}
		for i := range a.Y {
			if math.Float32bits(a.Y[i]) != math.Float32bits(ours.Y[i]) {
				t.Fatalf("y[%d]: binding %g, ours %g at the same offsets", i, a.Y[i], ours.Y[i])
			}
		}
	}
}
