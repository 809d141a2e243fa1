package emu

import (
	"math"
)

// fval decodes register bits of a float type to float64.
func fval(t dtype, v uint64) float64 {
	switch t.k {
	case 'h':
		return f16ToF64(uint16(v))
	case 'H':
		return bf16ToF64(uint16(v))
	}
	if t.n == 4 {
		return float64(f32(v))
	}
	return math.Float64frombits(v)
}

// fbits encodes an already representable float64 value in type t.
func fbits(t dtype, x float64) uint64 {
	switch t.k {
	case 'h':
		return uint64(f64ToF16(x))
	case 'H':
		return uint64(f64ToBF16(x))
	}
	if t.n == 4 {
		if math.IsNaN(x) {
			return uint64(nan32)
		}
		return uint64(math.Float32bits(float32(x)))
	}
	return canon64(x)
}

// minMaxFloat implements min/max: a NaN operand is ignored unless both are
// NaN (or nanProp, the .NaN modifier); −0 orders below +0.
func minMaxFloat(t dtype, a, b uint64, isMax, nanProp bool) uint64 {
	x, y := fval(t, a), fval(t, b)
	switch {
	case math.IsNaN(x) && math.IsNaN(y), nanProp && (math.IsNaN(x) || math.IsNaN(y)):
		return fbits(t, math.NaN())
	case math.IsNaN(x):
		return b
	case math.IsNaN(y):
		return a
	}
	less := x < y || x == y && math.Signbit(x) && !math.Signbit(y)
	if less != isMax {
		return a
	}
	return b
}

func sat32(b uint32) uint32 {
	x := math.Float32frombits(b)
	switch {
	case x != x || x <= 0:
		return 0
	case x >= 1:
		return math.Float32bits(1)
	}
	return b
}

// f32Unary and friends wrap a float32 operation with .ftz and .sat.
func f32Wrap1(op func(float32) uint32, ftz, sat bool) func(uint64) uint64 {
	return func(a uint64) uint64 {
		x := f32(a)
		if ftz {
			x = ftz32(x)
		}
		r := op(x)
		if ftz {
			r = ftzBits32(r)
		}
		if sat {
			r = sat32(r)
		}
		return uint64(r)
	}
}

func f32Wrap2(op func(x, y float32) uint32, ftz, sat bool) func(uint64, uint64) uint64 {
	if !ftz && !sat {
		return func(a, b uint64) uint64 { return uint64(op(f32(a), f32(b))) }
	}
	return func(a, b uint64) uint64 {
		x, y := f32(a), f32(b)
		if ftz {
			x, y = ftz32(x), ftz32(y)
		}
		r := op(x, y)
		if ftz {
			r = ftzBits32(r)
		}
		if sat {
			r = sat32(r)
		}
		return uint64(r)
	}
}

func f32Wrap3(op func(x, y, z float32) uint32, ftz, sat bool) func(uint64, uint64, uint64) uint64 {
	return func(a, b, c uint64) uint64 {
		x, y, z := f32(a), f32(b), f32(c)
		if ftz {
			x, y, z = ftz32(x), ftz32(y), ftz32(z)
		}
		r := op(x, y, z)
		if ftz {
			r = ftzBits32(r)
		}
		if sat {
			r = sat32(r)
		}
		return uint64(r)
	}
}

func canon32(x float32) uint32 {
	if x != x {
		return nan32
	}
	return math.Float32bits(x)
}

// halfWrap applies a float64 operation producing (s, e) to each 16-bit half
// of f16/bf16/f16x2/bf16x2 operands and rounds once.
func halfWrap(t dtype, mode rmode, ftz, sat bool, op func(x []float64) (float64, float64)) func(a, b, c uint64) uint64 {
	halves := 1
	if t.k == 'x' || t.k == 'X' {
		halves = 2
	}
	bf := t.k == 'H' || t.k == 'X'
	dec := f16ToF64
	enc := func(s, e float64) uint16 { return roundF16(s, e, mode) }
	minNormal := 0x1p-14
	if bf {
		dec, minNormal = bf16ToF64, 0x1p-126
		enc = func(s, e float64) uint16 { return roundBF16(s, e, mode) }
	}
	flush := func(x float64) float64 {
		if ftz && math.Abs(x) < minNormal {
			return math.Copysign(0, x)
		}
		return x
	}
	return func(a, b, c uint64) uint64 {
		var out uint64
		var xs [3]float64
		for h := 0; h < halves; h++ {
			sh := uint(16 * h)
			xs[0], xs[1], xs[2] = flush(dec(uint16(a>>sh))), flush(dec(uint16(b>>sh))), flush(dec(uint16(c>>sh)))
			s, e := op(xs[:])
			r := flush(dec(enc(s, e)))
			if math.IsNaN(s) {
				r = math.NaN()
			}
			if sat {
				r = math.Max(0, math.Min(1, r))
				if math.IsNaN(s) {
					r = 0
				}
			}
			var bitsOut uint16
			if bf {
				bitsOut = f64ToBF16(r)
			} else {
				bitsOut = f64ToF16(r)
			}
			out |= uint64(bitsOut) << sh
		}
		return out
	}
}

func isNormal(t dtype, x float64) bool {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return false
	}
	minN := math.SmallestNonzeroFloat64
	switch {
	case t.k == 'f' && t.n == 4:
		minN = 0x1p-126
	case t.k == 'f':
		minN = 0x1p-1022
	case t.k == 'h':
		minN = 0x1p-14
	case t.k == 'H':
		minN = 0x1p-126
	}
	return math.Abs(x) >= minN
}
