package gen

import (
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/op"
)

// DrawOffset gives 0 about three times in four and every offset of
// 1..op.MaxOffset otherwise; a Steer's wanted offset is drawn, an out of
// range one is not.
func TestDrawOffset(t *testing.T) {
	counts := make([]int, op.MaxOffset+1)
	rapid.Check(t, func(rt *rapid.T) { counts[EmuLimits.DrawOffset(rt, "x")]++ })
	n := 0
	for _, c := range counts {
		n += c
	}
	if f := float64(counts[0]) / float64(n); f < 0.6 || f > 0.9 {
		t.Errorf("offset 0 in %.2f of %d draws, want about 3/4 (counts %v)", f, n, counts)
	}
	for k := 1; k <= op.MaxOffset; k++ {
		if counts[k] == 0 {
			t.Errorf("offset %d never drawn in %d draws (counts %v)", k, n, counts)
		}
	}
	s := NewSteering()
	lim := EmuLimits.WithSteering(s)
	for _, tc := range []struct{ want, got uint64 }{{2, 2}, {op.MaxOffset + 1, 0}} {
		rapid.Check(t, func(rt *rapid.T) {
			st := &Steer{Want: []Value{{Key: "x.off", U: tc.want}}}
			s.Begin(rt, st)
			defer s.End(rt)
			if k := lim.DrawOffset(rt, "x"); k != int(tc.got) && (tc.got != 0 || k > op.MaxOffset) {
				rt.Fatalf("steered to %d: drew %d", tc.want, k)
			}
			if len(st.Made) != 1 || st.Made[0].Key != "x.off" {
				rt.Fatalf("made %v, want one x.off", st.Made)
			}
		})
	}
}

// Mutate moves an offset draw to another offset in range, never scaling it.
func TestMutateOffset(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for k := range uint64(op.MaxOffset + 1) {
		for range 50 {
			out := Mutate([]Value{{Key: "y.off", U: k}}, r.Uint64)
			if got := out[0].U; got == k || got > op.MaxOffset || out[0].F != 0 {
				t.Fatalf("Mutate(y.off=%d) = %v, want another offset in 0..%d", k, out[0], op.MaxOffset)
			}
		}
	}
}
