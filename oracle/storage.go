package oracle

import (
	"fmt"
	"math"
)

// Storage is the format a kernel keeps a tensor in on the device while it
// computes in float32: float32 itself, or one of the 16-bit formats most
// training kernels load and store.
type Storage uint8

// The storage formats.
const (
	StorageFloat32  Storage = iota // binary32: storage adds no rounding
	StorageBFloat16                // bfloat16: 8-bit exponent, 8-bit significand (7 stored)
	StorageFloat16                 // IEEE binary16: 5-bit exponent, 11-bit significand (10 stored)
)

// storageFormat holds a format's constants: its name, its unit roundoff
// u = 2^-p, η, half the spacing of its subnormals, and its largest finite
// value.
type storageFormat struct {
	name        string
	u, eta, max float64
}

var storageFormats = [...]storageFormat{
	StorageFloat32:  {"float32", U32, 0x1p-150, math.MaxFloat32},
	StorageBFloat16: {"bfloat16", 0x1p-8, 0x1p-134, float64(math.Float32frombits(0x7f7f0000))},
	StorageFloat16:  {"float16", 0x1p-11, 0x1p-25, 65504},
}

// format returns the constants of s; an unknown Storage has float32's.
func (s Storage) format() storageFormat {
	if int(s) < len(storageFormats) {
		return storageFormats[s]
	}
	return storageFormats[StorageFloat32]
}

func (s Storage) String() string {
	if int(s) < len(storageFormats) {
		return storageFormats[s].name
	}
	return fmt.Sprintf("Storage(%d)", uint8(s))
}

// UnitRoundoff returns u of the format under round-to-nearest: 2^-p with p
// the significand's precision (24, 8, 11 bits).
func (s Storage) UnitRoundoff() float64 { return s.format().u }

// Eta returns half the spacing of the format's subnormals, the absolute
// error of rounding a value below the normal range: 2^-150 (float32),
// 2^-134 (bfloat16, which has float32's exponent range), 2^-25 (float16).
func (s Storage) Eta() float64 { return s.format().eta }

// Max returns the largest finite value of the format; larger values round
// to infinity.
func (s Storage) Max() float64 { return s.format().max }

// Bits returns the storage encoding of v rounded to nearest, ties to even
// (the conversion cvt.rn.bf16.f32 / cvt.rn.f16.f32 performs): the low 16
// bits for the 16-bit formats, all 32 for float32. NaN stays NaN.
func (s Storage) Bits(v float32) uint32 {
	b := math.Float32bits(v)
	switch s {
	case StorageBFloat16:
		if v != v {
			return b>>16 | 0x40 // quiet NaN, sign kept
		}
		// Add half an ulp of bf16 minus one, plus the lowest kept bit: ties go
		// to the even neighbour. Overflow carries into the exponent and gives
		// infinity, as it must.
		return (b + 0x7fff + (b>>16)&1) >> 16
	case StorageFloat16:
		return uint32(f32ToF16(b))
	}
	return b
}

// FromBits widens a storage encoding (as Bits returns it) to float32, exactly.
func (s Storage) FromBits(h uint32) float32 {
	switch s {
	case StorageBFloat16:
		return math.Float32frombits((h & 0xffff) << 16)
	case StorageFloat16:
		return f16ToF32(uint16(h))
	}
	return math.Float32frombits(h)
}

// Round returns v rounded to the format and widened back to float32.
func (s Storage) Round(v float32) float32 { return s.FromBits(s.Bits(v)) }

// StorageTol returns the bound to add to an output's tolerance when the
// kernel stores it in s: the float32 result ŷ it computed, within tol of the
// exact y, is rounded once more to s. That rounding's error is at most
// u_s·|ŷ| + η_s (relative half an ulp for a normal result, η_s absolute
// below the normal range), and |ŷ| ≤ |y| + tol, so
//
//	|round_s(ŷ) − y| ≤ tol + u_s·(|y| + tol) + η_s.
//
// The inputs' rounding to s is not part of this bound: the contract's oracle
// must see the inputs as stored (rounded first), not the ones drawn. For
// float32 storage the bound is 0.
func StorageTol(s Storage, y, tol float64) float64 {
	if s == StorageFloat32 {
		return 0
	}
	return s.UnitRoundoff()*(math.Abs(y)+tol) + s.Eta()
}

// f32ToF16 rounds a float32 (bits b) to binary16, ties to even.
func f32ToF16(b uint32) uint16 {
	sign := uint16(b>>16) & 0x8000
	exp := int((b >> 23) & 0xff)
	mant := b & 0x7fffff
	switch {
	case exp == 0xff:
		if mant != 0 {
			return sign | 0x7e00 // quiet NaN
		}
		return sign | 0x7c00
	case exp == 0:
		return sign // float32 subnormals are below half of f16's smallest subnormal
	}
	e := exp - 127 + 15  // biased f16 exponent
	m := mant | 0x800000 // 24-bit significand
	var shift int
	if e >= 1 {
		shift = 13 // keep 11 of 24 bits
	} else {
		shift = 13 + 1 - e // subnormal: fewer bits kept
		if shift > 24 {
			return sign // rounds to zero (below half the smallest subnormal)
		}
		e = 0
	}
	half := uint32(1) << (shift - 1)
	rest := m & (1<<shift - 1)
	q := m >> shift
	if rest > half || rest == half && q&1 == 1 {
		q++
	}
	// q holds the significand with its leading bit (normal) or without it
	// (subnormal); a carry out of it moves into the exponent field by the
	// addition below, which also gives infinity at the top.
	var h uint32
	if e == 0 {
		h = q
	} else {
		h = uint32(e)<<10 + (q - 0x400)
	}
	if h >= 0x7c00 {
		return sign | 0x7c00
	}
	return sign | uint16(h)
}

// f16ToF32 widens binary16 bits to float32, exactly.
func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := int(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		v := float32(mant) * 0x1p-24
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | mant<<13)
}
