package emu

import (
	"math/rand/v2"
	"testing"
)

// TestContigRuns compares the range helpers of contiguous warp accesses
// with the per-lane and per-bit operations they replace.
func TestContigRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, ty := range []dtype{{'u', 1}, {'s', 1}, {'b', 2}, {'s', 2}, {'u', 4}, {'s', 4}, {'f', 4}, {'u', 8}, {'s', 8}, {'f', 8}} {
		n := int(ty.n)
		src := make([]byte, 32*n)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		var got [32]uint64
		loadRun(&got, src, ty)
		for l := range got {
			if want := ty.ext(getBits(src[n*l:], n)); got[l] != want {
				t.Fatalf("loadRun %v lane %d: %#x, want %#x", ty, l, got[l], want)
			}
		}
		var v [32]uint64
		for l := range v {
			v[l] = r.Uint64()
		}
		dst, want := make([]byte, 32*n), make([]byte, 32*n)
		storeRun(dst, &v, ty)
		for l := range v {
			putBits(want[n*l:], n, v[l])
		}
		if string(dst) != string(want) {
			t.Fatalf("storeRun %v: % x, want % x", ty, dst, want)
		}
		var base [32]uint64
		for l := range base {
			base[l] = 1000 + uint64(l*n)
		}
		if !contigAddrs(&base, uint64(n)) {
			t.Fatalf("contigAddrs %d: a run not recognised", n)
		}
		base[5], base[6] = base[6], base[5]
		if contigAddrs(&base, uint64(n)) {
			t.Fatalf("contigAddrs %d: two lanes swapped taken for a run", n)
		}
	}
	for range 200 {
		bm := []uint64{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
		if r.IntN(2) == 0 {
			bm[1], bm[2] = ^uint64(0), ^uint64(0)
		}
		o, n := r.IntN(100), 1+r.IntN(150)
		all := true
		for i := o; i < o+n; i++ {
			all = all && bm[i>>6]>>(i&63)&1 != 0
		}
		if got := bitsSet(bm, o, n); got != all {
			t.Fatalf("bitsSet(%x, %d, %d) = %v, want %v", bm, o, n, got, all)
		}
		want := append([]uint64(nil), bm...)
		for i := o; i < o+n; i++ {
			want[i>>6] |= 1 << (i & 63)
		}
		setBits(bm, o, n)
		for i := range bm {
			if bm[i] != want[i] {
				t.Fatalf("setBits(%d, %d) = %x, want %x", o, n, bm, want)
			}
		}
	}
	recs := []uint64{0, 5, wcMask, 3 | 7<<wcWarpShft}
	stampRecs(recs, 9<<wcWarpShft|2<<wcClkShft)
	for i, want := range []uint64{1, 6, wcMask, 4} {
		if recs[i] != 9<<wcWarpShft|2<<wcClkShft|want {
			t.Fatalf("stampRecs record %d: %#x, want count %d", i, recs[i], want)
		}
	}
}
