package oracle

import (
	"math"
	"math/rand/v2"
	"testing"
)

// nearest rounds v to s by brute force: the two neighbours of v among the
// format's finite values, found from the widened encodings, and the closer
// one (the even one on a tie).
func nearest(s Storage, v float32, next func(uint32) uint32) float32 {
	h := s.Bits(v)
	cands := []uint32{h, next(h), h - 1}
	best, bestErr := float32(0), math.Inf(1)
	for _, c := range cands {
		w := float64(s.FromBits(c))
		if math.IsNaN(w) {
			continue
		}
		e := math.Abs(w - float64(v))
		if e < bestErr || e == bestErr && c&1 == 0 {
			best, bestErr = float32(w), e
		}
	}
	return best
}

// TestStorageRoundTrip: every 16-bit encoding widens exactly and rounds
// back to itself.
func TestStorageRoundTrip(t *testing.T) {
	for _, s := range []Storage{StorageBFloat16, StorageFloat16} {
		for h := uint32(0); h < 1<<16; h++ {
			v := s.FromBits(h)
			if v != v {
				if w := s.FromBits(s.Bits(v)); w == w {
					t.Fatalf("%v: NaN %#04x rounds to %v", s, h, w)
				}
				continue
			}
			if got := s.Bits(v); got != h {
				t.Fatalf("%v: %#04x widens to %v, which rounds to %#04x", s, h, v, got)
			}
		}
	}
}

// TestStorageRoundsToNearestEven checks midpoints between neighbours (ties
// to the even one) and random float32 values against the bound
// |round(v) − v| ≤ u·|v| + η that StorageTol relies on.
func TestStorageRoundsToNearestEven(t *testing.T) {
	for _, s := range []Storage{StorageBFloat16, StorageFloat16} {
		// Ties: the midpoint of two finite neighbours, exact in float32.
		top := uint32(0x7bff) // below the largest finite value
		if s == StorageBFloat16 {
			top = 0x7f7f
		}
		for h := uint32(0); h < top; h++ {
			a, b := float64(s.FromBits(h)), float64(s.FromBits(h+1))
			mid := float32((a + b) / 2)
			if float64(mid) != (a+b)/2 {
				continue
			}
			want := h
			if h&1 == 1 {
				want = h + 1
			}
			if got := s.Bits(mid); got != want {
				t.Fatalf("%v: midpoint %v of %#04x and %#04x rounds to %#04x, want %#04x", s, mid, h, h+1, got, want)
			}
			if got := s.Bits(-mid); got != want|0x8000 {
				t.Fatalf("%v: -%v rounds to %#04x, want %#04x", s, mid, got, want|0x8000)
			}
		}
		r := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 200000; i++ {
			v := math.Float32frombits(r.Uint32())
			if v != v || math.IsInf(float64(v), 0) || math.Abs(float64(v)) > s.Max() {
				continue
			}
			got := s.Round(v)
			if want := nearest(s, v, func(h uint32) uint32 { return h + 1 }); got != want && !(math.Abs(float64(v)) > s.Max()*(1-s.UnitRoundoff())) {
				t.Fatalf("%v: %v rounds to %v, the nearest is %v", s, v, got, want)
			}
			if e := math.Abs(float64(got) - float64(v)); e > s.UnitRoundoff()*math.Abs(float64(v))+s.Eta() {
				t.Fatalf("%v: |round(%v) − v| = %g exceeds u·|v| + η = %g", s, v, e, s.UnitRoundoff()*math.Abs(float64(v))+s.Eta())
			}
		}
	}
}

func TestStorageSpecialValues(t *testing.T) {
	inf := float32(math.Inf(1))
	cases := []struct {
		s    Storage
		v    float32
		want float32
	}{
		{StorageFloat16, 65504, 65504},
		{StorageFloat16, 65520, inf}, // the midpoint to the next binade rounds up, to infinity
		{StorageFloat16, 65519, 65504},
		{StorageFloat16, 0x1p-24, 0x1p-24},     // smallest subnormal
		{StorageFloat16, 0x1p-25, 0},           // a tie with zero goes to the even zero
		{StorageFloat16, 0x1.8p-25, 0x1p-24},   // above the tie
		{StorageFloat16, 0x1.ffcp-15, 0x1p-14}, // a subnormal rounding up to the smallest normal
		{StorageBFloat16, 1 + 0x1p-8, 1},       // tie to even
		{StorageBFloat16, 1 + 0x3p-8, 1 + 0x1p-6},
		{StorageBFloat16, math.MaxFloat32, inf},
		{StorageFloat32, 1 + 0x1p-23, 1 + 0x1p-23},
	}
	for _, c := range cases {
		if got := c.s.Round(c.v); got != c.want {
			t.Errorf("%v: Round(%g) = %g, want %g", c.s, c.v, got, c.want)
		}
	}
	if StorageTol(StorageFloat32, 5, 1) != 0 {
		t.Error("float32 storage adds tolerance")
	}
	if got, want := StorageTol(StorageBFloat16, 3, 1), 4*0x1p-8+0x1p-134; got != want {
		t.Errorf("StorageTol(bf16, 3, 1) = %g, want %g", got, want)
	}
}
