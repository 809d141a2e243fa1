package emu

import (
	"math"
	"math/rand/v2"
	"testing"
)

var modeNames = map[rmode]string{rn: "rn", rz: "rz", rm: "rm", rp: "rp"}

func TestFMA32BitExact(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for n := 0; n < 300000; n++ {
		var a, b, c float32
		if n%3 == 0 {
			a, b, c = halfwayFMA(r)
		} else {
			a, b, c = randF32(r), randF32(r), randF32(r)
		}
		for _, mode := range []rmode{rn, rz, rm, rp} {
			got := float64(math.Float32frombits(fma32(a, b, c, mode)))
			want := refOp("fma", ref32, mode, float64(a), float64(b), float64(c))
			if !sameFloat(got, want) {
				t.Fatalf("fma.%s.f32(%g, %g, %g) = %g (%#08x), want %g (%#08x)", modeNames[mode], a, b, c,
					got, math.Float32bits(float32(got)), want, math.Float32bits(float32(want)))
			}
		}
	}
}

// The halfway cases are the ones a naive float32(math.FMA(…)) gets wrong:
// the test above would catch an implementation that rounds twice.
func TestNaiveFMAFailsHalfwayCases(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	wrong := 0
	for n := 0; n < 1000; n++ {
		a, b, c := halfwayFMA(r)
		naive := float64(float32(math.FMA(float64(a), float64(b), float64(c))))
		if !sameFloat(naive, refOp("fma", ref32, rn, float64(a), float64(b), float64(c))) {
			wrong++
		}
	}
	if wrong == 0 {
		t.Fatal("the halfway cases do not distinguish single from double rounding")
	}
}

func TestF32OpsAllModes(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for n := 0; n < 100000; n++ {
		a, b := randF32(r), randF32(r)
		x, y := float64(a), float64(b)
		for _, mode := range []rmode{rn, rz, rm, rp} {
			check := func(op string, got uint32, want float64) {
				if !sameFloat(float64(math.Float32frombits(got)), want) {
					t.Fatalf("%s.%s.f32(%g, %g) = %#08x, want %g (%#08x)", op, modeNames[mode], a, b, got, want, math.Float32bits(float32(want)))
				}
			}
			check("add", add32(a, b, mode), refOp("add", ref32, mode, x, y, 0))
			check("sub", add32(a, -b, mode), refOp("add", ref32, mode, x, -y, 0))
			check("mul", mul32(a, b, mode), refOp("mul", ref32, mode, x, y, 0))
			check("div", div32(a, b, mode), refOp("div", ref32, mode, x, y, 0))
			check("sqrt", sqrt32(a, mode), refOp("sqrt", ref32, mode, x, 0, 0))
		}
	}
}

func TestF64OpsAllModes(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for n := 0; n < 20000; n++ {
		a, b, c := randF64(r), randF64(r), randF64(r)
		for _, mode := range []rmode{rn, rz, rm, rp} {
			check := func(op string, got, want float64) {
				if !sameFloat(got, want) {
					t.Fatalf("%s.%s.f64(%g, %g, %g) = %g (%#016x), want %g (%#016x)", op, modeNames[mode], a, b, c, got, math.Float64bits(got), want, math.Float64bits(want))
				}
			}
			check("add", add64(a, b, mode), refOp("add", ref64, mode, a, b, 0))
			check("mul", mul64(a, b, mode), refOp("mul", ref64, mode, a, b, 0))
			check("fma", fma64(a, b, c, mode), refOp("fma", ref64, mode, a, b, c))
			check("div", div64(a, b, mode), refOp("div", ref64, mode, a, b, 0))
			check("sqrt", sqrt64(a, mode), refOp("sqrt", ref64, mode, a, 0, 0))
		}
	}
}

func TestHalfConversionsRoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		x := f16ToF64(uint16(h))
		if math.IsNaN(x) {
			continue
		}
		if back := f64ToF16(x); back != uint16(h) {
			t.Fatalf("f16 %#04x -> %g -> %#04x", h, x, back)
		}
		// Independent decoding: sign · 2^(e-15) · 1.m or 2^-14 · 0.m.
		e, m := h>>10&0x1F, float64(h&0x3FF)
		var v float64
		switch e {
		case 0:
			v = m / 1024 * math.Ldexp(1, -14)
		case 31:
			v = math.Inf(1)
		default:
			v = (1 + m/1024) * math.Ldexp(1, int(e)-15)
		}
		if h&0x8000 != 0 {
			v = -v
		}
		if x != v {
			t.Fatalf("f16 %#04x decodes to %g, want %g", h, x, v)
		}
	}
	r := rand.New(rand.NewPCG(19, 20))
	f16 := refFormat{11, -14, 15, 0x1p-24}
	for n := 0; n < 100000; n++ {
		x := float64(randF32(r))
		if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
			continue
		}
		for _, mode := range []rmode{rn, rz, rm, rp} {
			got := f16ToF64(roundF16(x, 0, mode))
			want := refRound(exact(x), f16, mode)
			if !sameFloat(got, want) {
				t.Fatalf("cvt.%s.f16.f32(%g) = %g, want %g", modeNames[mode], x, got, want)
			}
		}
	}
}
