package oracle

import (
	"math"
	"slices"
	"strings"
)

// The documented error of each approximate float32 instruction a kernel
// of this field compiles to on sm_90 (PTX ISA, "Floating-Point
// Instructions"; nvcc and Triton 3.6 emit them for '/', sqrt, rsqrt, exp
// and log). The bounds of this package are derived for these, not for
// correct rounding. A bound "k ulp" is read, as ptxprop's emulator reads
// it, as k ulp from the correctly rounded result, so the value lies within
// (k+½) ulp of the exact one: (2k+1)·u relative for a normal result
// (ulpErr) and (2k+1)·η absolute for a subnormal one (ulpUnderflow).
var (
	// DivFullRelErr is div.full.f32 ("maximum ulp error is 2 across the
	// full range of inputs"): 5u. Triton lowers float32 '/' to it; div.rn
	// (u) and CUDA's '/' are within it. A quotient of 2^-126 or less
	// is within DivFullUnderflow.
	DivFullRelErr = ulpErr(2)
	// DivFullUnderflow is div.full.f32's absolute error on a subnormal
	// quotient: 2.5 subnormal spacings, 2.5·2^-149 = 5η.
	DivFullUnderflow = ulpUnderflow(2)
	// SqrtApproxRelErr is sqrt.approx.f32: relative error ≤ 2^-23 (2u).
	// sqrt.rn (½ ulp) is within it. The square root of a nonnegative
	// float32 is never subnormal.
	SqrtApproxRelErr = 0x1p-23
	// RsqrtApproxRelErr is rsqrt.approx.f32: relative error ≤ 2^-22.9
	// (≈ 2.14u); CUDA's rsqrtf (2 ulp, 5u) is the larger and is what
	// rsqrtErr takes.
	RsqrtApproxRelErr = math.Exp2(-22.9)
	// Lg2ApproxRelErr is lg2.approx.f32 outside (0.5, 2): relative error
	// ≤ 2^-22 (4u); inside, Lg2ApproxAbsErr.
	Lg2ApproxRelErr = 0x1p-22
	// Lg2ApproxAbsErr is lg2.approx.f32 on (0.5, 2): absolute error ≤ 2^-22.
	Lg2ApproxAbsErr = 0x1p-22
)

// ulpUnderflow returns the absolute error of an instruction within k ulp
// of the correctly rounded result when that result is subnormal: the
// correctly rounded value is within ½ spacing of the exact one, so
// (k+½)·2^-149 = (2k+1)·η.
func ulpUnderflow(k float64) float64 { return (2*k + 1) * Eta32 }

// relInv returns the bound on |1/(1+θ) − 1| for |θ| ≤ t < 1: t/(1−t).
func relInv(t float64) float64 {
	if t >= 1 {
		return math.Inf(1)
	}
	return t / (1 - t)
}

// Arith32 evaluates the approximate instructions of a float32 kernel
// formula. The zero value rounds correctly (the *32Naive functions'
// historical arithmetic). With Adversarial set, each instruction returns a
// value its documented bound allows, chosen from Seed and the operands
// only: usually an extreme of the allowed interval (the worst case),
// sometimes the correctly rounded value. ORACLE-SOUND-001 evaluates the
// formulas both ways.
type Arith32 struct {
	Adversarial bool
	Seed        uint64
}

// Op codes that separate the choices of different instructions.
const (
	arDiv uint64 = iota + 1
	arSqrt
	arExp2
	arLg2
)

// pick returns the adversarial choice for op on operands a, b: 0 the
// lower extreme, 1 the upper, 2 the correctly rounded value.
func (ar Arith32) pick(op uint64, a, b float32) uint64 {
	x := ar.Seed ^ op<<56 ^ uint64(math.Float32bits(a)) ^ uint64(math.Float32bits(b))<<24
	x += 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	x ^= x >> 31
	switch x % 8 {
	case 0, 1, 2:
		return 0
	case 3, 4, 5:
		return 1
	}
	return 2
}

// stepULP returns the float32 k representable values above (k > 0) or
// below (k < 0) cr, never crossing to ±Inf.
func stepULP(cr float32, k int) float32 {
	inf := float32(math.Inf(1))
	for ; k > 0 && cr < math.MaxFloat32; k-- {
		cr = math.Nextafter32(cr, inf)
	}
	for ; k < 0 && cr > -math.MaxFloat32; k++ {
		cr = math.Nextafter32(cr, -inf)
	}
	return cr
}

// ulpApprox returns cr moved by k ulp in the direction pick chose; exact
// says the exact result is cr itself when cr is 0 (otherwise a quotient
// that rounded to zero may still move to a subnormal).
func ulpApprox(cr float32, k int, choice uint64, exactZero bool) float32 {
	if cr == 0 && exactZero || math.IsInf(float64(cr), 0) || cr != cr {
		return cr
	}
	switch choice {
	case 0:
		return stepULP(cr, -k)
	case 1:
		return stepULP(cr, k)
	}
	return cr
}

// relApprox returns the float32 at the chosen extreme of [y−a, y+a]
// (a = rel·|y| + abs), or the correctly rounded y.
func relApprox(y, a float64, choice uint64) float32 {
	cr := float32(y)
	if y == 0 || math.IsInf(y, 0) || y != y || math.IsInf(float64(cr), 0) {
		return cr
	}
	switch choice {
	case 0:
		r := float32(y - a)
		if float64(r) < y-a {
			r = math.Nextafter32(r, float32(math.Inf(1)))
		}
		return r
	case 1:
		r := float32(y + a)
		if float64(r) > y+a {
			r = math.Nextafter32(r, float32(math.Inf(-1)))
		}
		return r
	}
	return cr
}

// Div is div.full.f32: within 2 ulp of the correctly rounded quotient,
// subnormal quotients included.
func (ar Arith32) Div(a, b float32) float32 {
	cr := a / b
	if !ar.Adversarial {
		return cr
	}
	return ulpApprox(cr, 2, ar.pick(arDiv, a, b), a == 0 || math.IsInf(float64(b), 0))
}

// Sqrt is sqrt.approx.f32: within 2^-23 relative of √x.
func (ar Arith32) Sqrt(x float32) float32 {
	y := math.Sqrt(float64(x))
	if !ar.Adversarial {
		return float32(y)
	}
	return relApprox(y, SqrtApproxRelErr*y, ar.pick(arSqrt, x, 0))
}

// Exp2 is ex2.approx.f32: within 2 ulp of the correctly rounded 2^x.
func (ar Arith32) Exp2(x float32) float32 {
	cr := float32(math.Exp2(float64(x)))
	if !ar.Adversarial {
		return cr
	}
	return ulpApprox(cr, 2, ar.pick(arExp2, x, 0), false)
}

// Lg2 is lg2.approx.f32: within 2^-22 absolute of log2 x on (0.5, 2) and
// 2^-22 relative elsewhere.
func (ar Arith32) Lg2(x float32) float32 {
	y := math.Log2(float64(x))
	if !ar.Adversarial {
		return float32(y)
	}
	a := Lg2ApproxRelErr * math.Abs(y)
	if x > 0.5 && x < 2 {
		a = Lg2ApproxAbsErr
	}
	return relApprox(y, a, ar.pick(arLg2, x, 0))
}

// Covers reports whether the bounds of this package hold for a kernel
// that computes a division, square root, reciprocal square root, exp2 or
// log2 with the approximate instruction inst (opcode and modifiers, as
// ptx.Approximation.Inst names it), and says why not otherwise. Covered:
// div.full.f32 and rcp.approx.f32 (1 ulp, within div.full's 2), sqrt,
// rsqrt, ex2 and lg2 .approx.f32. Their .ftz forms are covered too: the
// arguments of sqrt and rsqrt are v = var + eps ≥ eps, normal for every
// eps ≥ 2^-126; exp2's results below 2^-126 are flushed only in the
// softmax, whose bound carries 2^-126 per element, and the RoPE frequency
// is at least 1/θ; log2 takes θ. Not covered: div.full.ftz (a flushed
// mean or quotient errs by up to 2^-126, not 5η), div.approx (no bound for
// |divisor| > 2^126), sin/cos.approx (no bound beyond 100π, where RoPE
// angles go), tanh.approx, and every non-.f32 form.
func Covers(inst string) (bool, string) {
	parts := strings.Split(inst, ".")
	has := func(m string) bool { return slices.Contains(parts[1:], m) }
	if !has("f32") {
		return false, inst + ": only .f32 forms are derived"
	}
	switch parts[0] {
	case "div":
		if has("full") && !has("ftz") {
			return true, ""
		}
		if has("full") {
			return false, inst + ": flushes subnormal quotients (error up to 2^-126, the bounds allow 5·2^-150)"
		}
		return false, inst + ": no bound for divisors beyond 2^126"
	case "rcp", "sqrt", "rsqrt", "ex2", "lg2":
		if has("approx") {
			return true, ""
		}
	}
	return false, inst + ": not among the instructions the bounds are derived for (div.full, rcp/sqrt/rsqrt/ex2/lg2.approx .f32)"
}
