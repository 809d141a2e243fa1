package cudart

import "encoding/binary"

// Checking on the device.
//
// A backend that cannot trap guard-band accesses itself (the GPU) but can
// copy device memory to device memory gets a launch's checks as two passes
// of one small kernel, ptxprop_verify, around the kernel under test, all in
// one hand-off (see verifyPlan in devcheck.go):
//
//   - one upload carries both passes' tables and the data of the pending
//     writes;
//   - the pass before the kernel makes the pending stores (canaries, poison,
//     written inputs), reduced to disjoint segments;
//   - large inputs are then copied to snapshots on the device;
//   - the pass after the kernel compares large buffers' guard bands with the
//     canary and large inputs with their snapshots, checks the guard bands of
//     buffers freed since the last launch, and gathers small buffers (and
//     outputs up to mirrorMax, which a Read usually follows) with their guard
//     bands next to the verdicts;
//   - one copy brings the verdicts and the gathered buffers back, and the
//     host checks the gathered guard bands and input hashes as it would have
//     after copying each buffer back by itself.
//
// Backends without CapCopyDtoD, or that trap guard accesses (CapProtect:
// the emulator), are checked from the host, one copy per buffer (check.go).

// verifyPTX compares and gathers regions of device memory. tab holds n
// descriptors of 32 bytes — {addr u64, ref u64, words u32, mode u32,
// pattern u64} — one per row of blocks (blockIdx.x; the blocks of a row,
// blockIdx.y, share its words); out holds two words per descriptor, which
// the host initialises to {0xFFFFFFFF, 0}. Mode 0 compares words 32-bit
// words at addr with those at ref, or, when ref is 0, word j with half j&1
// of pattern (low half first), so an 8-byte pattern is checked on regions
// that start 8-byte aligned; the kernel lowers the first verdict word to the
// smallest index of a word that differs and raises the second to the
// largest such index plus one (integer atomics: the verdicts do not depend
// on the order the threads run in). Mode 1 copies the words from addr to
// ref: how small buffers are gathered next to the verdicts, so that one copy
// brings everything back, and how a launch's pending writes are scattered
// from the one upload that carries them. Mode 2 stores half j&1 of pattern
// into word j at addr: the canaries and the poison.
const verifyPTX = `.version 7.0
.target sm_70
.address_size 64

.visible .entry ptxprop_verify(
	.param .u64 tab,
	.param .u32 n,
	.param .u64 out
)
{
	.reg .pred %p<5>;
	.reg .b32 %r<14>;
	.reg .b64 %rd<16>;

	ld.param.u64 %rd1, [tab];
	ld.param.u32 %r1, [n];
	ld.param.u64 %rd2, [out];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mov.u32 %r2, %ctaid.x;
	setp.ge.u32 %p1, %r2, %r1;
	@%p1 bra DONE;
	mul.wide.u32 %rd3, %r2, 32;
	add.s64 %rd3, %rd1, %rd3;
	ld.global.u64 %rd4, [%rd3];
	ld.global.u64 %rd5, [%rd3+8];
	ld.global.u32 %r3, [%rd3+16];
	ld.global.u64 %rd6, [%rd3+24];
	ld.global.u32 %r11, [%rd3+20];
	cvta.to.global.u64 %rd4, %rd4;
	setp.eq.u64 %p3, %rd5, 0;
	@!%p3 cvta.to.global.u64 %rd5, %rd5;
	setp.ne.u32 %p4, %r11, 0;
	mul.wide.u32 %rd7, %r2, 8;
	add.s64 %rd7, %rd2, %rd7;
	mov.u32 %r5, %ntid.x;
	mov.u32 %r12, %ctaid.y;
	mov.u32 %r13, %tid.x;
	mad.lo.s32 %r4, %r12, %r5, %r13;
	mov.u32 %r12, %nctaid.y;
	mul.lo.u32 %r5, %r5, %r12;
	setp.eq.u32 %p1, %r11, 2;
	@%p1 bra FILL;
	@%p4 bra GATHER;
LOOP:
	setp.ge.u32 %p2, %r4, %r3;
	@%p2 bra DONE;
	mul.wide.u32 %rd8, %r4, 4;
	add.s64 %rd9, %rd4, %rd8;
	ld.global.u32 %r6, [%rd9];
	@%p3 bra PATTERN;
	add.s64 %rd10, %rd5, %rd8;
	ld.global.u32 %r7, [%rd10];
	bra COMPARE;
PATTERN:
	and.b32 %r8, %r4, 1;
	shl.b32 %r8, %r8, 5;
	shr.u64 %rd11, %rd6, %r8;
	cvt.u32.u64 %r7, %rd11;
COMPARE:
	setp.ne.u32 %p2, %r6, %r7;
	@!%p2 bra NEXT;
	atom.global.min.u32 %r9, [%rd7], %r4;
	add.u32 %r10, %r4, 1;
	atom.global.max.u32 %r9, [%rd7+4], %r10;
NEXT:
	add.u32 %r4, %r4, %r5;
	bra LOOP;
FILL:
	setp.ge.u32 %p2, %r4, %r3;
	@%p2 bra DONE;
	and.b32 %r8, %r4, 1;
	shl.b32 %r8, %r8, 5;
	shr.u64 %rd11, %rd6, %r8;
	cvt.u32.u64 %r7, %rd11;
	mul.wide.u32 %rd8, %r4, 4;
	add.s64 %rd9, %rd4, %rd8;
	st.global.u32 [%rd9], %r7;
	add.u32 %r4, %r4, %r5;
	bra FILL;
GATHER:
	setp.ge.u32 %p2, %r4, %r3;
	@%p2 bra DONE;
	mul.wide.u32 %rd8, %r4, 4;
	add.s64 %rd9, %rd4, %rd8;
	ld.global.u32 %r6, [%rd9];
	add.s64 %rd10, %rd5, %rd8;
	st.global.u32 [%rd10], %r6;
	add.u32 %r4, %r4, %r5;
	bra GATHER;
DONE:
	ret;
}
`

// verifyEntry is the kernel's name.
const verifyEntry = "ptxprop_verify"

// comparison is one region ptxprop_verify checks, and how to report a
// difference.
type comparison struct {
	addr, ref uint64
	words     int
	pattern   uint64
	lb        *launchBuf
	what      int    // guardBefore, guardAfter, inputChanged or gather
	at        int    // gather: offset of the gathered words in the copy back; scatter: of the staged words
	data      []byte // scatter: the words to stage
}

const (
	guardBefore = iota
	guardAfter
	inputChanged
	gather  // mode 1, from a buffer into the arena
	scatter // mode 1, from the arena into a buffer
	fill    // mode 2
)

// canary64 is kind's canary as the 8-byte pattern ptxprop_verify compares
// with.
func canary64(kind Kind) uint64 {
	var b [8]byte
	pattern(b[:], kind, true)
	return binary.LittleEndian.Uint64(b[:])
}

// putVerifyTable writes into tab (40·len(cs) bytes or more, whatever they
// held) the descriptors and, after them, the verdict words {0xFFFFFFFF, 0}.
func putVerifyTable(tab []byte, cs []comparison) {
	outOff := 32 * len(cs)
	for i, c := range cs {
		d := tab[32*i:]
		binary.LittleEndian.PutUint64(d, c.addr)
		binary.LittleEndian.PutUint64(d[8:], c.ref)
		binary.LittleEndian.PutUint32(d[16:], uint32(c.words))
		mode := uint32(0) // compare
		switch c.what {
		case gather, scatter:
			mode = 1
		case fill:
			mode = 2
		}
		binary.LittleEndian.PutUint32(d[20:], mode)
		binary.LittleEndian.PutUint64(d[24:], c.pattern)
		binary.LittleEndian.PutUint64(tab[outOff+8*i:], 0xFFFFFFFF) // first 0xFFFFFFFF, last+1 0
	}
}

// verdict turns comparison c's verdict words into an error, or nil.
func (c comparison) verdict(first, lastPlus1 uint32) error {
	if first == 0xFFFFFFFF {
		return nil
	}
	buf := c.lb.buffer
	size := buf.kind.Size()
	where := ""
	if c.lb.freed {
		where = " (found after it was freed)"
	}
	switch c.what {
	case guardBefore:
		// The byte nearest the buffer's start, as guardError reports it.
		j := 4*int(lastPlus1) - 1
		return Errorf(ErrGuardBand, "%v: guard band before the buffer overwritten, %d element(s) before its start%s", buf.Buffer, (buf.pre-j+size-1)/size, where)
	case guardAfter:
		i := 4 * int(first)
		return Errorf(ErrGuardBand, "%v: guard band after the buffer overwritten at element %d (%d past its end)%s", buf.Buffer, buf.n+i/size, i/size+1, where)
	default:
		return Errorf(ErrInputModified, "%v element %d changed", buf.Buffer, 4*int(first)/size)
	}
}
