package emu

import (
	"fmt"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/ptxprop/ptxprop/cudart"
)

// The CTA schedule.
//
// Several CTAs may be resident at once, each in its own context. The
// running CTA keeps running until every one of its warps waits (at a
// barrier or a warp-synchronous instruction) or spins, or, under a seeded
// schedule once the launch communicates across CTAs, until it reaches a
// switch point: a global atomic, a fence, a strong load or store, or the
// end of a warp's quantum. A kernel whose CTAs never communicate therefore
// runs its CTAs one after another, as before, while a CTA that spins on a
// lock or flag lets the others (started ones, then new ones) run.
//
// A warp spins when it takes a backward branch after an iteration that
// made a strong read of global memory, changed no memory and read the same
// addresses and values as the iteration before; it sleeps until a global
// word that some strong read has read changes. A loop that waits on a
// register alone (a clock or an iteration bound), or on a word only weak
// loads read, with memory unchanged is taken for a spin too. When every
// resident CTA waits or sleeps and no other can start, no thread can make
// progress: the launch fails with ErrDeadlock. Contexts are bounded by
// memory (ctxBudget), as a GPU bounds the CTAs resident at once.

// The instruction budget of a launch whose Config.MaxInstructions is 0:
// what a kernel that never finishes runs before it fails with ErrTimeout.
// A launch that finishes does its work in threads and over memory, so the
// budget grows with both: 2^14 instructions a thread (a thread's share of a
// row-parallel kernel, masked lanes included, is far below that), 2^8 a
// global byte allocated (a serial pass over every element several times
// over), and 2^28 besides (about a second of emulation) for small launches
// that loop. Counting instructions, not seconds, makes the verdict the
// same on a loaded machine as on an idle one.
const (
	autoBudgetThread = 1 << 14
	autoBudgetByte   = 1 << 8
	autoBudgetBase   = 1 << 28
)

func (g *globalMem) autoBudget(threads int) int64 {
	var bytes int64
	for _, a := range g.allocs {
		bytes += int64(a.end - a.base)
	}
	return autoBudgetBase + autoBudgetThread*int64(threads) + autoBudgetByte*bytes
}

// ctxBudget bounds the memory of resident CTA contexts.
const ctxBudget = 256 << 20

// run executes every CTA.
func (l *launch) run() error {
	l.b.mem.launch++
	n := int(l.nctaid[0] * l.nctaid[1] * l.nctaid[2])
	l.ncta = n
	if l.budget == 0 {
		l.budget = l.b.mem.autoBudget(n * l.nthread)
	}
	if l.rng != nil {
		l.order = make([]int32, n)
		for i := range l.order {
			l.order[i] = int32(i)
		}
		l.rng.Shuffle(n, func(i, j int) { l.order[i], l.order[j] = l.order[j], l.order[i] })
	}
	per := l.smem*(1+int(unsafe.Sizeof(shRec{}))) + 2*l.nthread*l.k.localSize + l.nwarp*int(l.k.nslots)*32*8
	l.ctxCap = max(1, min(n, 1024, ctxBudget/max(per, 1)))
	defer l.trimPool()
	if w := l.workers(); w > 1 && l.runParallel(w) {
		return nil
	}
	for {
		c, err := l.pick()
		if err != nil || c == nil {
			return err
		}
		if err := l.runSlice(c); err != nil {
			return err
		}
	}
}

// pick returns the CTA to run next, starting one if needed; nil when every
// CTA finished.
func (l *launch) pick() (*cta, error) {
	canStart := l.nextCTA < l.ncta && len(l.resident) < l.ctxCap
	if l.rng == nil {
		if c := l.cta; c != nil && c.live > 0 && c.ready(l) {
			return c, nil
		}
		for _, c := range l.resident {
			if c.ready(l) {
				return c, nil
			}
		}
	} else {
		var cands [64]*cta
		k := 0
		for _, c := range l.resident {
			if c.ready(l) && k < len(cands) {
				cands[k] = c
				k++
			}
		}
		// Until the launch communicates, CTAs run one after another.
		more := canStart && (k == 0 || l.comm && len(l.resident) < l.maxResident)
		opts := k
		if more {
			opts++
		}
		if opts > 0 {
			i := 0
			if opts > 1 {
				i = l.rng.IntN(opts)
			}
			if i < k {
				return cands[i], nil
			}
			return l.admit(), nil
		}
	}
	if canStart {
		return l.admit(), nil
	}
	if len(l.resident) == 0 {
		return nil, nil
	}
	return nil, l.stuck()
}

// ready reports whether some warp of c may be able to run.
func (c *cta) ready(l *launch) bool {
	return !c.blocked || c.blockedGen != l.memGen
}

// admit starts the next CTA in a fresh or recycled context.
func (l *launch) admit() *cta {
	c := l.takeCtx()
	idx := l.nextCTA
	if l.order != nil {
		idx = int(l.order[idx])
	}
	l.nextCTA++
	l.resident = append(l.resident, c)
	l.switchTo(c)
	l.startCTA(c, idx)
	return c
}

// takeCtx returns a context sized for this launch.
func (l *launch) takeCtx() *cta {
	if n := len(l.free); n > 0 {
		c := l.free[n-1]
		l.free = l.free[:n-1]
		return c
	}
	k := l.k
	if l.nctx == len(k.ctxPool) {
		k.ctxPool = append(k.ctxPool, &cta{})
	}
	c := k.ctxPool[l.nctx]
	l.nctx++
	for len(c.pool.warps) < l.nwarp {
		w := &warp{idx: len(c.pool.warps), regs: make([]uint64, int(k.nslots)*32), preds: make([]uint32, k.npreds),
			undef: make([]uint32, k.nslots), pundef: make([]uint32, k.npreds)}
		for _, cs := range k.consts {
			r := w.regs[cs.slot*32 : cs.slot*32+32]
			for j := range r {
				r[j] = cs.val
			}
		}
		for _, cs := range k.predConsts {
			if cs.val != 0 {
				w.preds[cs.slot] = fullMask
			}
		}
		c.pool.warps = append(c.pool.warps, w)
	}
	c.warps = c.pool.warps[:l.nwarp]
	for _, w := range c.warps {
		w.l = l
		clear(w.undef)
		clear(w.pundef)
	}
	c.smem = grow(&c.pool.smem, l.smem)
	c.sh = nil
	if !l.cfg.NoRaceCheck || !l.cfg.AllowUninitShared {
		if cap(c.pool.sh) < l.smem {
			c.pool.sh = make([]shRec, l.smem)
		}
		c.sh = c.pool.sh[:l.smem]
		clear(c.sh)
	}
	c.lmem = grow(&c.pool.lmem, l.nthread*k.localSize)
	c.linit = nil
	if !l.cfg.AllowUninitLocal {
		c.linit = grow(&c.pool.linit, l.nthread*k.localSize)
	}
	if cap(c.snap) < l.nwarp {
		c.snap = make([]uint32, l.nwarp)
	}
	c.snap = c.snap[:l.nwarp]
	return c
}

// trimPool keeps a few contexts with the kernel for its next launches.
func (l *launch) trimPool() {
	if k := l.k; len(k.ctxPool) > 4 {
		clear(k.ctxPool[4:])
		k.ctxPool = k.ctxPool[:4]
	}
}

// switchTo makes c the running CTA.
func (l *launch) switchTo(c *cta) {
	if old := l.cta; old != c {
		if old != nil {
			old.pendingUninit, old.undefOrigin = l.pendingUninit, l.undefOrigin
		}
		l.pendingUninit, l.undefOrigin = c.pendingUninit, c.undefOrigin
		l.cta, l.warps = c, c.warps
	}
}

// runSlice runs c until it finishes, blocks or reaches a switch point.
func (l *launch) runSlice(c *cta) error {
	l.switchTo(c)
	c.blocked = false
	for {
		var w *warp
		if l.rng == nil {
			for _, x := range l.warps {
				if x.runnable() {
					w = x
					break
				}
			}
		} else {
			var cand [32]*warp
			n := 0
			for _, x := range l.warps {
				if x.runnable() {
					cand[n] = x
					n++
				}
			}
			if n > 0 {
				w = cand[l.rng.IntN(n)]
			}
		}
		if w == nil {
			if l.flushUninit(); l.err != nil {
				return l.err
			}
			if c.live == 0 {
				l.finish(c)
				return nil
			}
			for _, x := range l.warps {
				if x.spinning {
					c.blocked, c.blockedGen = true, l.memGen
					return nil
				}
			}
			return l.deadlock()
		}
		quantum := 1 << 30
		if l.rng != nil {
			quantum = 1 + l.rng.IntN(48)
		}
		w.run(quantum)
		if l.err != nil {
			return l.err
		}
		if l.b.abort.Load() {
			return l.fault(cudart.ErrTimeout, w, nil, -1, "launch aborted (watchdog)")
		}
		if l.budget > 0 && l.threadInsts > l.budget {
			return l.fault(cudart.ErrTimeout, w, nil, -1, fmt.Sprintf("instruction budget of %d thread-instructions exhausted", l.budget))
		}
		if l.yieldReq {
			l.yieldReq = false
			return nil
		}
		if l.rng != nil && l.comm && l.rng.IntN(8) == 0 {
			return nil
		}
	}
}

// finish retires c.
func (l *launch) finish(c *cta) {
	for i, x := range l.resident {
		if x == c {
			l.resident = append(l.resident[:i], l.resident[i+1:]...)
			break
		}
	}
	l.free = append(l.free, c)
	c.pendingUninit, c.undefOrigin = nil, nil
	l.ctasRun++
}

// noteComm records that the launch communicates across CTAs (a global
// atomic, a fence or a strong access) and, under a seeded schedule, makes
// the instruction a switch point.
func (l *launch) noteComm() {
	if !l.comm {
		l.comm = true
		l.memo = new(vcMemo)
		if l.rng != nil {
			l.maxResident = 2 + l.rng.IntN(15)
		}
	}
	if l.rng != nil {
		l.yieldReq = true
	}
}

// spinRead folds a global read into the warp's iteration signature;
// strong reads (atomics, .volatile, .relaxed, .acquire) are what a spin
// loop waits with.
func (w *warp) spinRead(in *inst, addr, v uint64, strong bool) {
	h := w.itHash ^ (addr*0x9E3779B97F4A7C15 + v)
	w.itHash = h*0xBF58476D1CE4E5B9 ^ h>>31
	if strong {
		w.itReads++
		w.itPC, w.itAddr = in.pc, addr
	}
}

// spinStep ends a loop iteration at the backward branch at pc and reports
// whether the warp now spins.
func (w *warp) spinStep(pc int32) bool {
	spin := w.itReads > 0 && !w.itWrote && w.prevBra == pc && w.itHash == w.prevHash
	if spin {
		// It sleeps until memory changes after the iteration began: what
		// it read may already be stale.
		w.spinning, w.spinGen = true, w.itGen
		w.spinPC, w.spinAddr = w.itPC, w.itAddr
	}
	w.prevBra, w.prevHash = pc, w.itHash
	w.itHash, w.itReads, w.itWrote, w.itGen = 0, 0, false, w.l.memGen
	return spin
}

// watch notes that global addr (of allocation a) was read with a strong
// read: a spin loop may wait on it.
func (l *launch) watch(a *allocation, addr uint64) {
	if l.watched == nil {
		l.watched = map[uint64]bool{}
	}
	l.watched[addr>>3] = true
	a.watchedIn = l.b.mem.launch
}

// memChanged records a change of global addr (of allocation a) by w: the
// iteration made progress, and a change of a word some strong read read
// wakes spinning warps.
func (w *warp) memChanged(a *allocation, addr uint64) {
	w.itWrote = true
	if l := w.l; a.watchedIn == l.b.mem.launch && l.watched[addr>>3] {
		l.memGen++
	}
}

// stuck reports a launch in which every resident CTA waits or spins and no
// other CTA can start.
func (l *launch) stuck() error {
	insts := l.k.insts
	var lines []string
	var fw *warp
	var fc *cta
	var fin *inst
	flane := -1
	for _, c := range l.resident {
		for _, w := range c.warps {
			if !w.spinning {
				continue
			}
			in := &insts[w.spinPC]
			if fw == nil {
				fw, fc, fin, flane = w, c, in, bits.TrailingZeros32(w.active|w.waiting)
			}
			if len(lines) < 8 {
				lines = append(lines, fmt.Sprintf("block %s warp %d spins reading %#x at PTX line %d (pc %d) %s",
					fmtCTA(c.id), w.idx, w.spinAddr, in.line, in.pc, in.text()))
			}
		}
	}
	if len(lines) == 8 {
		lines = append(lines, "…")
	}
	started := l.nextCTA
	detail := fmt.Sprintf("no thread can make progress: every one of the %d resident blocks (%d of %d started) waits at a barrier or spins on memory no running thread will change:\n\t\t%s",
		len(l.resident), started, l.ncta, strings.Join(lines, "\n\t\t"))
	if fc != nil {
		l.switchTo(fc)
	}
	return l.fault(cudart.ErrDeadlock, fw, fin, flane, detail)
}

// sizeMask is the mask of an n-byte value.
func sizeMask(n int) uint64 {
	if n >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*n) - 1
}
