package emu

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"sync"
)

// The float32 reciprocal and divisions that are not correctly rounded,
// as an sm_90 GPU (H200) computes them, bit for bit. ptxas lowers each to
// the hardware reciprocal MUFU.RCP and ordinary multiplies:
//
//	div.full.f32 d, x, y:   if |y| > 2^126 { x, y = x·0.25, y·0.25 }
//	                        if |y| < 2^−126 { x, y = x·2^24, y·2^24 }  (both tests on the original y)
//	                        d = RN(MUFU.RCP(y) · x)
//	div.full.ftz.f32:       the 0.25 step only, with flushing multiplies
//	div.approx.f32:         the 2^24 step only
//	div.approx.ftz.f32:     d = RN_ftz(MUFU.RCP(y) · x)
//	rcp.approx.f32:         s = 2^24, 0.25 or 1 as above; r = RN(s · MUFU.RCP(RN(y·s)))
//	rcp.approx.ftz.f32:     r = MUFU.RCP(y)
//
// MUFU.RCP depends on the mantissa only: it is the correctly rounded
// reciprocal of 1.m plus a correction of −1, 0 or +1 in the last place,
// read from a table of all 2^23 mantissas measured on the GPU, with the
// exponent shifted; a result below 2^−126 is flushed to ±0, a zero or
// subnormal input gives ±inf, ±inf gives ±0. Its relative error is below
// 1.65·2^−24, so div.full is within 2 ulp of the correctly rounded quotient
// for 2^−126 ≤ |y| ≤ 2^126, as the PTX ISA documents.

//go:embed mufu_rcp_delta.bin.gz
var rcpDeltaGz []byte

// rcpDeltaSHA256 is the digest of the decompressed table.
const rcpDeltaSHA256 = "862bea101da795bf5fd46df9dfe5142a79c29edd831e2da30aa84385d885e8fe"

var rcpDelta struct {
	once sync.Once
	d    []int8
	err  error
}

// rcpTable returns the MUFU.RCP correction for each mantissa, decompressing
// it on first use.
func rcpTable() ([]int8, error) {
	rcpDelta.once.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(rcpDeltaGz))
		if err != nil {
			rcpDelta.err = fmt.Errorf("reciprocal table: %v", err)
			return
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			rcpDelta.err = fmt.Errorf("reciprocal table: %v", err)
			return
		}
		if sum := sha256.Sum256(b); len(b) != 1<<23 || hex.EncodeToString(sum[:]) != rcpDeltaSHA256 {
			rcpDelta.err = fmt.Errorf("reciprocal table: %d bytes with digest %x, want %d bytes with digest %s", len(b), sum, 1<<23, rcpDeltaSHA256)
			return
		}
		d := make([]int8, len(b))
		for i, v := range b {
			d[i] = int8(v)
		}
		rcpDelta.d = d
	})
	return rcpDelta.d, rcpDelta.err
}

// mufuRcp returns MUFU.RCP(y) (rcp.approx.ftz.f32) for the float32 bits y.
func mufuRcp(delta []int8, y uint32) uint32 {
	sign, e, m := y&0x80000000, y>>23&0xFF, y&0x7FFFFF
	switch {
	case e == 0xFF && m != 0:
		return nan32
	case e == 0xFF:
		return sign
	case e == 0:
		return sign | 0x7F800000
	}
	// 1/1.m rounded from float64 is correctly rounded: 53 ≥ 2·24+2 bits.
	t := math.Float32bits(float32(1/float64(math.Float32frombits(0x3F800000|m)))) + uint32(int32(delta[m]))
	re := int(t>>23&0xFF) + 127 - int(e)
	if re < 1 {
		return sign
	}
	return sign | uint32(re)<<23 | t&0x7FFFFF
}

// fmulRN is the GPU's FMUL: the product rounded to nearest, NaN canonical.
func fmulRN(a, b uint32) uint32 {
	return canon32(math.Float32frombits(a) * math.Float32frombits(b))
}

// fmulFTZ is FMUL.FTZ: subnormal inputs are ±0, and a result whose value
// rounded to 24 bits with an unbounded exponent is below 2^−126 is ±0
// (tininess after rounding).
func fmulFTZ(a, b uint32) uint32 {
	x, y := float64(ftz32(math.Float32frombits(a))), float64(ftz32(math.Float32frombits(b)))
	p := x * y // exact: 24×24 bits, within float64's range
	if math.IsNaN(p) {
		return nan32
	}
	if p != 0 && math.Abs(p) < 0x1p-126 {
		// 2^128 scaling brings every product of normals into float32's
		// normal range, so the conversion rounds to 24 bits once.
		if q := float32(p * 0x1p128); math.Abs(float64(q)) < 0x1p2 {
			return math.Float32bits(float32(math.Copysign(0, p)))
		}
		return math.Float32bits(float32(math.Copysign(0x1p-126, p)))
	}
	return math.Float32bits(float32(p))
}

const (
	f32Quarter  = 0x3E800000 // 0.25
	f32Two24    = 0x4B800000 // 2^24
	f32Two126   = 0x7E800000 // 2^126
	f32TwoM126  = 0x00800000 // 2^−126
	f32AbsMask  = 0x7FFFFFFF
	f32ExpField = 0x7F800000
)

// large and small classify |y| against 2^126 and 2^−126 as FSETP does
// (NaN is neither).
func large(y uint32) bool { a := y & f32AbsMask; return a > f32Two126 && a <= f32ExpField }
func small(y uint32) bool { return y&f32AbsMask < f32TwoM126 }

// sm90Div returns the sm_90 model of div.full or div.approx .f32 on bits.
func sm90Div(delta []int8, full, ftz bool) func(a, b uint64) uint64 {
	return func(a, b uint64) uint64 {
		x, y := uint32(a), uint32(b)
		if ftz {
			if full && large(y) {
				x, y = fmulFTZ(x, f32Quarter), fmulFTZ(y, f32Quarter)
			}
			return uint64(fmulFTZ(mufuRcp(delta, y), x))
		}
		big, tiny := large(y), small(y)
		if full && big {
			x, y = fmulRN(x, f32Quarter), fmulRN(y, f32Quarter)
		}
		if tiny {
			x, y = fmulRN(x, f32Two24), fmulRN(y, f32Two24)
		}
		return uint64(fmulRN(mufuRcp(delta, y), x))
	}
}

// sm90DivFMA returns the sm_90 model of a div.full or div.approx .f32 of
// x by y whose final multiply ptxas fused with an add of z:
// RN(±MUFU.RCP(y')·x' + z) with x', y' scaled as in sm90Div (one rounding;
// the .ftz forms flush inputs and result).
func sm90DivFMA(delta []int8, full, ftz bool) func(x, y, z uint32, neg bool) uint32 {
	return func(x, y, z uint32, neg bool) uint32 {
		if ftz {
			if full && large(y) {
				x, y = fmulFTZ(x, f32Quarter), fmulFTZ(y, f32Quarter)
			}
		} else {
			big, tiny := large(y), small(y)
			if full && big {
				x, y = fmulRN(x, f32Quarter), fmulRN(y, f32Quarter)
			}
			if tiny {
				x, y = fmulRN(x, f32Two24), fmulRN(y, f32Two24)
			}
		}
		r, xf, zf := math.Float32frombits(mufuRcp(delta, y)), math.Float32frombits(x), math.Float32frombits(z)
		if ftz {
			r, xf, zf = ftz32(r), ftz32(xf), ftz32(zf)
		}
		if neg {
			r = -r
		}
		v := fma32(r, xf, zf, rn)
		if ftz {
			v = ftzBits32(v)
		}
		return v
	}
}

// sm90Rcp returns the sm_90 model of rcp.approx .f32 on bits.
func sm90Rcp(delta []int8, ftz bool) func(a uint64) uint64 {
	return func(a uint64) uint64 {
		y := uint32(a)
		if ftz {
			return uint64(mufuRcp(delta, y))
		}
		var s uint32 = 0x3F800000
		switch {
		case small(y):
			s = f32Two24
		case large(y):
			s = f32Quarter
		}
		return uint64(fmulRN(s, mufuRcp(delta, fmulRN(y, s))))
	}
}
