package emu

import (
	"fmt"

	"github.com/ptxprop/ptxprop/cudart"
)

// shRec is the access history of one shared-memory byte in the current CTA,
// for race and uninitialised-read detection.
type shRec struct {
	w      access    // last write
	r      [2]access // recent reads by different threads
	wval   byte      // value of the last write
	wundef bool      // the last write stored an undefined value
}

type access struct {
	epoch uint32 // barrier interval of the accessing warp (0: none)
	sync  uint32 // warp-sync interval of the accessing warp
	inst  uint32 // warp-instruction instance
	tid   uint16 // thread index in the CTA
	atom  bool
}

// Access kinds.
const (
	accRead uint8 = iota
	accWrite
	accAtomic
)

var accNames = [...]string{"read", "write", "atomic"}

// resolve maps a generic address to its state space.
func resolve(space uint8, addr uint64) (uint8, uint64) {
	if space != spGeneric {
		return space, addr
	}
	switch {
	case addr-sharedWindow < windowSize:
		return spShared, addr - sharedWindow
	case addr-localWindow < windowSize:
		return spLocal, addr - localWindow
	case addr-constWindow < windowSize:
		return spConst, addr - constWindow
	case addr-paramWindow < windowSize:
		return spParam, addr - paramWindow
	}
	return spGlobal, addr
}

func (w *warp) memFault(code error, in *inst, lane int, space uint8, addr uint64, size int, detail string) bool {
	if w.l.err == nil {
		w.l.err = w.newFault(code, in, lane, space, addr, size, detail)
	}
	return false
}

func (w *warp) newFault(code error, in *inst, lane int, space uint8, addr uint64, size int, detail string) *Fault {
	f := w.l.newFault(code, w, in, lane, detail)
	f.Space, f.Addr, f.Size = spaceNames[space], addr, size
	return f
}

// accessName describes the access for diagnostics.
func accessName(in *inst, kind uint8, size int) string {
	op := "access"
	if in != nil && in.src != nil {
		op = in.src.Opcode()
	}
	return fmt.Sprintf("%s (%s of %d bytes)", op, accNames[kind], size)
}

// globalAt checks a global access and returns its allocation and offset.
// The access must lie inside the buffer the allocation holds (its labelled
// range, see Backend.Label): the padding of a size class and the guard bands
// are outside it.
func (w *warp) globalAt(in *inst, lane int, addr uint64, size int, kind uint8) (*allocation, int, bool) {
	l := w.l
	a := l.lastGlobal
	if a == nil || addr < a.base || addr >= a.end {
		a = l.b.mem.find(addr)
		l.lastGlobal = a
	}
	if a == nil || addr < a.lo || addr+uint64(size) > a.hi {
		return nil, 0, w.memFault(cudart.ErrOutOfBounds, in, lane, spGlobal, addr, size,
			fmt.Sprintf("%s at %#x %s", accessName(in, kind, size), addr, l.b.mem.outside(a, addr)))
	}
	for _, g := range a.guards {
		if addr < g.hi && addr+uint64(size) > g.lo {
			at := max(addr, g.lo)
			return nil, 0, w.memFault(cudart.ErrOutOfBounds, in, lane, spGlobal, addr, size,
				fmt.Sprintf("%s at %#x in %s", accessName(in, kind, size), addr, a.describe(at)))
		}
	}
	l.gbytes[kind] += int64(size) // LaunchStats: bytes moved, by access kind
	return a, int(addr - a.base), true
}

// recordGlobalWrite counts a store and checks it against stores of other
// CTAs in this launch: one that does not happen before it is a race,
// unless both are atomic.
func (w *warp) recordGlobalWrite(in *inst, lane int, a *allocation, off, size int, atomic bool) bool {
	l := w.l
	launch := l.b.mem.launch
	base, nw := l.cta.gbase, uint32(l.nwarp)
	check := !l.cfg.NoRaceCheck
	me := uint64(base+uint32(w.idx)+1)<<wcWarpShft | uint64(w.clock)<<wcClkShft
	if atomic {
		me |= wcAtomic
	}
	for size > 0 {
		// The bytes of [off, off+size) on one page of records.
		po := off & (pageSize - 1)
		n := min(size, pageSize-po)
		recs := a.page(off, launch)[po : po+n]
		for i, rec := range recs {
			if prev := uint32(rec >> wcWarpShft); prev != 0 && prev-1-base >= nw && check && !w.ordered(in, lane, a, off+i, rec, atomic) {
				return false
			}
			cnt := rec & wcMask
			if cnt < wcMask {
				cnt++
			}
			recs[i] = me | cnt
		}
		off, size = off+n, size-n
	}
	return true
}

// ordered checks w's write of byte off of a against the last write, rec,
// by another CTA, and reports the race if nothing orders the two.
func (w *warp) ordered(in *inst, lane int, a *allocation, off int, rec uint64, atomic bool) bool {
	prev := uint32(rec >> wcWarpShft)
	if atomic && rec&wcAtomic != 0 || w.knows(prev, uint32(rec>>wcClkShft)&clockMax) {
		return true
	}
	l := w.l
	what := "stores to"
	if atomic {
		what = "applies an atomic to"
	} else if rec&wcAtomic != 0 {
		what = "stores to (after another block's atomic)"
	}
	addr := a.base + uint64(off)
	return w.memFault(cudart.ErrRace, in, lane, spGlobal, addr, 1,
		fmt.Sprintf("block %s %s, which block %s already wrote in this launch with nothing ordering the two (no barrier, release/acquire or fence): %s",
			fmtCTA(l.cta.id), what, l.ctaName((prev-1)/uint32(l.nwarp)), a.describe(addr)))
}

func fmtCTA(id [3]uint32) string { return fmt.Sprintf("(%d,%d,%d)", id[0], id[1], id[2]) }

func (l *launch) ctaName(idx uint32) string {
	n := l.nctaid
	return fmt.Sprintf("(%d,%d,%d)", idx%n[0], idx/n[0]%n[1], idx/(n[0]*n[1]))
}

// sharedVarAt names the shared variable around byte off.
func (l *launch) sharedVarAt(off uint64) string {
	k := l.k
	for _, v := range k.shared {
		if off >= uint64(v.off) && off < uint64(v.off+v.size) {
			return fmt.Sprintf("shared variable %s byte %d", v.name, off-uint64(v.off))
		}
		if off >= uint64(v.off+v.size) && off < uint64(v.off+v.size+redZone) {
			return fmt.Sprintf("red zone %d bytes past the end of shared variable %s[%d bytes]", off-uint64(v.off+v.size), v.name, v.size)
		}
	}
	if off >= uint64(k.sharedEnd) {
		name := k.dynShared
		if name == "" {
			name = "dynamic shared memory"
		}
		return fmt.Sprintf("%s byte %d", name, off-uint64(k.sharedEnd))
	}
	return fmt.Sprintf("shared offset %d", off)
}

// sharedCheck checks bounds, red zones, uninitialised reads and races of a
// shared access by lane.
// For reads it reports whether any byte is undefined (never written in this
// block, or written with an undefined value).
func (w *warp) sharedCheck(in *inst, lane int, addr uint64, size int, kind uint8, val uint64, undefVal bool) (ok, undef bool) {
	l := w.l
	if addr+uint64(size) > uint64(len(l.cta.smem)) || addr+uint64(size) < addr {
		return w.memFault(cudart.ErrOutOfBounds, in, lane, spShared, addr, size,
			fmt.Sprintf("%s at shared address %#x beyond the %d bytes of shared memory of the block (static %d + dynamic %d)",
				accessName(in, kind, size), addr, len(l.cta.smem), l.k.sharedEnd, l.g.SharedBytes)), false
	}
	for _, v := range l.k.shared {
		end := uint64(v.off + v.size)
		if addr < end+redZone && addr+uint64(size) > end {
			return w.memFault(cudart.ErrOutOfBounds, in, lane, spShared, addr, size,
				fmt.Sprintf("%s at shared address %#x in the %s", accessName(in, kind, size), addr, l.sharedVarAt(max(addr, end)))), false
		}
	}
	sh := l.cta.sh
	if sh == nil {
		return true, false
	}
	tid := uint16(w.idx*32 + lane)
	cur := access{epoch: w.barEpoch, sync: w.syncEpoch, inst: uint32(l.warpInsts), tid: tid, atom: kind == accAtomic}
	for i := 0; i < size; i++ {
		rec := &sh[addr+uint64(i)]
		b := byte(val >> (8 * i))
		written := rec.w.epoch >= l.cta.startGen
		if kind == accRead && (!written || rec.wundef) && !l.cfg.AllowUninitShared && !undef {
			undef = true
			l.noteUndef(w, in, lane, spShared, addr, size, addr+uint64(i), written)
		}
		if !l.cfg.NoRaceCheck {
			if written && w.conflicts(rec.w, cur) {
				switch {
				case kind == accWrite && !rec.w.atom && rec.wval == b:
					// Stores of the same value: benign, as on every GPU.
				case rec.w.atom && cur.atom:
				default:
					return w.raceFault(in, lane, addr+uint64(i), rec.w, cur, rec.wval, b), false
				}
			}
			if kind != accRead {
				for _, r := range rec.r {
					if r.epoch >= l.cta.startGen && r.inst != cur.inst && w.conflicts(r, cur) && !(r.atom && cur.atom) {
						return w.raceFault(in, lane, addr+uint64(i), r, cur, 0, b), false
					}
				}
			}
		}
		switch kind {
		case accRead:
			slot := 1
			if rec.r[0].tid == tid || !w.concurrent(rec.r[0], cur) {
				slot = 0
			}
			rec.r[slot] = cur
		default:
			rec.w, rec.wval, rec.wundef = cur, b, undefVal
		}
	}
	return true, undef
}

// concurrent reports whether access a (of this CTA) and cur fall in the
// same synchronisation interval: no barrier completed in between and, for
// two lanes of one warp, no bar.warp.sync either.
func (w *warp) concurrent(a, cur access) bool {
	if a.epoch < w.l.cta.startGen || a.epoch != cur.epoch {
		return false
	}
	return a.tid/32 != cur.tid/32 || a.sync == cur.sync
}

// conflicts reports whether the earlier access a by another thread is
// unordered with the current access cur.
func (w *warp) conflicts(a, cur access) bool {
	return a.tid != cur.tid && w.concurrent(a, cur)
}

func (w *warp) raceFault(in *inst, lane int, addr uint64, prev, cur access, pv, cv byte) bool {
	l := w.l
	t := w.tid(lane)
	pw := l.warps[int(prev.tid)/32]
	pt := pw.tid(int(prev.tid) % 32)
	var why string
	switch {
	case prev.inst == cur.inst:
		why = fmt.Sprintf("lanes %d and %d of warp %d store different values (%#02x, %#02x) to the same byte in one instruction", int(prev.tid)%32, lane, w.idx, pv, cv)
	case int(prev.tid)/32 == w.idx:
		why = fmt.Sprintf("threads (%d,%d,%d) and (%d,%d,%d) of warp %d access it with no bar.warp.sync (__syncwarp) or barrier in between", pt[0], pt[1], pt[2], t[0], t[1], t[2], w.idx)
	default:
		why = fmt.Sprintf("thread (%d,%d,%d) of warp %d and thread (%d,%d,%d) of warp %d access it in the same barrier interval (no bar.sync / __syncthreads in between)", pt[0], pt[1], pt[2], int(prev.tid)/32, t[0], t[1], t[2], w.idx)
	}
	kind := "read"
	if cur.atom {
		kind = "atomic"
	} else if in != nil && in.src != nil && (in.src.Op == "st" || in.src.Op == "red" || in.src.Op == "atom") {
		kind = "write"
	}
	return w.memFault(cudart.ErrRace, in, lane, spShared, addr, 1,
		fmt.Sprintf("shared-memory race on %s (%s at shared address %#x): %s", l.sharedVarAt(addr), kind, addr, why))
}

// localAt checks a local access and returns the byte offset in the CTA's
// local memory; for reads it reports whether any byte is undefined.
func (w *warp) localAt(in *inst, lane int, addr uint64, size int, kind uint8, undefVal bool) (int, bool, bool) {
	l := w.l
	ls := uint64(l.k.localSize)
	if addr+uint64(size) > ls || addr+uint64(size) < addr {
		return 0, w.memFault(cudart.ErrOutOfBounds, in, lane, spLocal, addr, size,
			fmt.Sprintf("%s at local address %#x beyond the thread's %d-byte local frame", accessName(in, kind, size), addr, ls)), false
	}
	base := (w.idx*32+lane)*l.k.localSize + int(addr)
	undef := false
	if li := l.cta.linit; li != nil {
		if kind == accRead {
			for i := 0; i < size; i++ {
				if li[base+i] == 0 {
					undef = true
					l.noteUndef(w, in, lane, spLocal, addr, size, addr+uint64(i), false)
					break
				}
			}
		} else {
			v := byte(1)
			if undefVal {
				v = 0
			}
			for i := 0; i < size; i++ {
				li[base+i] = v
			}
		}
	}
	return base, true, undef
}

func (l *launch) localVarAt(off uint64) string {
	for _, v := range l.k.locals {
		if off >= uint64(v.off) && off < uint64(v.off+v.size) {
			return fmt.Sprintf("local variable %s byte %d", v.name, off-uint64(v.off))
		}
	}
	return fmt.Sprintf("local offset %d", off)
}

// load reads size bytes at addr in space for lane; undef reports bytes
// that were never written (or hold an undefined value).
func (w *warp) load(in *inst, lane int, space uint8, addr uint64, size int) (v uint64, ok, undef bool) {
	if addr%uint64(size) != 0 {
		return 0, w.misaligned(in, lane, space, addr, size), false
	}
	space, addr = resolve(space, addr)
	l := w.l
	switch space {
	case spGlobal:
		a, off, ok := w.globalAt(in, lane, addr, size, accRead)
		if !ok {
			return 0, false, false
		}
		v, init := uint64(0), true
		if l.spec != nil {
			v, init = l.spec.load(a, off, size)
		} else {
			v, init = getBits(a.data[off:], size), a.isInit(off, size)
		}
		if !init {
			undef = true
			l.noteUndef(w, in, lane, spGlobal, addr, size, addr, false)
		}
		return v, true, undef
	case spShared:
		ok, undef := w.sharedCheck(in, lane, addr, size, accRead, 0, false)
		if !ok {
			return 0, false, false
		}
		return getBits(l.cta.smem[addr:], size), true, undef
	case spLocal:
		off, ok, undef := w.localAt(in, lane, addr, size, accRead, false)
		if !ok {
			return 0, false, false
		}
		return getBits(l.cta.lmem[off:], size), true, undef
	case spConst:
		v, ok := w.loadBank(in, lane, spConst, addr, size, l.m.constBank, "the module's %d bytes of constants")
		return v, ok, false
	case spParam:
		v, ok := w.loadBank(in, lane, spParam, addr, size, l.params, "the kernel's %d bytes of parameters")
		return v, ok, false
	}
	return 0, false, false
}

// loadBank reads size bytes at addr of bank, all of a read-only space
// (constants or parameters). Out of bounds it faults, saying what the bank
// holds through holds, a format with one %d for its length.
func (w *warp) loadBank(in *inst, lane int, space uint8, addr uint64, size int, bank []byte, holds string) (uint64, bool) {
	if addr+uint64(size) > uint64(len(bank)) {
		return 0, w.memFault(cudart.ErrOutOfBounds, in, lane, space, addr, size,
			fmt.Sprintf("%s at %s address %#x beyond "+holds, accessName(in, accRead, size), spaceNames[space], addr, len(bank)))
	}
	return getBits(bank[addr:], size), true
}

// loaded follows a load by ld (in) of v at addr in space, when the
// instruction is strong or the launch communicates: a strong global read
// may acquire, and global reads feed spin detection.
func (w *warp) loaded(in *inst, space uint8, addr, v uint64) {
	if space, addr = resolve(space, addr); space != spGlobal {
		return
	}
	l := w.l
	strong := in.mo&moStrong != 0
	if strong {
		l.noteComm()
		l.watch(l.lastGlobal, addr) // globalAt left the allocation of addr there
		w.syncRead(in.mo, addr)
	}
	w.spinRead(in, addr, v, strong)
}

// store writes size bytes of v at addr in space for lane. An undefined
// value (computed from uninitialised memory) may go to shared or local
// memory, where it stays undefined; storing one to global memory is
// reported when the barrier interval ends.
func (w *warp) store(in *inst, lane int, space uint8, addr uint64, size int, v uint64, undef bool) bool {
	if addr%uint64(size) != 0 {
		return w.misaligned(in, lane, space, addr, size)
	}
	space, addr = resolve(space, addr)
	l := w.l
	switch space {
	case spGlobal:
		a, off, ok := w.globalAt(in, lane, addr, size, accWrite)
		if !ok {
			return false
		}
		if undef {
			l.undefUse(w, in, lane, "stores to global memory ("+a.describe(addr)+") a value")
		}
		if l.spec != nil && in.mo == 0 {
			return l.spec.store(w, a, off, size, v)
		}
		if l.spec != nil {
			return w.specAbandon()
		}
		if !w.recordGlobalWrite(in, lane, a, off, size, false) {
			return false
		}
		if in != nil && in.mo&moStrong != 0 {
			l.noteComm()
			w.syncWrite(in.mo, addr, false)
		}
		if l.comm && getBits(a.data[off:], size) != v&sizeMask(size) {
			w.memChanged(a, addr)
		}
		putBits(a.data[off:], size, v)
		a.markInit(off, size)
		return true
	case spShared:
		if ok, _ := w.sharedCheck(in, lane, addr, size, accWrite, v, undef); !ok {
			return false
		}
		if l.comm && getBits(l.cta.smem[addr:], size) != v&sizeMask(size) {
			w.itWrote = true
		}
		putBits(l.cta.smem[addr:], size, v)
		return true
	case spLocal:
		off, ok, _ := w.localAt(in, lane, addr, size, accWrite, undef)
		if !ok {
			return false
		}
		putBits(l.cta.lmem[off:], size, v)
		return true
	}
	return w.memFault(cudart.ErrOutOfBounds, in, lane, space, addr, size,
		fmt.Sprintf("%s at %s address %#x: the %s space is read-only", accessName(in, accWrite, size), spaceNames[space], addr, spaceNames[space]))
}

// atomicRMW applies f to the value at addr atomically and returns the old
// value; f returns the new value and whether to write it.
func (w *warp) atomicRMW(in *inst, lane int, space uint8, addr uint64, size int, f func(old uint64, space uint8) (uint64, bool)) (uint64, bool) {
	if addr%uint64(size) != 0 {
		return 0, w.misaligned(in, lane, space, addr, size)
	}
	space, addr = resolve(space, addr)
	l := w.l
	switch space {
	case spGlobal:
		a, off, ok := w.globalAt(in, lane, addr, size, accAtomic)
		if !ok {
			return 0, false
		}
		if l.spec != nil {
			return 0, w.specAbandon()
		}
		old := getBits(a.data[off:], size)
		nv, write := f(old, spGlobal)
		mo := in.mo | moStrong
		l.noteComm()
		l.watch(a, addr)
		w.syncRead(mo, addr)
		w.spinRead(in, addr, old, true)
		if write {
			if !w.recordGlobalWrite(in, lane, a, off, size, true) {
				return 0, false
			}
			if nv&sizeMask(size) != old {
				w.memChanged(a, addr)
			}
			w.syncWrite(mo, addr, true)
			putBits(a.data[off:], size, nv)
			a.markInit(off, size)
		}
		return old, true
	case spShared:
		if ok, _ := w.sharedCheck(in, lane, addr, size, accAtomic, 0, false); !ok {
			return 0, false
		}
		old := getBits(l.cta.smem[addr:], size)
		if nv, write := f(old, spShared); write {
			putBits(l.cta.smem[addr:], size, nv)
			w.itWrote = w.itWrote || nv&sizeMask(size) != old
		}
		return old, true
	}
	return 0, w.memFault(cudart.ErrLaunch, in, lane, space, addr, size,
		fmt.Sprintf("%s on %s memory is not allowed", accessName(in, accAtomic, size), spaceNames[space]))
}

func (w *warp) misaligned(in *inst, lane int, space uint8, addr uint64, size int) bool {
	op := "access"
	if in != nil && in.src != nil {
		op = in.src.Opcode()
	}
	return w.memFault(cudart.ErrLaunch, in, lane, space, addr, size,
		fmt.Sprintf("misaligned address: %s of %d bytes at %#x is not %d-byte aligned", op, size, addr, size))
}
