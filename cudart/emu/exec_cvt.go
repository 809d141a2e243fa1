package emu

import (
	"math"
	"math/big"
)

func roundInt(x float64, mode rmode) float64 {
	switch mode {
	case rz:
		return math.Trunc(x)
	case rm:
		return math.Floor(x)
	case rp:
		return math.Ceil(x)
	}
	return math.RoundToEven(x)
}

func cvtFloatFloat(dt, st dtype, mode rmode, intRnd, ftz, sat, relu bool) func(uint64) uint64 {
	return func(a uint64) uint64 {
		x := fval(st, a)
		if ftz && st.k == 'f' && st.n == 4 {
			x = float64(ftz32(float32(x)))
		}
		if math.IsNaN(x) {
			if sat {
				return 0 // .sat flushes NaN to +0
			}
			return fbits(dt, math.NaN())
		}
		if intRnd {
			x = roundInt(x, mode)
		}
		var r float64
		switch {
		case dt.k == 'h':
			r = f16ToF64(roundF16(x, 0, mode))
		case dt.k == 'H':
			r = bf16ToF64(roundBF16(x, 0, mode))
		case dt.n == 4:
			r = float64(math.Float32frombits(round32(x, 0, mode)))
			if ftz {
				r = float64(ftz32(float32(r)))
			}
		default:
			r = x
		}
		if sat {
			r = math.Max(0, math.Min(1, r))
		}
		if relu && r < 0 {
			r = 0
		}
		return fbits(dt, r)
	}
}

func cvtFloatInt(dt, st dtype, mode rmode, ftz bool) func(uint64) uint64 {
	lo, hi := intRange(dt)
	return func(a uint64) uint64 {
		x := fval(st, a)
		if ftz && st.k == 'f' && st.n == 4 {
			x = float64(ftz32(float32(x)))
		}
		if math.IsNaN(x) {
			return 0
		}
		x = roundInt(x, mode)
		switch {
		case x <= lo:
			x = lo
		case x >= hi:
			if dt.signed() {
				return dt.mask() >> 1
			}
			return dt.mask()
		}
		if dt.signed() {
			return dt.trunc(uint64(int64(x)))
		}
		if x >= 0x1p63 {
			return uint64(x-0x1p63) + 1<<63
		}
		return dt.trunc(uint64(int64(x)))
	}
}

// intRange returns the range of an integer type as float64 bounds
// (hi is exclusive of values that round to it for 64-bit types).
func intRange(t dtype) (float64, float64) {
	nb := t.bits()
	if t.signed() {
		return -math.Ldexp(1, int(nb-1)), math.Ldexp(1, int(nb-1)) - 1
	}
	return 0, math.Ldexp(1, int(nb)) - 1
}

func cvtIntFloat(dt, st dtype, mode rmode, sat bool) func(uint64) uint64 {
	return func(a uint64) uint64 {
		v := st.ext(a)
		var exact *big.Float
		var s, e float64
		if st.signed() {
			s = float64(int64(v))
			if int64(s) != int64(v) || s == 0x1p63 {
				exact = new(big.Float).SetInt64(int64(v))
			}
		} else {
			s = float64(v)
			if s >= 0x1p64 || uint64(s) != v {
				exact = new(big.Float).SetUint64(v)
			}
		}
		if exact != nil {
			s, e = exactPair(exact)
		}
		var r float64
		switch {
		case dt.k == 'h':
			r = f16ToF64(roundF16(s, e, mode))
		case dt.k == 'H':
			r = bf16ToF64(roundBF16(s, e, mode))
		case dt.n == 4:
			r = float64(math.Float32frombits(round32(s, e, mode)))
		default:
			r = adjust64(s, sign(e), mode)
		}
		if sat {
			r = math.Max(0, math.Min(1, r))
		}
		return fbits(dt, r)
	}
}

func cvtIntInt(dt, st dtype, sat bool) func(uint64) uint64 {
	return func(a uint64) uint64 {
		v := st.ext(a)
		if sat {
			if st.signed() {
				x := int64(v)
				lo, hi := intRange(dt)
				switch {
				case float64(x) < lo:
					return dt.trunc(uint64(int64(lo)))
				case float64(x) > hi:
					if dt.signed() {
						return dt.mask() >> 1
					}
					return dt.mask()
				}
			} else if v > dt.mask()>>b2u(dt.signed()) {
				return dt.mask() >> b2u(dt.signed())
			}
		}
		return dt.ext(v)
	}
}
