package emu

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
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
	for range 100 {
		var reg [32]uint64
		m := r.Uint32() | 1<<r.IntN(32)
		if r.IntN(2) == 0 {
			m = fullMask
		}
		x := r.Uint64()
		broadcast(&reg, m, x)
		for l := range reg {
			if want := x * uint64(m>>l&1); reg[l] != want {
				t.Fatalf("broadcast to %#x: lane %d holds %#x", m, l, reg[l])
			}
		}
		if !uniformLanes(&reg, m) {
			t.Fatalf("uniformLanes %#x: a broadcast value not uniform", m)
		}
		l := r.IntN(32)
		reg[l]++
		if got, want := uniformLanes(&reg, m), m>>l&1 == 0; got != want {
			t.Fatalf("uniformLanes %#x with lane %d changed: %v, want %v", m, l, got, want)
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

// uniformPTX reads its parameter n from every lane (a warp-uniform
// address) and, in param_oob, 4 bytes past the parameters from the lanes
// of tid ≥ 3.
const uniformPTX = `
.version 8.0
.target sm_90
.address_size 64

.visible .entry param_add(.param .u64 out, .param .u32 n)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %tid.x;
	add.s32 %r3, %r1, %r2;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r2, 4;
	add.s64 %rd2, %rd2, %rd3;
	st.global.u32 [%rd2], %r3;
	ret;
}

.visible .entry param_oob(.param .u32 n)
{
	.reg .pred %p1;
	.reg .b32 %r<3>;
	.reg .b64 %rd<2>;
	mov.u32 %r2, %tid.x;
	setp.lt.u32 %p1, %r2, 3;
	@%p1 bra done;
	mov.u64 %rd1, n;
	ld.param.u32 %r1, [%rd1+4];
done:
	ret;
}
`

// TestUniformParamLoads checks the warp-uniform parameter loads of
// execLd1 on full and partial warps, and that an out-of-bounds one
// faults at the lowest lane that reads.
func TestUniformParamLoads(t *testing.T) {
	e := newEnvSrc(t, "uniform.ptx", []byte(uniformPTX), Config{})
	out := e.buf(cudart.U32, 48)
	e.mustLaunch("param_add", 1, 48, cudart.Out(out), cudart.ScalarI32(1000))
	for i, got := range e.u32s(out) {
		if got != uint32(1000+i) {
			t.Fatalf("thread %d wrote %d, want %d", i, got, 1000+i)
		}
	}
	err := e.launch("param_oob", 1, 32, cudart.ScalarI32(1))
	if err == nil || !strings.Contains(err.Error(), "threadIdx (3,0,0) lane 3\n") || !strings.Contains(err.Error(), "parameters") {
		t.Fatalf("param_oob: %v, want a fault beyond the parameters at lane 3", err)
	}
}

// TestStampRun checks stampRun's lazily cleared record chunks against
// the records page and writeCount give.
func TestStampRun(t *testing.T) {
	a := &allocation{data: make([]byte, 2*pageSize)}
	// Launch 1 leaves records everywhere on page 0.
	recs := a.page(0, 1)
	for i := range recs {
		recs[i] = 99<<wcWarpShft | 3
	}
	me := uint64(5)<<wcWarpShft | 7<<wcClkShft
	// Launch 2: warps 4..11 are the running CTA's (gbase 4, 8 warps).
	if !a.stampRun(128, 128, 2, me, 4, 8) { // two whole chunks
		t.Fatal("stampRun on a stale page refused")
	}
	if !a.stampRun(300, 8, 2, me, 4, 8) { // part of chunk 4
		t.Fatal("stampRun of part of a chunk refused")
	}
	if !a.stampRun(128, 4, 2, me, 4, 8) { // again, a valid chunk
		t.Fatal("stampRun over the CTA's own records refused")
	}
	for _, c := range []struct{ off, want int }{{0, 0}, {127, 0}, {128, 2}, {131, 2}, {132, 1}, {255, 1}, {256, 0},
		{299, 0}, {300, 1}, {307, 1}, {308, 0}, {4095, 0}, {4096, 0}} {
		if got := a.writeCount(c.off, 2); got != uint32(c.want) {
			t.Errorf("byte %d: %d stores counted, want %d", c.off, got, c.want)
		}
	}
	recs = a.page(0, 2)
	for i, rec := range recs {
		inRun := i >= 128 && i < 256 || i >= 300 && i < 308
		if !inRun && rec != 0 {
			t.Fatalf("byte %d: record %#x left from launch 1", i, rec)
		}
		if inRun && rec&^wcMask != me {
			t.Fatalf("byte %d: record %#x, want writer %#x", i, rec, me)
		}
	}
	// Another CTA's record in a chunk refuses the whole store.
	recs[200] = 20<<wcWarpShft | 1
	if a.stampRun(192, 64, 2, me, 4, 8) {
		t.Fatal("stampRun over another CTA's record accepted")
	}
	if got := a.writeCount(192, 2); got != 1 {
		t.Errorf("a refused stampRun changed byte 192's count to %d", got)
	}
}
