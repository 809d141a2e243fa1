package emu

import (
	"math"
	"math/big"
	"math/rand/v2"
)

// Reference arithmetic: exact values in math/big, rounded once by
// refRound. Independent of the emulator's float code (float.go).

var bigModes = map[rmode]big.RoundingMode{rn: big.ToNearestEven, rz: big.ToZero, rm: big.ToNegativeInf, rp: big.ToPositiveInf}

type refFormat struct {
	p          int // significand bits
	emin       int // exponent of the smallest normal binade
	emax       int
	minSubnorm float64
}

var (
	ref32 = refFormat{24, -126, 127, 0x1p-149}
	ref64 = refFormat{53, -1022, 1023, math.SmallestNonzeroFloat64}
)

func exact(x float64) *big.Float { return new(big.Float).SetPrec(4000).SetFloat64(x) }

// refRound rounds the exact non-zero value x to format f in mode.
func refRound(x *big.Float, f refFormat, mode rmode) float64 {
	neg := x.Sign() < 0
	e := x.MantExp(nil) // |x| in [2^(e-1), 2^e)
	p := f.p
	if e-1 < f.emin {
		p = f.p - (f.emin - (e - 1))
	}
	var r float64
	if p <= 0 {
		abs := new(big.Float).Abs(x)
		_, exp := math.Frexp(f.minSubnorm) // minSubnorm = 2^(exp-1)
		half := new(big.Float).SetMantExp(big.NewFloat(1), exp-2)
		up := false
		switch mode {
		case rn:
			up = abs.Cmp(half) > 0
		case rz:
		case rm:
			up = neg
		case rp:
			up = !neg
		}
		if up {
			r = f.minSubnorm
		}
		if neg {
			r = -r
		}
		if r == 0 && neg {
			r = math.Copysign(0, -1)
		}
		return r
	}
	y := new(big.Float).SetMode(bigModes[mode]).SetPrec(uint(p)).Set(x)
	r, _ = y.Float64()
	maxv := math.Ldexp(2-math.Ldexp(1, 1-f.p), f.emax)
	if math.Abs(r) > maxv || math.IsInf(r, 0) {
		toMax := mode == rz || mode == rm && !neg || mode == rp && neg
		if toMax {
			r = math.Copysign(maxv, r)
		} else {
			r = math.Copysign(math.Inf(1), r)
		}
	}
	return r
}

// refZero is the sign of an exact zero sum x+y under mode.
func refZero(x, y float64, mode rmode) float64 {
	bothNeg := math.Signbit(x) && math.Signbit(y) && x == 0 && y == 0
	bothPos := !math.Signbit(x) && !math.Signbit(y) && x == 0 && y == 0
	if mode == rm && !bothPos || bothNeg {
		return math.Copysign(0, -1)
	}
	return 0
}

// refOp computes op on float64 operands (already values of the target
// format) and rounds once to f. NaN and infinite operands go through
// float64 arithmetic.
func refOp(op string, f refFormat, mode rmode, a, b, c float64) float64 {
	switch op {
	case "sqrt":
		b, c = 0, 0
	case "add", "mul", "div":
		c = 0
	}
	if math.IsNaN(a) || math.IsNaN(b) || math.IsNaN(c) || math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsInf(c, 0) {
		switch op {
		case "add":
			return a + b
		case "mul":
			return a * b
		case "fma":
			return math.FMA(a, b, c) // a finite product never overflows inside an fma
		case "div":
			return a / b
		case "sqrt":
			return math.Sqrt(a)
		}
	}
	var x *big.Float
	switch op {
	case "add":
		x = new(big.Float).SetPrec(4000).Add(exact(a), exact(b))
		if x.Sign() == 0 {
			return refZero(a, b, mode)
		}
	case "mul":
		x = new(big.Float).SetPrec(4000).Mul(exact(a), exact(b))
		if x.Sign() == 0 {
			return math.Copysign(0, a) * math.Copysign(1, b)
		}
	case "fma":
		p := new(big.Float).SetPrec(4000).Mul(exact(a), exact(b))
		x = new(big.Float).SetPrec(4000).Add(p, exact(c))
		if x.Sign() == 0 {
			pz := math.Copysign(0, a) * math.Copysign(1, b)
			if p.Sign() != 0 {
				pz = 1 // a non-zero product cancelled: +0 unless rm
			}
			return refZero(pz, c, mode)
		}
	case "div":
		if b == 0 {
			return a / b
		}
		if a == 0 {
			return math.Copysign(0, a) * math.Copysign(1, b)
		}
		x = new(big.Float).SetPrec(400).SetMode(big.ToZero).Quo(exact(a), exact(b))
	case "sqrt":
		if a < 0 {
			return math.NaN()
		}
		if a == 0 {
			return a
		}
		x = new(big.Float).SetPrec(400).SetMode(big.ToZero).Sqrt(exact(a))
	}
	return refRound(x, f, mode)
}

// Inputs.

func randF32(r *rand.Rand) float32 {
	switch r.IntN(10) {
	case 0: // any bit pattern
		return math.Float32frombits(r.Uint32())
	case 1: // subnormal
		return math.Float32frombits(r.Uint32()&0x807FFFFF | uint32(r.IntN(2)))
	case 2: // special values
		sp := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0x1p-149, -0x1p-149, 0x1p-126, 0x1.fffffcp-127,
			math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), 1 + 0x1p-23, 1 - 0x1p-24, 3, 0.1}
		return sp[r.IntN(len(sp))]
	case 3: // few significant bits: exact results and ties
		return float32(math.Ldexp(float64(r.IntN(1<<8)-128), r.IntN(40)-20))
	case 4: // near overflow or underflow
		return float32(math.Ldexp(1+r.Float64(), []int{127, -126, -140, 126}[r.IntN(4)])) * float32(1-2*r.IntN(2))
	}
	return float32(math.Ldexp(r.Float64()*2-1, r.IntN(60)-30))
}

func randF64(r *rand.Rand) float64 {
	switch r.IntN(10) {
	case 0:
		return math.Float64frombits(r.Uint64())
	case 1:
		return math.Float64frombits(r.Uint64()&0x800FFFFFFFFFFFFF | uint64(r.IntN(2)))
	case 2:
		sp := []float64{0, math.Copysign(0, -1), 1, -1, math.SmallestNonzeroFloat64, 0x1p-1022, math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1), 1 + 0x1p-52, 3}
		return sp[r.IntN(len(sp))]
	case 3:
		return math.Ldexp(float64(r.IntN(1<<10)-512), r.IntN(80)-40)
	case 4:
		return math.Ldexp(1+r.Float64(), []int{1023, -1022, -1060, 1022}[r.IntN(4)]) * float64(1-2*r.IntN(2))
	}
	return math.Ldexp(r.Float64()*2-1, r.IntN(200)-100)
}

// halfwayFMA returns a, b, c with a·b + c exactly at, or within 2^-33 ulp
// of, a midpoint between two float32 values: where rounding the exact result
// to float64 first and then to float32 goes wrong.
func halfwayFMA(r *rand.Rand) (float32, float32, float32) {
	x := float32(math.Ldexp(1+r.Float64(), r.IntN(40)-20))
	if r.IntN(2) == 0 {
		x = -x
	}
	ax := float32(math.Abs(float64(x)))
	ulp := math.Nextafter32(ax, float32(math.Inf(1))) - ax
	half := ulp / 2
	if x < 0 {
		half = -half
	}
	// (1 − 2^-11)(1 + 2^-11 + 2^-22) = 1 − 2^-33: a product just below 1.
	lo, hi := float32(1-0x1p-11), float32(1+0x1p-11+0x1p-22)
	switch r.IntN(3) {
	case 0: // exactly halfway between x and its neighbour
		return half, 1, x
	case 1: // just short of the midpoint
		return half * lo, hi, x
	default: // just past the midpoint, coming down from the next value
		next := math.Nextafter32(x, float32(math.Copysign(math.Inf(1), float64(x))))
		return -half * lo, hi, next
	}
}

func sameFloat(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Float64bits(got) == math.Float64bits(want)
}
