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
	"slices"
	"strings"
	"sync"

	"github.com/ptxprop/ptxprop/internal/mufutab"
)

// The other approximate instructions that lower to the multi-function unit,
// as an sm_90 GPU (H200) computes them, bit for bit. Each MUFU operation is
// a table of its output for every key, measured on the GPU, and a rule
// that maps an input to a key and the key's entry to the output
// (scripts/mufuprobe, which checked each rule on all 2^32 inputs):
//
//	MUFU.RSQ(x), MUFU.SQRT(x), x = 1.m·2^(2k+p): T[p, m]·2^∓k
//	MUFU.EX2(x), |x| = i + f (f cut to 23 fraction bits toward 0):
//	                        T[sign x, f]·2^±i, flushed to 0 below 2^−126
//	MUFU.SIN(r), MUFU.COS(r) (r in revolutions), |r| = i + f (f cut to
//	                        25 fraction bits toward 0): ±T[f] (sin odd,
//	                        cos even); |r| ≥ 2^30 counts as f = 0
//	MUFU.LG2(x), x = 1.m·2^n: RZ(n + T[1, m]) for n ≥ 0 and
//	                        RZ(n + 1 + T[0, m]) for n < 0, where T[1, m] is
//	                        lg2 of 1.m and T[0, m] of 0.5·1.m, each rounded
//	                        toward zero (the logarithm is exact to 2^−36;
//	                        these tables hold the bits that RZ keeps)
//	MUFU.RCP64H(x), x = 1.m·2^e (m the 20 high mantissa bits): high word
//	                        T[m]·2^−e, low word 0
//	MUFU.TANH(x), |x| = 1.m·2^(e−127): ±T[e, leading k_e bits of m] for
//	                        2^−8 ≤ |x| < 8 (k_e from 17 to 21 bits, growing
//	                        with the binade: mufutab.TanhKeyBits), x below,
//	                        ±1 above
//
// Subnormal inputs count as ±0, NaN gives 0x7FFFFFFF. ptxas wraps them
// (cuobjdump -sass):
//
//	rsqrt.approx.f32:  |x| < 2^−126: MUFU.RSQ(x·2^24)·2^12, else MUFU.RSQ(x)
//	sqrt.approx.f32:   |x| < 2^−126: MUFU.SQRT(x·2^24)·2^−12
//	ex2.approx.f32:    x < −126: h = MUFU.EX2(x·0.5), h·h (subnormal results)
//	lg2.approx.f32:    |x| < 2^−126: MUFU.LG2(x·2^24) − 24
//	sin/cos.approx(.ftz).f32: MUFU.SIN/COS(FMUL.RZ(x, RN(1/2π)))
//	rcp.approx.ftz.f64: MUFU.RCP64H on the high word
//	tanh.approx.f32:   MUFU.TANH (subnormals pass through unchanged)
//
// The .ftz forms are the bare MUFU operation.

var (
	//go:embed mufu_rsqrt.bin.gz
	mufuRsqrtGz []byte
	//go:embed mufu_sqrt.bin.gz
	mufuSqrtGz []byte
	//go:embed mufu_ex2.bin.gz
	mufuEx2Gz []byte
	//go:embed mufu_sin.bin.gz
	mufuSinGz []byte
	//go:embed mufu_cos.bin.gz
	mufuCosGz []byte
	//go:embed mufu_rcp64.bin.gz
	mufuRcp64Gz []byte
	//go:embed mufu_lg2.bin.gz
	mufuLg2Gz []byte
	//go:embed mufu_tanh.bin.gz
	mufuTanhGz []byte
	//go:embed mufu_halves.bin.gz
	mufuHalvesGz []byte
)

// The half-precision approximate instructions, measured on the GPU for
// every 16-bit input (scripts/mufuprobe/tanhprobe.cu): mufu_halves.bin.gz
// is the gzip of four tables of 2^16 little-endian outputs, in the order
// of these offsets. The .f16x2/.bf16x2 forms compute each half alone
// (measured: 0 of 2^16 lane pairs differ).
const (
	halfEx2F16   = 0 << 16 // ex2.approx.f16
	halfTanhF16  = 1 << 16 // tanh.approx.f16
	halfEx2BF16  = 2 << 16 // ex2.approx.ftz.bf16
	halfTanhBF16 = 3 << 16 // tanh.approx.bf16
)

var halvesOnce = sync.OnceValues(func() ([]uint16, error) {
	zr, err := gzip.NewReader(bytes.NewReader(mufuHalvesGz))
	if err != nil {
		return nil, fmt.Errorf("mufu halves: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("mufu halves: %v", err)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != mufuDigests["halves"] || len(raw) != 8<<16 {
		return nil, fmt.Errorf("mufu halves: decoded digest %x, want %s", sum, mufuDigests["halves"])
	}
	t := make([]uint16, 4<<16)
	for i := range t {
		t[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
	}
	return t, nil
})

// sm90Half returns the sm_90 model of ex2 or tanh .approx on halves (bf
// for .bf16), both halves of a .x2 register.
func sm90Half(sub uint8, bf, x2 bool) (func(a uint64) uint64, error) {
	t, err := halvesOnce()
	if err != nil {
		return nil, err
	}
	off := map[[2]bool]int{{false, false}: halfEx2F16, {false, true}: halfTanhF16, {true, false}: halfEx2BF16, {true, true}: halfTanhBF16}[[2]bool{bf, sub == apTanh}]
	t = t[off : off+1<<16]
	if x2 {
		return func(a uint64) uint64 { return uint64(t[uint16(a)]) | uint64(t[uint16(a>>16)])<<16 }, nil
	}
	return func(a uint64) uint64 { return uint64(t[uint16(a)]) }, nil
}

var mufuGz = map[string][]byte{
	mufutab.Rsqrt: mufuRsqrtGz, mufutab.Sqrt: mufuSqrtGz, mufutab.Ex2: mufuEx2Gz,
	mufutab.Sin: mufuSinGz, mufutab.Cos: mufuCosGz, mufutab.Rcp64: mufuRcp64Gz, mufutab.Lg2: mufuLg2Gz,
	mufutab.Tanh: mufuTanhGz,
}

type mufuEntry struct {
	once sync.Once
	t    []uint32
	err  error
}

var mufuTables = map[string]*mufuEntry{
	mufutab.Rsqrt: {}, mufutab.Sqrt: {}, mufutab.Ex2: {}, mufutab.Sin: {}, mufutab.Cos: {}, mufutab.Rcp64: {},
	mufutab.Lg2: {}, mufutab.Tanh: {},
}

// mufuTable returns table name, decoding it on first use.
func mufuTable(name string) ([]uint32, error) {
	e := mufuTables[name]
	e.once.Do(func() { e.t, e.err = mufutab.Decode(name, mufuGz[name], mufuDigests[name]) })
	return e.t, e.err
}

const canonNaN32 = 0x7FFFFFFF

func isNaN32(u uint32) bool { return u&0x7FFFFFFF > 0x7F800000 }

// mufuRsqSqrt is MUFU.RSQ (rsq) or MUFU.SQRT on the bits x.
func mufuRsqSqrt(t []uint32, rsq bool, x uint32) uint32 {
	s, e, m := x>>31, x>>23&0xFF, x&0x7FFFFF
	switch {
	case e == 0xFF && m != 0:
		return canonNaN32
	case e == 0: // ±0 and subnormals
		if rsq {
			return s<<31 | 0x7F800000
		}
		return s << 31
	case s != 0:
		return canonNaN32
	case e == 0xFF:
		if rsq {
			return 0
		}
		return 0x7F800000
	}
	d := int(e) - 127
	p := d & 1
	k := (d - p) / 2
	if rsq {
		k = -k
	}
	return shiftExp32(t[uint32(p)<<23|m], k)
}

// shiftExp32 scales the normal float bits v by 2^n: ±0 below 2^−126, ±inf
// above the largest float.
func shiftExp32(v uint32, n int) uint32 {
	e := int(v>>23&0xFF) + n
	switch {
	case e < 1:
		return v & 0x80000000
	case e > 254:
		return v&0x80000000 | 0x7F800000
	}
	return v&0x807FFFFF | uint32(e)<<23
}

// mufuEx2 is MUFU.EX2 on the bits x.
func mufuEx2(t []uint32, x uint32) uint32 {
	s, e := x>>31, x>>23&0xFF
	v := math.Float32frombits(x)
	switch {
	case isNaN32(x):
		return canonNaN32
	case e == 0:
		return 0x3F800000
	case !(v > -127 && v < 128): // also ±inf
		if s != 0 {
			return 0
		}
		return 0x7F800000
	}
	q := int64(math.Abs(float64(v)) * (1 << 23)) // truncation toward zero; exact below 2^30
	i := int(q >> 23)
	if s != 0 {
		i = -i
	}
	return shiftExp32(t[s<<23|uint32(q)&0x7FFFFF], i)
}

// faddRN is the GPU's FADD: the sum rounded to nearest, NaN canonical.
func faddRN(a, b uint32) uint32 {
	return canon32(math.Float32frombits(a) + math.Float32frombits(b))
}

// rz32 rounds v to float32 toward zero.
func rz32(v float64) uint32 {
	r := float32(v)
	if math.Abs(float64(r)) > math.Abs(v) {
		r = math.Nextafter32(r, 0)
	}
	return math.Float32bits(r)
}

// mufuLg2 is MUFU.LG2 on the bits x.
func mufuLg2(t []uint32, x uint32) uint32 {
	s, e, m := x>>31, int(x>>23&0xFF), x&0x7FFFFF
	switch {
	case e == 0xFF && m != 0:
		return canonNaN32
	case e == 0:
		return 0xFF800000 // −inf for ±0 and subnormals
	case s != 0:
		return canonNaN32
	case e == 0xFF:
		return 0x7F800000
	}
	// Both sums are exact in float64: n < 2^8 and the entries are
	// multiples of 2^−36.
	if n := e - 127; n < 0 {
		return rz32(float64(n+1) + float64(math.Float32frombits(t[m])))
	}
	return rz32(float64(e-127) + float64(math.Float32frombits(t[1<<23|m])))
}

// fmulRZ is FMUL.RZ: the product rounded toward zero, subnormals kept.
func fmulRZ(a, b uint32) uint32 {
	p := float64(math.Float32frombits(a)) * float64(math.Float32frombits(b)) // exact
	if math.IsNaN(p) {
		return canonNaN32
	}
	if math.IsInf(p, 0) || p == 0 {
		return math.Float32bits(float32(p))
	}
	r := float32(p)
	if math.Abs(float64(r)) > math.Abs(p) {
		r = math.Nextafter32(r, 0)
	}
	return math.Float32bits(r)
}

// oneOverTwoPi is RN(1/2π), the constant ptxas multiplies by before MUFU.SIN/COS.
const oneOverTwoPi = 0x3E22F983

// mufuSinCos is sin.approx.f32 (cos false) or cos.approx.f32 on the bits x.
func mufuSinCos(t []uint32, cos bool, x uint32) uint32 {
	if x>>23&0xFF == 0xFF {
		return canonNaN32
	}
	if x>>23&0xFF == 0 {
		x &= 0x80000000 // MUFU flushes a subnormal r, and r is subnormal only for subnormal x
	}
	r := fmulRZ(x, oneOverTwoPi)
	neg := r>>31 != 0
	a := math.Abs(float64(math.Float32frombits(r)))
	var k uint32
	if a < 0x1p30 {
		k = uint32(int64(a*(1<<25)) & (1<<25 - 1))
	}
	v := t[k]
	if neg && !cos {
		v ^= 0x80000000
	}
	return v
}

// mufuTanh is tanh.approx.f32 (MUFU.TANH) on the bits x: odd; x itself
// below 2^−8 (subnormals and ±0 included), the table entry of x's key up
// to 8, 1 from 8 on (infinity included); NaN gives 0x7FFFFFFF.
func mufuTanh(t []uint32, x uint32) uint32 {
	s, a := x&0x80000000, x&0x7FFFFFFF
	switch e := a >> 23; {
	case a > 0x7F800000:
		return canonNaN32
	case e < mufutab.TanhFirstExp:
		return x
	case e > mufutab.TanhLastExp:
		return s | 0x3F800000
	}
	return s | t[mufutab.TanhKey(a)]
}

// mufuRcp64 is rcp.approx.ftz.f64 (MUFU.RCP64H) on the bits x.
func mufuRcp64(t []uint32, x uint64) uint64 {
	hi := uint32(x >> 32)
	s, e, m := hi&0x80000000, int(hi>>20&0x7FF), hi&0xFFFFF
	switch {
	case e == 0x7FF && m != 0: // the low word is never read
		return 0x7FFFFFFF << 32
	case e == 0x7FF:
		return uint64(s) << 32
	case e == 0:
		return uint64(s|0x7FF00000) << 32
	}
	v := t[m]
	re := int(v>>20&0x7FF) - (e - 1023)
	if re < 1 {
		return uint64(s) << 32
	}
	return uint64(s|uint32(re)<<20|v&0xFFFFF) << 32
}

// sm90Mufu returns the sm_90 model of the approximate instruction sub
// (.f32, or .f64 for apRcp) with or without .ftz, or nil where there is
// none.
func sm90Mufu(sub uint8, f64, ftz bool) (func(a uint64) uint64, error) {
	load := func(name string) ([]uint32, error) { return mufuTable(name) }
	switch {
	case f64 && sub == apRcp && ftz:
		t, err := load(mufutab.Rcp64)
		if err != nil {
			return nil, err
		}
		return func(a uint64) uint64 { return mufuRcp64(t, a) }, nil
	case f64:
		return nil, nil
	case sub == apRsqrt || sub == apSqrt:
		rsq := sub == apRsqrt
		name := mufutab.Sqrt
		if rsq {
			name = mufutab.Rsqrt
		}
		t, err := load(name)
		if err != nil {
			return nil, err
		}
		if ftz {
			return func(a uint64) uint64 { return uint64(mufuRsqSqrt(t, rsq, uint32(a))) }, nil
		}
		var post uint32 = 0x39800000 // 2^−12
		if rsq {
			post = 0x45800000 // 2^12
		}
		return func(a uint64) uint64 {
			x := uint32(a)
			if x&0x7FFFFFFF < 0x00800000 { // FSETP.GEU |x|, 2^−126 is false
				return uint64(fmulRN(mufuRsqSqrt(t, rsq, fmulRN(x, f32Two24)), post))
			}
			return uint64(mufuRsqSqrt(t, rsq, x))
		}, nil
	case sub == apEx2:
		t, err := load(mufutab.Ex2)
		if err != nil {
			return nil, err
		}
		if ftz {
			return func(a uint64) uint64 { return uint64(mufuEx2(t, uint32(a))) }, nil
		}
		return func(a uint64) uint64 {
			x := uint32(a)
			if v := math.Float32frombits(x); v < -126 { // FSETP.GEU x, −126 is false (not for NaN)
				h := mufuEx2(t, fmulRN(x, 0x3F000000))
				return uint64(fmulRN(h, h))
			}
			return uint64(mufuEx2(t, x))
		}, nil
	case sub == apLg2:
		t, err := load(mufutab.Lg2)
		if err != nil {
			return nil, err
		}
		if ftz {
			return func(a uint64) uint64 { return uint64(mufuLg2(t, uint32(a))) }, nil
		}
		return func(a uint64) uint64 {
			x := uint32(a)
			if x&0x7FFFFFFF < 0x00800000 { // FSETP.GEU |x|, 2^−126 is false
				return uint64(faddRN(mufuLg2(t, fmulRN(x, f32Two24)), 0xC1C00000)) // −24
			}
			return uint64(mufuLg2(t, x))
		}, nil
	case sub == apSin || sub == apCos:
		cos := sub == apCos
		name := mufutab.Sin
		if cos {
			name = mufutab.Cos
		}
		t, err := load(name)
		if err != nil {
			return nil, err
		}
		return func(a uint64) uint64 { return uint64(mufuSinCos(t, cos, uint32(a))) }, nil
	case sub == apTanh:
		t, err := load(mufutab.Tanh)
		if err != nil {
			return nil, err
		}
		return func(a uint64) uint64 { return uint64(mufuTanh(t, uint32(a))) }, nil
	}
	return nil, nil
}

// ApproxModel returns what the emulator computes, by default, for the
// unary approximate instruction op (an opcode with its modifiers, as
// ptx.Approximation.Inst spells it: "tanh.approx.f32",
// "ex2.approx.ftz.bf16x2", "rcp.approx.ftz.f64"): a function from the
// operand's bits to the result's, the sm_90 model. It returns an error for
// an instruction the emulator does not model.
func ApproxModel(op string) (func(a uint64) uint64, error) {
	parts := strings.Split(op, ".")
	has := func(m string) bool { return slices.Contains(parts[1:], m) }
	sub, ok := map[string]uint8{"rcp": apRcp, "sqrt": apSqrt, "rsqrt": apRsqrt, "ex2": apEx2, "lg2": apLg2, "sin": apSin, "cos": apCos, "tanh": apTanh}[parts[0]]
	if !ok || !has("approx") {
		return nil, fmt.Errorf("emu: %s is not a unary approximate instruction", op)
	}
	ftz := has("ftz")
	switch typ := parts[len(parts)-1]; {
	case typ == "f32" && sub == apRcp:
		delta, err := rcpTable()
		if err != nil {
			return nil, err
		}
		return sm90Rcp(delta, ftz), nil
	case typ == "f32" || typ == "f64":
		f, err := sm90Mufu(sub, typ == "f64", ftz)
		if err == nil && f == nil {
			err = fmt.Errorf("emu: %s is not modelled", op)
		}
		return f, err
	case (typ == "f16" || typ == "f16x2" || typ == "bf16" || typ == "bf16x2") && (sub == apEx2 || sub == apTanh):
		return sm90Half(sub, strings.HasPrefix(typ, "bf"), strings.HasSuffix(typ, "x2"))
	}
	return nil, fmt.Errorf("emu: %s is not modelled", op)
}
