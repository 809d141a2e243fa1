package emu

import "math"

// satfiniteSupported reports whether cvt.satfinite converts st to dt here:
// .f32 to .f16, .bf16, .f16x2 or .bf16x2 (the 8-, 6- and 4-bit formats are
// not supported at all).
func satfiniteSupported(dt, st dtype) bool {
	return st.k == 'f' && st.n == 4 && (dt.k == 'h' || dt.k == 'H' || dt.k == 'x' || dt.k == 'X')
}

// satfiniteWrap applies cvt's .satfinite to conv, a conversion to the
// 16-bit float type dt: a NaN input stays NaN, and an input whose
// magnitude exceeds the format's largest finite value MAX_NORM (±Inf
// included) gives ±MAX_NORM (PTX ISA, cvt). Rounding a finite input to
// infinity is the only way a result can exceed MAX_NORM, so the infinite
// results of conv are what it replaces.
func satfiniteWrap(dt, st dtype, conv func(uint64) uint64) func(uint64) uint64 {
	maxNorm := uint64(0x7bff) // f16: 65504
	if dt.k == 'H' {
		maxNorm = 0x7f7f // bf16: (2 − 2^-7)·2^127
	}
	return func(a uint64) uint64 {
		r := conv(a)
		if math.IsNaN(fval(st, a)) {
			return r
		}
		if r&0x7fff == maxNorm+1 { // ±Inf (0x7c00, 0x7f80)
			return r&0x8000 | maxNorm
		}
		return r
	}
}
