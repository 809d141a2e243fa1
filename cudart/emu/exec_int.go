package emu

import (
	"math/bits"
)

func minInt(t dtype, a, b uint64) uint64 {
	if t.signed() {
		if int64(t.ext(a)) < int64(t.ext(b)) {
			return t.trunc(a)
		}
		return t.trunc(b)
	}
	if t.trunc(a) < t.trunc(b) {
		return t.trunc(a)
	}
	return t.trunc(b)
}

func maxInt(t dtype, a, b uint64) uint64 {
	if minInt(t, a, b) == t.trunc(a) {
		return t.trunc(b)
	}
	return t.trunc(a)
}

func mulHi(t dtype, a, b uint64) uint64 {
	nb := t.bits()
	if nb == 64 {
		if t.signed() {
			hi, _ := bits.Mul64(a, b)
			if int64(a) < 0 {
				hi -= b
			}
			if int64(b) < 0 {
				hi -= a
			}
			return hi
		}
		hi, _ := bits.Mul64(a, b)
		return hi
	}
	return t.trunc((t.ext(a) * t.ext(b)) >> nb)
}

func prmt(a, b, c uint32, mode string) uint64 {
	x := uint64(b)<<32 | uint64(a)
	byteAt := func(i uint32) uint32 { return uint32(x>>(8*(i&7))) & 0xFF }
	var sel [4]uint32
	switch mode {
	case "":
		var r uint32
		for i := 0; i < 4; i++ {
			s := c >> (4 * i) & 0xF
			v := byteAt(s & 7)
			if s&8 != 0 {
				v = 0
				if v2 := byteAt(s & 7); v2&0x80 != 0 {
					v = 0xFF
				}
			}
			r |= v << (8 * i)
		}
		return uint64(r)
	case "f4e":
		n := c & 3
		sel = [4]uint32{n, n + 1, n + 2, n + 3}
	case "b4e":
		n := c & 3
		sel = [4]uint32{n, (n - 1) & 7, (n - 2) & 7, (n - 3) & 7}
	case "rc8":
		n := c & 3
		sel = [4]uint32{n, n, n, n}
	case "ecl":
		n := c & 3
		sel = [4]uint32{n, max(n, 1), max(n, 2), 3}
	case "ecr":
		n := c & 3
		sel = [4]uint32{0, min(n, 1), min(n, 2), n}
	case "rc16":
		n := c & 1
		sel = [4]uint32{2 * n, 2*n + 1, 2 * n, 2*n + 1}
	}
	var r uint32
	for i, s := range sel {
		r |= byteAt(s) << (8 * i)
	}
	return uint64(r)
}

// execBfi: bfi.b32 d, a, b, c, e inserts a's low e bits into b at bit c.
func execBfi(w *warp, in *inst, m uint32) {
	d, a, b, c, e := w.r(in.d), w.r(in.a), w.r(in.b), w.r(in.c), w.r(in.e)
	n := uint(in.t.bits())
	forLanes(m, func(l int) {
		pos, ln := uint(c[l]&0xFF), uint(e[l]&0xFF)
		f := b[l]
		for i := uint(0); i < ln && pos+i < n; i++ {
			bit := (a[l] >> i) & 1
			f = f&^(1<<(pos+i)) | bit<<(pos+i)
		}
		d[l] = in.t.trunc(f)
	})
}

// Carry-chain arithmetic (add.cc, addc, sub.cc, subc, mad.cc, madc).
const (
	ccAdd uint8 = iota
	ccSub
	ccMadLo
	ccMadHi
)

func execCarry(w *warp, in *inst, m uint32) {
	d, a, b := w.r(in.d), w.r(in.a), w.r(in.b)
	var c []uint64
	if in.c >= 0 {
		c = w.r(in.c)
	}
	t := in.t
	useCarry := in.mode == 1 // addc/subc/madc read CC.CF
	var cout uint32
	nb := t.bits()
	forLanes(m, func(l int) {
		x, y := t.trunc(a[l]), t.trunc(b[l])
		var cin uint64
		if useCarry {
			cin = uint64(w.carry >> l & 1)
		}
		var res, co uint64
		switch in.sub {
		case ccAdd:
			res, co = addCarry(x, y, cin, nb)
		case ccSub:
			res, co = subBorrow(x, y, cin, nb)
		case ccMadLo, ccMadHi:
			var p uint64
			if nb == 64 {
				hi, lo := bits.Mul64(x, y)
				p = lo
				if in.sub == ccMadHi {
					p = hi
				}
			} else {
				full := x * y
				p = full & t.mask()
				if in.sub == ccMadHi {
					p = full >> nb
				}
			}
			res, co = addCarry(p, t.trunc(c[l]), cin, nb)
		}
		d[l] = res
		if co != 0 {
			cout |= 1 << l
		}
	})
	if in.sat { // .cc: write CC.CF
		w.carry = w.carry&^m | cout
	}
}

func addCarry(x, y, cin uint64, nb uint) (uint64, uint64) {
	if nb == 64 {
		s, c := bits.Add64(x, y, cin)
		return s, c
	}
	s := x + y + cin
	return s & (1<<nb - 1), s >> nb & 1
}

func subBorrow(x, y, bin uint64, nb uint) (uint64, uint64) {
	if nb == 64 {
		s, b := bits.Sub64(x, y, bin)
		return s, b
	}
	s := x - y - bin
	return s & (1<<nb - 1), s >> 63 & 1
}

func b2u(b bool) uint {
	if b {
		return 1
	}
	return 0
}
