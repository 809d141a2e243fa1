package emu

import (
	"fmt"
	"math/bits"

	"github.com/ptxprop/ptxprop/cudart"
)

// Definedness tracking. A load of bytes that no thread wrote (shared and
// local memory; global memory with Config.CheckUninitGlobal) does not fail
// at once: compilers legitimately load speculatively and discard the value
// (w < nw ? red[w] : 0 becomes an unconditional ld.shared and a selp). The
// loaded register lanes are marked undefined instead; every instruction
// propagates undefinedness from its inputs to its outputs, and only a use
// that changes what the kernel does is reported: a branch, guard or
// barrier predicate, an address, a membermask, an atomic operand, or a
// store to global memory. Such a use is reported when the barrier interval
// ends, so that a race with the write that would have defined the bytes is
// reported instead when there is one.

// Shadow classes: how an instruction propagates undefinedness.
const (
	shRegs     uint8 = iota // register d from registers a, b, c, e
	shNone                  // handled by the instruction itself, or no output
	shSelp                  // register d from predicate c and the selected a or b
	shPredDst               // predicate d (and d2) from registers a, b and predicate c
	shPredOnly              // predicate d from predicates a and b
	shSet                   // register d from registers a, b and predicate c
	shPack                  // register d from the registers in vec
	shUnpack                // registers in vec from register a
)

// noteUndef records that a load read undefined bytes and turns on
// propagation.
func (l *launch) noteUndef(w *warp, in *inst, lane int, space uint8, addr uint64, size int, byteAddr uint64, written bool) {
	if !l.undefOn {
		l.undefOn = true
		for _, x := range l.warps {
			clear(x.undef)
			clear(x.pundef)
		}
	}
	if l.undefOrigin == nil {
		l.undefOrigin = &undefOrigin{w: w, in: in, lane: lane, space: space, addr: addr, byteAddr: byteAddr, written: written}
	}
}

// undefOrigin is the first load of undefined bytes in a block, formatted
// only when a use is reported.
type undefOrigin struct {
	w        *warp
	in       *inst
	lane     int
	space    uint8
	addr     uint64
	byteAddr uint64 // the undefined byte
	written  bool
}

func (o *undefOrigin) String() string {
	if o == nil {
		return "unknown"
	}
	t := o.w.tid(o.lane)
	what := "never written in this block"
	if o.written {
		what = "written with an undefined value"
	}
	l := o.w.l
	var where string
	switch o.space {
	case spShared:
		where = l.sharedVarAt(o.byteAddr)
	case spLocal:
		where = l.localVarAt(o.byteAddr)
	default:
		if a := l.b.mem.find(o.byteAddr); a != nil {
			where = a.describe(o.byteAddr)
		}
	}
	return fmt.Sprintf("%s at PTX line %d by thread (%d,%d,%d) read %s address %#x (%s), %s",
		o.in.src.Opcode(), o.in.line, t[0], t[1], t[2], spaceNames[o.space], o.addr, where, what)
}

// undefUse records the first use of an undefined value; it is reported
// when the barrier interval ends.
func (l *launch) undefUse(w *warp, in *inst, lane int, what string) {
	if l.pendingUninit != nil {
		return
	}
	t := w.tid(lane)
	l.pendingUninit = l.newFault(cudart.ErrOutOfBounds, w, in, lane,
		fmt.Sprintf("thread (%d,%d,%d) %s computed from uninitialised memory; the first uninitialised read: %s", t[0], t[1], t[2], what, l.undefOrigin))
}

// checkDefined reports an undefined register value used by lanes m.
func (w *warp) checkDefined(in *inst, slot int32, m uint32, what string) {
	if slot >= 0 && w.undef[slot]&m != 0 {
		w.l.undefUse(w, in, bits.TrailingZeros32(w.undef[slot]&m), what)
	}
}

// checkGuard reports a control instruction whose guard is undefined.
func (w *warp) checkGuard(in *inst) {
	if in.guard >= 0 && w.pundef[in.guard]&w.active != 0 {
		w.l.undefUse(w, in, bits.TrailingZeros32(w.pundef[in.guard]&w.active), "executes "+in.src.Op+" under a guard predicate")
	}
}

// shadow propagates undefinedness for a plain instruction executed by m.
func (w *warp) shadow(in *inst, m uint32) {
	var g uint32
	if in.guard >= 0 {
		g = w.pundef[in.guard] & w.active
	}
	src := func(slots ...int32) uint32 {
		var u uint32
		for _, s := range slots {
			if s >= 0 {
				u |= w.undef[s]
			}
		}
		return u
	}
	// compared: setp's and set's comparison of a and b, combined with
	// predicate c by .and, .or or .xor.
	compared := func() uint32 {
		u := src(in.a, in.b)
		if in.bop != 0 {
			u |= w.pundef[in.c]
		}
		return u
	}
	set := func(dst []uint32, d int32, u uint32) {
		if d >= 0 {
			dst[d] = dst[d]&^m | u&m | g
		}
	}
	switch in.sh {
	case shRegs:
		set(w.undef, in.d, src(in.a, in.b, in.c, in.e))
	case shNone:
		if g != 0 {
			w.l.undefUse(w, in, bits.TrailingZeros32(g), "executes "+in.src.Op+" under a guard predicate")
		}
	case shSelp:
		p := w.preds[in.c]
		if in.cneg {
			p = ^p
		}
		u := w.pundef[in.c] | w.undef[in.a]&p | w.undef[in.b]&^p
		set(w.undef, in.d, u)
	case shPredDst:
		u := compared()
		set(w.pundef, in.d, u)
		set(w.pundef, in.d2, u)
	case shPredOnly:
		u := w.pundef[in.a]
		if in.b >= 0 {
			u |= w.pundef[in.b]
		}
		set(w.pundef, in.d, u)
	case shSet:
		set(w.undef, in.d, compared())
	case shPack:
		set(w.undef, in.d, src(in.vec...))
	case shUnpack:
		for _, s := range in.vec {
			set(w.undef, s, w.undef[in.a])
		}
	}
}

// setUndef marks lane of slot defined or undefined.
func (w *warp) setUndef(slot int32, lane int, u bool) {
	if u {
		w.undef[slot] |= 1 << lane
	} else {
		w.undef[slot] &^= 1 << lane
	}
}
