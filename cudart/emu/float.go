package emu

import (
	"math"
	"math/big"
)

// rmode is an IEEE rounding direction.
type rmode uint8

const (
	rn rmode = iota // to nearest, ties to even
	rz              // toward zero
	rm              // toward −∞
	rp              // toward +∞
)

// Canonical NaNs: what NVIDIA GPUs produce for any arithmetic NaN result.
const (
	nan32 uint32 = 0x7FFFFFFF
	nan64 uint64 = 0x7FFFFFFFFFFFFFFF
)

// format describes a binary floating-point format for roundFmt.
type format struct {
	p          int // significand bits including the hidden bit
	emin, emax int // exponent of the smallest and largest normal binade
}

var (
	fmtF32  = format{24, -126, 127}
	fmtF16  = format{11, -14, 15}
	fmtBF16 = format{8, -126, 127}
)

// twoSum returns s = RN(a+b) and the exact error e = a+b−s (Knuth).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// roundFmt rounds the exact real s+e to format f with mode. s must be
// RN_double(s+e) (so |e| ≤ ulp(s)/2), as twoSum produces; e may also be
// any tiny value with the sign of the residual when only its sign is known.
// Subnormal results are produced with the format's reduced precision;
// overflow gives ±Inf or ±max as the mode says.
func roundFmt(s, e float64, mode rmode, f format) float64 {
	if math.IsNaN(s) || math.IsInf(s, 0) || (s == 0 && e == 0) {
		return s
	}
	neg := s < 0 || (s == 0 && e < 0)
	as, ae := math.Abs(s), e
	if neg {
		ae = -e
	}
	fr, exp := math.Frexp(as)
	E := exp - 1
	if as == 0 {
		E = f.emin
	} else if fr == 0.5 && ae < 0 {
		E-- // the exact value lies just below a power of two
	}
	q := max(E-f.p+1, f.emin-f.p+1)
	t := math.Ldexp(as, -q)
	te := math.Ldexp(ae, -q)
	fl := math.Floor(t)
	frac := t - fl
	if frac == 0 && te < 0 {
		fl--
		frac = 1
	}
	r := fl
	if frac != 0 || te != 0 {
		up := false
		switch mode {
		case rz:
		case rm:
			up = neg
		case rp:
			up = !neg
		default:
			up = frac > 0.5 || frac == 0.5 && (te > 0 || te == 0 && math.Mod(fl, 2) == 1)
		}
		if up {
			r = fl + 1
		}
	}
	res := math.Ldexp(r, q)
	if maxv := math.Ldexp(2-math.Ldexp(1, 1-f.p), f.emax); res > maxv {
		if mode == rz || mode == rm && !neg || mode == rp && neg {
			res = maxv
		} else {
			res = math.Inf(1)
		}
	}
	if neg {
		res = -res
	}
	return res
}

// round32 rounds s+e (see roundFmt) to float32 bits, NaN canonical.
func round32(s, e float64, mode rmode) uint32 {
	if math.IsNaN(s) {
		return nan32
	}
	if e == 0 && mode == rn {
		return math.Float32bits(float32(s))
	}
	return math.Float32bits(float32(roundFmt(s, e, mode, fmtF32)))
}

// tiny returns a value with the sign of r that is negligible next to s, for
// roundFmt when only the sign of the residual is known.
func tiny(r, s float64) float64 {
	if r == 0 {
		return 0
	}
	m := math.Abs(s) * 0x1p-80
	if m == 0 || m < 0x1p-1000 {
		m = 0x1p-1000
	}
	if r < 0 {
		return -m
	}
	return m
}

func f32(bits uint64) float32 { return math.Float32frombits(uint32(bits)) }

// ftz32 flushes a subnormal to a sign-preserving zero.
func ftz32(x float32) float32 {
	b := math.Float32bits(x)
	if b&0x7F800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return x
}

// ftzBits32 flushes subnormal result bits to a sign-preserving zero.
func ftzBits32(b uint32) uint32 {
	if b&0x7F800000 == 0 {
		return b & 0x80000000
	}
	return b
}

// zeroSign fixes the sign of an exact zero sum x+y: −0 under rm unless both
// are +0; +0 otherwise unless both are −0 (IEEE 754 §6.3).
func zeroSign(x, y float64, mode rmode) float64 {
	if mode == rm && !(x == 0 && y == 0 && !math.Signbit(x) && !math.Signbit(y)) {
		return math.Copysign(0, -1)
	}
	if math.Signbit(x) && math.Signbit(y) && x == 0 && y == 0 {
		return math.Copysign(0, -1)
	}
	return 0
}

// add32 returns a+b rounded to float32 in mode.
func add32(a, b float32, mode rmode) uint32 {
	x, y := float64(a), float64(b)
	s, e := twoSum(x, y)
	if math.IsNaN(s) {
		return nan32
	}
	if s == 0 && e == 0 {
		return math.Float32bits(float32(zeroSign(x, y, mode)))
	}
	return round32(s, e, mode)
}

// mul32 returns a*b rounded to float32 in mode (the double product is exact).
func mul32(a, b float32, mode rmode) uint32 {
	return round32(float64(a)*float64(b), 0, mode)
}

// fma32 returns a*b+c rounded once to float32 in mode.
func fma32(a, b, c float32, mode rmode) uint32 {
	p := float64(a) * float64(b) // exact: 48 significant bits, no underflow
	z := float64(c)
	s, e := twoSum(p, z)
	if math.IsNaN(s) {
		return nan32
	}
	if math.IsInf(s, 0) {
		return math.Float32bits(float32(s))
	}
	if s == 0 && e == 0 {
		return math.Float32bits(float32(zeroSign(p, z, mode)))
	}
	return round32(s, e, mode)
}

// div32 returns a/b rounded to float32 in mode.
func div32(a, b float32, mode rmode) uint32 {
	x, y := float64(a), float64(b)
	s := x / y
	if math.IsNaN(s) {
		return nan32
	}
	if mode == rn || math.IsInf(s, 0) || s == 0 {
		return round32(s, 0, mode)
	}
	r := math.FMA(-s, y, x) // exact remainder
	if y < 0 {
		r = -r
	}
	return round32(s, tiny(r, s), mode)
}

// sqrt32 returns sqrt(a) rounded to float32 in mode.
func sqrt32(a float32, mode rmode) uint32 {
	x := float64(a)
	s := math.Sqrt(x)
	if math.IsNaN(s) {
		return nan32
	}
	if mode == rn || math.IsInf(s, 0) || s == 0 {
		return round32(s, 0, mode)
	}
	return round32(s, tiny(math.FMA(-s, s, x), s), mode)
}

// big helpers for f64 directed rounding.

func bigOf(x float64) *big.Float { return new(big.Float).SetPrec(0).SetFloat64(x) }

// adjust64 moves the nearest-rounded s one step toward the exact value when
// the mode requires it; cmp is the sign of exact − s.
func adjust64(s float64, cmp int, mode rmode) float64 {
	if cmp == 0 || mode == rn {
		return s
	}
	switch mode {
	case rz:
		if s > 0 && cmp < 0 || s < 0 && cmp > 0 {
			return math.Nextafter(s, 0)
		}
		if s == 0 {
			return s
		}
	case rm:
		if cmp < 0 {
			return math.Nextafter(s, math.Inf(-1))
		}
	case rp:
		if cmp > 0 {
			return math.Nextafter(s, math.Inf(1))
		}
	}
	return s
}

// overflow64 handles a nearest-rounded overflow to ±Inf under a directed mode.
func overflow64(s float64, mode rmode) float64 {
	if mode == rz || mode == rm && s > 0 || mode == rp && s < 0 {
		return math.Copysign(math.MaxFloat64, s)
	}
	return s
}

// exactCmp returns the sign of exact − s where exact is given as a big.Float
// computed exactly.
func exactCmp(exact *big.Float, s float64) int { return exact.Cmp(bigOf(s)) }

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

const (
	bigPrec    = 2200 // enough for any exact sum of two float64 values
	bigFMAPrec = 4400 // enough for any exact a·b + c of float64 values
)

func add64(a, b float64, mode rmode) float64 {
	s := a + b
	if mode == rn || !finite(a, b) {
		return s
	}
	if math.IsInf(s, 0) {
		return overflow64(s, mode)
	}
	if s == 0 {
		if _, e := twoSum(a, b); e == 0 {
			return zeroSign(a, b, mode)
		}
	}
	_, e := twoSum(a, b)
	return adjust64(s, sign(e), mode)
}

func mul64(a, b float64, mode rmode) float64 {
	s := a * b
	if mode == rn || !finite(a, b) || a == 0 || b == 0 {
		return s
	}
	if math.IsInf(s, 0) {
		return overflow64(s, mode)
	}
	exact := new(big.Float).SetPrec(106).Mul(bigOf(a), bigOf(b))
	return adjust64(s, exactCmp(exact, s), mode)
}

func fma64(a, b, c float64, mode rmode) float64 {
	s := math.FMA(a, b, c)
	if mode == rn || !finite(a, b, c) {
		return s
	}
	exact := new(big.Float).SetPrec(bigFMAPrec).Mul(bigOf(a), bigOf(b))
	exact.Add(exact, bigOf(c))
	if exact.Sign() == 0 {
		return zeroSign(a*b, c, mode)
	}
	if math.IsInf(s, 0) {
		return overflow64(s, mode)
	}
	return adjust64(s, exactCmp(exact, s), mode)
}

func div64(a, b float64, mode rmode) float64 {
	s := a / b
	if mode == rn || !finite(a, b, s) || a == 0 {
		if math.IsInf(s, 0) && finite(a, b) && b != 0 {
			return overflow64(s, mode)
		}
		return s
	}
	// sign(a/b − s) = sign(a − s·b)·sign(b), computed exactly.
	r := new(big.Float).SetPrec(bigPrec).Mul(bigOf(s), bigOf(b))
	r.Sub(bigOf(a), r)
	cmp := r.Sign()
	if b < 0 {
		cmp = -cmp
	}
	return adjust64(s, cmp, mode)
}

func sqrt64(a float64, mode rmode) float64 {
	s := math.Sqrt(a)
	if mode == rn || !finite(s) || s == 0 {
		return s
	}
	r := new(big.Float).SetPrec(bigPrec).Mul(bigOf(s), bigOf(s))
	r.Sub(bigOf(a), r)
	return adjust64(s, r.Sign(), mode)
}

func sign(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func canon64(x float64) uint64 {
	if math.IsNaN(x) {
		return nan64
	}
	return math.Float64bits(x)
}

// Half precision.

// f16ToF64 decodes IEEE binary16 bits.
func f16ToF64(h uint16) float64 {
	sgn := 1.0
	if h&0x8000 != 0 {
		sgn = -1
	}
	e := int(h>>10) & 0x1F
	m := float64(h & 0x3FF)
	switch e {
	case 0:
		return sgn * math.Ldexp(m, -24)
	case 31:
		if m == 0 {
			return sgn * math.Inf(1)
		}
		return math.NaN()
	}
	return sgn * math.Ldexp(1024+m, e-25)
}

// f64ToF16 encodes x (already rounded to binary16 values, or ±Inf, NaN).
func f64ToF16(x float64) uint16 {
	if math.IsNaN(x) {
		return 0x7FFF
	}
	var s uint16
	if math.Signbit(x) {
		s = 0x8000
		x = -x
	}
	if math.IsInf(x, 0) {
		return s | 0x7C00
	}
	if x < 0x1p-14 { // subnormal or zero
		return s | uint16(math.Ldexp(x, 24))
	}
	fr, exp := math.Frexp(x) // x = fr·2^exp, fr in [0.5, 1)
	m := uint16(math.Ldexp(fr, 11)) - 1024
	return s | uint16(exp+14)<<10 | m
}

func bf16ToF64(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }

func f64ToBF16(x float64) uint16 {
	if math.IsNaN(x) {
		return 0x7FFF
	}
	return uint16(math.Float32bits(float32(x)) >> 16)
}

// roundF16 rounds s+e to binary16 bits.
func roundF16(s, e float64, mode rmode) uint16 { return f64ToF16(roundFmt(s, e, mode, fmtF16)) }

// roundBF16 rounds s+e to bfloat16 bits.
func roundBF16(s, e float64, mode rmode) uint16 { return f64ToBF16(roundFmt(s, e, mode, fmtBF16)) }

// exactPair returns an exact big value as s = RN_double(x) and its residual
// (the residual itself rounded, which keeps its sign and suffices for
// roundFmt at precisions ≤ 24 bits).
func exactPair(x *big.Float) (float64, float64) {
	s, _ := x.Float64()
	r := new(big.Float).SetPrec(bigPrec).Sub(x, bigOf(s))
	e, _ := r.Float64()
	return s, e
}
