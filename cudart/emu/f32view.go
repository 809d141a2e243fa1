package emu

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// The f32 add, sub and mul of a full warp on a little-endian host read
// each operand lane's low 32 bits as a float32 in place, instead of
// loading the lane into an integer register and moving it to a
// floating-point one: a third fewer instructions a lane. The bits are the
// same as those of execAddF32, execSubF32 and execMulF32, which
// fastFloat picks elsewhere.

// littleEndian reports whether the host stores a uint64's low 32 bits
// first, where f32Lanes finds them.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// f32Lanes views the 32 lanes of a register as 64 float32s: on a
// little-endian host lane l's low 32 bits are element 2l.
func f32Lanes(r *[32]uint64) *[64]float32 { return (*[64]float32)(unsafe.Pointer(r)) }

func execAddF32LE(w *warp, in *inst, m uint32) {
	if m != fullMask {
		execAddF32(w, in, m)
		return
	}
	d, a, b := w.ra(in.d), f32Lanes(w.ra(in.a)), f32Lanes(w.ra(in.b))
	var nan uint32
	for l := range d {
		r := math.Float32bits(a[2*l] + b[2*l])
		nan |= nanBit32(r)
		d[l] = uint64(r)
	}
	if nan != 0 {
		canonRun32(d)
	}
}

func execSubF32LE(w *warp, in *inst, m uint32) {
	if m != fullMask {
		execSubF32(w, in, m)
		return
	}
	d, a, b := w.ra(in.d), f32Lanes(w.ra(in.a)), f32Lanes(w.ra(in.b))
	var nan uint32
	for l := range d {
		r := math.Float32bits(a[2*l] - b[2*l])
		nan |= nanBit32(r)
		d[l] = uint64(r)
	}
	if nan != 0 {
		canonRun32(d)
	}
}

func execMulF32LE(w *warp, in *inst, m uint32) {
	if m != fullMask {
		execMulF32(w, in, m)
		return
	}
	d, a, b := w.ra(in.d), f32Lanes(w.ra(in.a)), f32Lanes(w.ra(in.b))
	var nan uint32
	for l := range d {
		r := math.Float32bits(a[2*l] * b[2*l])
		nan |= nanBit32(r)
		d[l] = uint64(r)
	}
	if nan != 0 {
		canonRun32(d)
	}
}
