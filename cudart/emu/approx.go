package emu

import (
	"math"

	"github.com/ptxprop/ptxprop/ptx"
)

// Approximate operations (inst.sub for execApprox).
const (
	apRcp uint8 = iota
	apSqrt
	apRsqrt
	apEx2
	apLg2
	apSin
	apCos
	apTanh
	apDiv
	apDivFull
)

// bound is a documented error bound of an approximate instruction.
type bound struct {
	ulps      int     // maximum error in ulps of the correctly rounded result
	rel, abs  float64 // maximum relative or absolute error
	anyInUnit bool    // no guarantee: any value in [−1, 1]
}

// approxBound returns the PTX ISA bound for op on input x (f32).
func approxBound(op uint8, x, y float64) bound {
	switch op {
	case apRcp:
		return bound{ulps: 1} // "The maximum ulp error is 1 across the full range of inputs."
	case apSqrt:
		return bound{rel: 0x1p-23}
	case apRsqrt:
		return bound{rel: math.Exp2(-22.9)}
	case apEx2:
		return bound{ulps: 2}
	case apLg2:
		if x > 0.5 && x < 2 {
			return bound{abs: 0x1p-22}
		}
		return bound{rel: 0x1p-22}
	case apSin, apCos:
		switch ax := math.Abs(x); {
		case ax <= 2*math.Pi:
			return bound{abs: math.Exp2(-20.5)}
		case ax <= 100*math.Pi:
			return bound{abs: math.Exp2(-14.7)}
		}
		return bound{anyInUnit: true}
	case apTanh:
		return bound{rel: 0x1p-11}
	case apDiv, apDivFull:
		return bound{ulps: 2}
	}
	return bound{}
}

func exactApprox(op uint8, x, y float64) float64 {
	switch op {
	case apRcp:
		return 1 / x
	case apSqrt:
		return math.Sqrt(x)
	case apRsqrt:
		return 1 / math.Sqrt(x)
	case apEx2:
		return math.Exp2(x)
	case apLg2:
		return math.Log2(x)
	case apSin:
		return math.Sin(x)
	case apCos:
		return math.Cos(x)
	case apTanh:
		return math.Tanh(x)
	case apDiv, apDivFull:
		return x / y
	}
	return math.NaN()
}

// splitmix64 is the hash that picks adversarial values.
func splitmix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	return x ^ x>>31
}

// orderedKey maps float32 bits to an integer that preserves the order of
// the values (−0 and +0 adjacent).
func orderedKey(b uint32) int64 {
	if b&0x80000000 != 0 {
		return -int64(b&0x7FFFFFFF) - 1
	}
	return int64(b)
}

func fromKey(k int64) uint32 {
	if k < 0 {
		return uint32(-(k + 1)) | 0x80000000
	}
	return uint32(k)
}

// adversarial32 returns a float32 within bound of the exact value y (cr is
// the correctly rounded float32 bits), chosen by h: often an extreme of the
// allowed interval, otherwise anywhere in it.
func adversarial32(y float64, cr uint32, bd bound, h uint64) uint32 {
	if math.IsNaN(y) || math.IsInf(y, 0) || math.IsInf(float64(math.Float32frombits(cr)), 0) {
		return cr
	}
	var lo, hi int64
	switch {
	case bd.ulps > 0:
		k := orderedKey(cr)
		lo, hi = k-int64(bd.ulps), k+int64(bd.ulps)
		if y == 0 {
			return cr
		}
	default:
		var a float64
		switch {
		case bd.anyInUnit:
			lo, hi = orderedKey(math.Float32bits(-1)), orderedKey(math.Float32bits(1))
		case bd.rel > 0:
			if y == 0 {
				return cr
			}
			a = math.Abs(y) * bd.rel
		default:
			a = bd.abs
		}
		if !bd.anyInUnit {
			lo, hi = orderedKey(ceil32(y-a)), orderedKey(floor32(y+a))
		}
	}
	// Stay on the correctly rounded value's side of infinity.
	inf, ninf := orderedKey(0x7F800000), orderedKey(0xFF800000)
	lo, hi = max(lo, ninf+1), min(hi, inf-1)
	if lo > hi {
		return cr
	}
	var k int64
	switch h % 4 {
	case 0:
		k = lo
	case 1:
		k = hi
	case 2:
		k = orderedKey(cr)
		if k < lo || k > hi {
			k = lo
		}
	default:
		k = lo + int64((h>>2)%uint64(hi-lo+1))
	}
	return fromKey(k)
}

// ceil32 returns the bits of the smallest float32 ≥ x.
func ceil32(x float64) uint32 {
	r := float32(x)
	if float64(r) < x {
		r = math.Nextafter32(r, float32(math.Inf(1)))
	}
	return math.Float32bits(r)
}

// floor32 returns the bits of the largest float32 ≤ x.
func floor32(x float64) uint32 {
	r := float32(x)
	if float64(r) > x {
		r = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	return math.Float32bits(r)
}

// execApprox runs an approximate instruction: what sm_90 computes for the
// divisions and the MUFU operations (mufu.go, mufu_models.go), the exact
// value rounded for the .f64 forms without a documented bound, or under
// ApproxAdversarial a seed-chosen value inside the documented bound.
func execApprox(w *warp, in *inst, m uint32) {
	d, a := w.r(in.d), w.r(in.a)
	var b []uint64
	if in.b >= 0 {
		b = w.r(in.b)
	}
	adv := w.l.cfg.Approx == ApproxAdversarial
	seed := uint64(w.l.cfg.ApproxSeed)
	t := in.t
	forLanes(m, func(l int) {
		switch {
		case !adv && in.f2 != nil: // div.full, div.approx .f32: as sm_90 computes them
			d[l] = in.f2(a[l], b[l])
			return
		case !adv && in.f1 != nil: // rcp, rsqrt, sqrt, ex2, lg2, sin, cos, tanh, halves: as sm_90 computes them (mufu_models.go)
			d[l] = in.f1(a[l])
			return
		case t.k == 'f' && t.n == 8: // rcp.approx.ftz.f64, rsqrt.approx.f64: bounds not documented; exact
			x := math.Float64frombits(a[l])
			if in.ftz && math.Abs(x) < 0x1p-1022 {
				x = math.Copysign(0, x)
			}
			r := exactApprox(in.sub, x, 0)
			if in.ftz && math.Abs(r) < 0x1p-1022 {
				r = math.Copysign(0, r)
			}
			d[l] = canon64(r)
			return
		case t.k != 'f': // ex2/tanh .approx on halves, adversarial: exact, rounded to the format
			f := halfWrap(t, rn, in.ftz, false, func(x []float64) (float64, float64) { return exactApprox(in.sub, x[0], 0), 0 })
			d[l] = f(a[l], 0, 0)
			return
		}
		x := f32(a[l])
		var y float32
		if b != nil {
			y = f32(b[l])
		}
		if in.ftz {
			x, y = ftz32(x), ftz32(y)
		}
		ex := exactApprox(in.sub, float64(x), float64(y))
		r := round32(ex, 0, rn)
		if adv {
			if in.sub == apDiv && math.Abs(float64(y)) > 0x1p126 && !math.IsInf(float64(y), 0) {
				// Documented: for 2^126 < |b| < 2^128 the result is 0 (NaN for an infinite a).
				if math.IsInf(float64(x), 0) {
					r = nan32
				} else {
					r = math.Float32bits(float32(math.Copysign(0, float64(x)*float64(y))))
				}
			} else {
				h := splitmix64(seed ^ uint64(in.sub)<<56 ^ uint64(math.Float32bits(x)) ^ uint64(math.Float32bits(y))<<24)
				r = adversarial32(ex, r, approxBound(in.sub, float64(x), float64(y)), h)
			}
		}
		if in.ftz {
			r = ftzBits32(r)
		}
		d[l] = uint64(r)
	})
}

// Approximation is an approximate instruction of a module (package ptx
// classifies them: ptx.Approximations).
type Approximation = ptx.Approximation

// Approximations returns the approximate instructions of the PTX module
// src in source order: ptx.Approximations.
func Approximations(src []byte) ([]Approximation, error) { return ptx.Approximations(src) }
