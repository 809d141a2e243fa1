// Package mufutab encodes and decodes the tables of ptxprop's bit-exact
// models of the GPU's multi-function unit (MUFU): for each approximate
// instruction, the GPU's output for every key (a mantissa, a fixed-point
// fraction), measured on the GPU over all 2^32 inputs (scripts/mufuprobe).
//
// A table is stored as the difference, entry by entry, from a reference
// function of the key computed in float64 and rounded to float32 (the
// correctly rounded value, or within an ulp of it): small numbers that
// compress well. An entry is one byte, the difference in units in the last
// place (−127…127), or the escape byte 0x80 followed by the entry's four
// bytes (little-endian) where the difference does not fit or the sign
// differs. The decoder checks the SHA-256 of the whole decoded table, so a
// platform whose float64 functions round one entry differently is refused
// rather than modelled wrongly.
package mufutab

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
)

// Table names, the key each is indexed by, and its reference function.
const (
	// Rsqrt: MUFU.RSQ (rsqrt.approx.ftz.f32) of 1.m·2^p, key p<<23 | m.
	Rsqrt = "rsqrt"
	// Sqrt: MUFU.SQRT (sqrt.approx.ftz.f32) of 1.m·2^p, key p<<23 | m.
	Sqrt = "sqrt"
	// Ex2: MUFU.EX2 (ex2.approx.ftz.f32) of ±f/2^23, key s<<23 | f.
	Ex2 = "ex2"
	// Sin, Cos: MUFU.SIN, MUFU.COS of k/2^25 revolutions, key k.
	Sin = "sin"
	Cos = "cos"
	// Lg2: MUFU.LG2 (lg2.approx.ftz.f32) of 1.m·2^(b−1), key b<<23 | m: the
	// logarithm of the mantissa rounded toward zero, as log2 of x in
	// [0.5, 1) (b = 0) and in [1, 2) (b = 1).
	Lg2 = "lg2"
	// Rcp64: the high word of MUFU.RCP64H (rcp.approx.ftz.f64) of 1.m
	// (m the 20 high mantissa bits), key m.
	Rcp64 = "rcp64"
	// Tanh: MUFU.TANH (tanh.approx.f32) of x = 1.m·2^(e−127) for the
	// biased exponents e from TanhFirstExp to TanhLastExp, whose output
	// is a function of the leading TanhKeyBits[e−TanhFirstExp] bits of m:
	// the binades' keys one after the other (TanhKey).
	Tanh = "tanh"
)

// The binades of the Tanh table: tanh.approx.f32 of x is x below
// 2^(TanhFirstExp−127) = 2^−8 and 1 from 2^(TanhLastExp−126) = 8 on.
const (
	TanhFirstExp = 119
	TanhLastExp  = 129
)

// TanhKeyBits is, for each binade of the Tanh table, the number of leading
// mantissa bits its output depends on (measured: the fewest with which the
// output is a function of them, on every input of the binade).
var TanhKeyBits = [TanhLastExp - TanhFirstExp + 1]uint{17, 17, 17, 18, 18, 19, 19, 19, 20, 21, 20}

// tanhBase[i] is the index of binade i's first key in the Tanh table.
var tanhBase = func() (b [len(TanhKeyBits) + 1]uint32) {
	for i, k := range TanhKeyBits {
		b[i+1] = b[i] + 1<<k
	}
	return
}()

// TanhKey returns the Tanh table index of the positive float32 bits x,
// whose biased exponent is in [TanhFirstExp, TanhLastExp].
func TanhKey(x uint32) uint32 {
	i := x>>23 - TanhFirstExp
	return tanhBase[i] + x&0x7FFFFF>>(23-TanhKeyBits[i])
}

// TanhInputs returns the first and the last input (float32 bits) of key k
// of the Tanh table.
func TanhInputs(k uint32) (first, last uint32) {
	i := 0
	for k >= tanhBase[i+1] {
		i++
	}
	sh := 23 - TanhKeyBits[i]
	first = uint32(TanhFirstExp+i)<<23 | (k-tanhBase[i])<<sh
	return first, first | 1<<sh - 1
}

// tanhInput returns the input at the middle of key k of the Tanh table.
func tanhInput(k uint32) float64 {
	first, last := TanhInputs(k)
	return float64(math.Float32frombits(first | (last-first+1)>>1))
}

// Size is the number of entries of table name.
func Size(name string) int {
	switch name {
	case Rsqrt, Sqrt, Ex2, Lg2:
		return 1 << 24
	case Sin, Cos:
		return 1 << 25
	case Rcp64:
		return 1 << 20
	case Tanh:
		return int(tanhBase[len(TanhKeyBits)])
	}
	return 0
}

// Ref returns the reference value (float32 bits, or the high word for
// Rcp64) of entry k of table name.
func Ref(name string, k uint32) uint32 {
	switch name {
	case Rsqrt, Sqrt:
		v := float64(math.Float32frombits((127+k>>23)<<23 | k&0x7FFFFF))
		if name == Sqrt {
			return math.Float32bits(float32(math.Sqrt(v)))
		}
		return math.Float32bits(float32(1 / math.Sqrt(v)))
	case Lg2:
		v := float64(math.Float32frombits((126+k>>23)<<23 | k&0x7FFFFF))
		return math.Float32bits(float32(math.Log2(v)))
	case Ex2:
		f := float64(k&0x7FFFFF) / (1 << 23)
		if k>>23 != 0 {
			f = -f
		}
		return math.Float32bits(float32(math.Exp2(f)))
	case Sin, Cos:
		a := 2 * math.Pi * float64(k) / (1 << 25)
		if name == Cos {
			return math.Float32bits(float32(math.Cos(a)))
		}
		return math.Float32bits(float32(math.Sin(a)))
	case Rcp64:
		v := math.Float64frombits(uint64(0x3FF00000|k) << 32)
		return uint32(math.Float64bits(1/v) >> 32)
	case Tanh:
		return math.Float32bits(float32(math.Tanh(tanhInput(k))))
	}
	return 0
}

const escape = 0x80

// Encode returns the gzip of table t (Size(name) entries) of name: the
// byte stream described in the package documentation.
func Encode(name string, t []uint32) ([]byte, error) {
	if len(t) != Size(name) {
		return nil, fmt.Errorf("mufutab: %s has %d entries, want %d", name, len(t), Size(name))
	}
	raw := make([]byte, 0, len(t)+len(t)/16)
	for k, v := range t {
		ref := Ref(name, uint32(k))
		d := int64(int32(v)) - int64(int32(ref))
		if v>>31 != ref>>31 || d < -127 || d > 127 {
			raw = append(raw, escape, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
			continue
		}
		raw = append(raw, byte(int8(d)))
	}
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decode decodes an Encode'd table of name and checks it against the
// SHA-256 digest (hex) of its entries (little-endian uint32).
func Decode(name string, gz []byte, digest string) ([]uint32, error) {
	n := Size(name)
	if n == 0 {
		return nil, fmt.Errorf("mufutab: unknown table %q", name)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("mufutab: %s: %v", name, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("mufutab: %s: %v", name, err)
	}
	t := make([]uint32, n)
	h := sha256.New()
	var le [4]byte
	p := 0
	for k := range t {
		if p >= len(raw) {
			return nil, fmt.Errorf("mufutab: %s: stream ends at entry %d of %d", name, k, n)
		}
		if raw[p] == escape {
			if p+5 > len(raw) {
				return nil, fmt.Errorf("mufutab: %s: escape cut short at entry %d", name, k)
			}
			t[k] = uint32(raw[p+1]) | uint32(raw[p+2])<<8 | uint32(raw[p+3])<<16 | uint32(raw[p+4])<<24
			p += 5
		} else {
			t[k] = uint32(int32(Ref(name, uint32(k))) + int32(int8(raw[p])))
			p++
		}
		le[0], le[1], le[2], le[3] = byte(t[k]), byte(t[k]>>8), byte(t[k]>>16), byte(t[k]>>24)
		h.Write(le[:])
	}
	if p != len(raw) {
		return nil, fmt.Errorf("mufutab: %s: %d bytes left after %d entries", name, len(raw)-p, n)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		return nil, fmt.Errorf("mufutab: %s: decoded digest %s, want %s (this platform's float64 functions round an entry differently from the one that encoded it)", name, got, digest)
	}
	return t, nil
}

// Digest is the SHA-256 (hex) of the entries of t, as Decode checks it.
func Digest(t []uint32) string {
	h := sha256.New()
	var le [4]byte
	for _, v := range t {
		le[0], le[1], le[2], le[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		h.Write(le[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
