package gen

import (
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/op"
)

// DrawOffsets passes every tensor aligned in about half the calls, and
// otherwise misaligns exactly one, each tensor and each offset of
// 1..op.MaxOffset in turn; a Steer's wanted offsets are drawn, as many as
// it names, and an out of range one is not.
func TestDrawOffsets(t *testing.T) {
	labels := []string{"x", "gamma", "y"}
	var aligned, calls int
	hit := map[[2]int]bool{}
	rapid.Check(t, func(rt *rapid.T) {
		off := EmuLimits.DrawOffsets(rt, labels)
		calls++
		nonzero := 0
		for i, k := range off {
			if k != 0 {
				nonzero++
				hit[[2]int{i, k}] = true
			}
		}
		switch nonzero {
		case 0:
			aligned++
		case 1:
		default:
			rt.Fatalf("offsets %v: more than one tensor misaligned", off)
		}
	})
	if f := float64(aligned) / float64(calls); f < 0.35 || f > 0.65 {
		t.Errorf("all aligned in %.2f of %d calls, want about 1/2", f, calls)
	}
	if len(hit) < len(labels)*op.MaxOffset*2/3 {
		t.Errorf("only %d of the %d (tensor, offset) pairs drawn in %d calls: %v", len(hit), len(labels)*op.MaxOffset, calls, hit)
	}
	s := NewSteering()
	lim := EmuLimits.WithSteering(s)
	rapid.Check(t, func(rt *rapid.T) {
		st := &Steer{Want: []Value{{Key: "x.off", U: 2}, {Key: "y.off", U: 3}, {Key: "gamma.off", U: op.MaxOffset + 1}}}
		s.Begin(rt, st)
		defer s.End(rt)
		off := lim.DrawOffsets(rt, labels)
		if off[0] != 2 || off[2] != 3 || off[1] > op.MaxOffset {
			rt.Fatalf("steered to x=2 y=3 (gamma out of range): drew %v", off)
		}
		if len(st.Made) != len(labels) {
			rt.Fatalf("made %v, want one .off per tensor", st.Made)
		}
	})
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
