package emu

import (
	"encoding/binary"
	"math/bits"
)

// Contiguous warp accesses.
//
// Most global loads and stores of real kernels are coalesced: lane l of a
// full warp accesses element l of one run of 32 (address a0 + l·n for
// n-byte elements). warpGlobal recognises that pattern in one pass over the
// addresses; the functions here then move the run's bytes, write records
// and initialised bits as ranges instead of lane by lane. Every lane of a
// run touches other bytes, so the order in which the lanes apply does not
// change what they leave.

// contigAddrs reports whether every lane's address base[l]+off is
// base[0]+off + l·n.
func contigAddrs(base *[32]uint64, n uint64) bool {
	// Four lanes a step, each against its own expected address.
	e0, n4 := base[0], 4*n
	e1, e2, e3 := e0+n, e0+2*n, e0+3*n
	var diff uint64
	for l := 0; l < 32; l += 4 {
		diff |= (base[l] - e0) | (base[l+1] - e1) | (base[l+2] - e2) | (base[l+3] - e3)
		e0, e1, e2, e3 = e0+n4, e1+n4, e2+n4, e3+n4
	}
	return diff == 0
}

// bitsSet reports whether bits [o, o+n) of bm are all set.
func bitsSet(bm []uint64, o, n int) bool {
	for n > 0 {
		k := min(n, 64-o&63)
		want := (uint64(1)<<k - 1) << (o & 63)
		if k == 64 {
			want = ^uint64(0)
		}
		if bm[o>>6]&want != want {
			return false
		}
		o, n = o+k, n-k
	}
	return true
}

// setBits sets bits [o, o+n) of bm.
func setBits(bm []uint64, o, n int) {
	for n > 0 {
		k := min(n, 64-o&63)
		if k == 64 {
			bm[o>>6] = ^uint64(0)
		} else {
			bm[o>>6] |= (uint64(1)<<k - 1) << (o & 63)
		}
		o, n = o+k, n-k
	}
}

// loadRun reads 32 consecutive elements of type t from src into d, each
// extended to 64 bits as t.ext does.
func loadRun(d *[32]uint64, src []byte, t dtype) {
	switch {
	case t.n == 4 && t.k != 's':
		s := (*[128]byte)(src)
		for l := range d {
			d[l] = uint64(binary.LittleEndian.Uint32(s[4*l:]))
		}
	case t.n == 4:
		s := (*[128]byte)(src)
		for l := range d {
			d[l] = uint64(int64(int32(binary.LittleEndian.Uint32(s[4*l:]))))
		}
	case t.n == 8:
		s := (*[256]byte)(src)
		for l := range d {
			d[l] = binary.LittleEndian.Uint64(s[8*l:])
		}
	default:
		n := int(t.n)
		for l := range d {
			d[l] = t.ext(getBits(src[n*l:], n))
		}
	}
}

// storeRun writes the low t.n bytes of each of v's 32 lanes, in lane order,
// to dst.
func storeRun(dst []byte, v *[32]uint64, t dtype) {
	switch t.n {
	case 4:
		s := (*[128]byte)(dst)
		for l, x := range v {
			binary.LittleEndian.PutUint32(s[4*l:], uint32(x))
		}
	case 8:
		s := (*[256]byte)(dst)
		for l, x := range v {
			binary.LittleEndian.PutUint64(s[8*l:], x)
		}
	default:
		n := int(t.n)
		for l, x := range v {
			putBits(dst[n*l:], n, x)
		}
	}
}

// stampRecs counts one more store in each write record of recs and makes
// me (warp and clock) its last writer.
func stampRecs(recs []uint64, me uint64) {
	for i, rec := range recs {
		cnt := rec & wcMask
		if cnt < wcMask {
			cnt++
		}
		recs[i] = me | cnt
	}
}

// uniformLanes reports whether the lanes m of r hold one value.
func uniformLanes(r *[32]uint64, m uint32) bool {
	x := r[bits.TrailingZeros32(m)]
	var diff uint64
	if m == fullMask {
		for _, y := range r {
			diff |= y ^ x
		}
		return diff == 0
	}
	for ; m != 0; m &= m - 1 {
		diff |= r[bits.TrailingZeros32(m)] ^ x
	}
	return diff == 0
}

// broadcast sets the lanes m of d to x.
func broadcast(d *[32]uint64, m uint32, x uint64) {
	if m == fullMask {
		for l := range d {
			d[l] = x
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		d[bits.TrailingZeros32(m)] = x
	}
}

// stampRun records one store by me (warp and clock) of bytes [o, o+n) of
// a, on one page, in launch, as recordGlobalWrite does for a store that
// no other CTA's store precedes; it returns false, having changed
// nothing, when another CTA (a warp outside [gbase, gbase+nw)) wrote one
// of the bytes in this launch.
//
// A page's records are cleared lazily, by 64-byte chunk: when the page
// is first written in a launch its chunks are marked stale (a.valid)
// instead of cleared, a chunk the store covers whole is written without
// being read, and page clears what is still stale for every other user.
func (a *allocation) stampRun(o, n int, launch uint32, me uint64, gbase, nw uint32) bool {
	p := o >> pageBits
	a.initShadow()
	pg := a.shadow[p]
	if pg == nil {
		pg = make([]uint64, pageSize)
		a.shadow[p] = pg
	}
	if a.epochs[p] != launch {
		a.epochs[p], a.valid[p] = launch, 0
	}
	po := o & (pageSize - 1)
	v := a.valid[p]
	for c := po >> 6; c <= (po+n-1)>>6; c++ {
		if v>>c&1 == 0 {
			continue // no record of this launch yet
		}
		for _, rec := range pg[max(po, 64*c):min(po+n, 64*c+64)] {
			if prev := uint32(rec >> wcWarpShft); prev != 0 && prev-1-gbase >= nw {
				return false
			}
		}
	}
	stampChunks(pg, &a.valid[p], po, n, me)
	return true
}

// stampChunks records one store by me of bytes [po, po+n) of a page of
// records whose chunks in valid (a bit per 64 bytes) hold current
// records: a stale chunk the store covers whole is written without being
// read, a partly covered one is cleared first.
func stampChunks(pg []uint64, valid *uint64, po, n int, me uint64) {
	for c := po >> 6; c <= (po+n-1)>>6; c++ {
		lo, hi := max(po, 64*c), min(po+n, 64*c+64)
		if *valid>>c&1 == 0 {
			*valid |= 1 << c
			if hi-lo == 64 {
				for i := range pg[lo:hi] {
					pg[lo+i] = me | 1
				}
				continue
			}
			clear(pg[64*c : 64*c+64])
		}
		stampRecs(pg[lo:hi], me)
	}
}

// freshChunks clears the stale chunks of pg that hold bytes [po, po+n)
// and marks them valid.
func freshChunks(pg []uint64, valid *uint64, po, n int) {
	for c := po >> 6; c <= (po+n-1)>>6; c++ {
		if *valid>>c&1 == 0 {
			*valid |= 1 << c
			clear(pg[64*c : 64*c+64])
		}
	}
}
