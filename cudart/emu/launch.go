package emu

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/ptxprop/ptxprop/cudart"
)

const fullMask = 0xFFFFFFFF

// launch is one kernel launch in progress.
type launch struct {
	b      *Backend
	cfg    Config
	m      *module
	k      *kernel
	g      cudart.Geometry
	params []byte
	rng    *rand.Rand // nil for the canonical schedule

	ntid    [3]uint32
	nctaid  [3]uint32
	nthread int
	nwarp   int
	smem    int // shared bytes per CTA (static + dynamic)

	warps []*warp // the running CTA's warps
	cta   *cta    // the running CTA
	gen   uint32  // barrier-interval generation counter
	err   error

	pendingUninit *Fault       // first use of an undefined value in the interval (of the running CTA)
	undefOn       bool         // some load read undefined bytes: propagate definedness
	undefOrigin   *undefOrigin // the first such load in the block, for diagnostics

	// CTA schedule (see sched.go).
	ncta        int
	order       []int32         // CTA indices in start order; nil for canonical order
	nextCTA     int             // position in order of the next CTA to start
	resident    []*cta          // started, not finished, in start order
	free        []*cta          // contexts of finished CTAs, for reuse
	nctx        int             // contexts of k.ctxPool taken by this launch
	ctxCap      int             // most CTAs resident at once
	maxResident int             // seeded schedules: CTAs kept resident once they communicate
	comm        bool            // some thread used a global atomic, fence or strong access
	yieldReq    bool            // return to the CTA scheduler after this instruction
	memGen      uint64          // changes, while comm is set, of global words a strong read read
	watched     map[uint64]bool // those words (address / 8)
	syncs       map[uint64]*vclock
	memo        *vcMemo // joins of syncs' clocks already found redundant (order.go)

	warpInsts, threadInsts int64
	gbytes                 [3]int64 // global bytes accessed, by access kind (accRead, accWrite, accAtomic)
	ctasRun                int
	budget                 int64
	lastGlobal             *allocation
	cov                    []uint8       // per PC, what Config.Coverage records (cover.go); nil when off
	instAlloc              []*allocation // by pc: the allocation warpGlobal last found for the instruction
	spec                   *specWorker   // a worker of a parallel run (see spec.go), or nil
	perm                   [32]int
	scratch                [32]uint64
	srcs                   [32]*inst
}

// cta is the state of one resident thread block, and the context (warps,
// shared and local memory) it runs in.
type cta struct {
	idx      int
	id       [3]uint32
	gbase    uint32 // global warp number of warp 0 (CTA index × warps per CTA)
	live     int    // threads not exited
	warps    []*warp
	smem     []byte
	sh       []shRec
	lmem     []byte
	linit    []byte
	bars     map[barKey]*barrier
	startGen uint32

	pendingUninit *Fault // saved while another CTA runs
	undefOrigin   *undefOrigin

	blocked    bool   // no warp could run: every one waits or spins
	blockedGen uint64 // memGen when it blocked

	// Happens-before (see order.go): what every warp of the CTA knows
	// (joined at full barriers), and each warp's clock at the last one.
	know vclock
	snap []uint32

	pool struct { // backing arrays, kept across launches
		warps             []*warp
		smem, lmem, linit []byte
		sh                []shRec
	}
}

type barKey struct {
	id int64
	pc int32 // -1 for barriers with an explicit thread count
}

type barrier struct {
	count   int // expected threads; 0 for all live threads
	arrived int
	waiters []uint32 // per warp
	red     uint8    // 0 none, 1 popc, 2 and, 3 or
	acc     uint64
	line    int32
	pc      int32
}

// warp is the state of 32 lanes.
type warp struct {
	l         *launch
	idx       int
	regs      []uint64
	preds     []uint32
	undef     []uint32 // per register slot: lanes holding an undefined value
	pundef    []uint32 // per predicate slot
	carry     uint32
	pc        int32
	active    uint32 // lanes executing at pc
	waiting   uint32 // runnable lanes parked at lanePC
	waitMin   int32
	barWait   uint32 // lanes blocked at a CTA barrier (at lanePC)
	syncWait  uint32 // lanes blocked at a warp-synchronous instruction (at lanePC)
	exited    uint32
	valid     uint32 // lanes that exist (a partial last warp has fewer)
	lanePC    [32]int32
	retStack  [32][]int32
	barEpoch  uint32
	syncEpoch uint32

	// Happens-before (see order.go).
	clock  uint32 // this warp's vector-clock component
	know   vclock // what it acquired since the CTA's last full barrier
	pend   vclock // what its strong reads saw, acquired at its next fence
	fence  vclock // what its last fence released, for later strong writes
	fenced bool
	pubs   *[]pubRec // while an atomic instruction runs: its releases, published at its end
	pubBuf []pubRec
	okGid  uint32 // a warp w is known to be ordered after up to clock okClk
	okClk  uint32

	// Spin detection (see sched.go): a backward branch taken after an
	// iteration that read global memory, changed nothing and read the same
	// addresses and values as the iteration before.
	itHash, prevHash uint64
	itReads          int32
	itWrote          bool
	itPC, spinPC     int32  // the iteration's last strong read
	itAddr, spinAddr uint64 // and its address
	prevBra          int32
	itGen, spinGen   uint64 // memGen when the iteration began, when it slept
	spinning         bool
}

func newLaunch(b *Backend, m *module, k *kernel, g cudart.Geometry, params [][]byte) (*launch, error) {
	l := &launch{b: b, cfg: b.cfg, m: m, k: k, g: g, budget: b.cfg.MaxInstructions}
	dims := func(d cudart.Dim3) [3]uint32 {
		r := [3]uint32{d.X, d.Y, d.Z}
		for i := range r {
			if r[i] == 0 {
				r[i] = 1
			}
		}
		return r
	}
	l.ntid, l.nctaid = dims(g.Block), dims(g.Grid)
	l.nthread = int(l.ntid[0] * l.ntid[1] * l.ntid[2])
	if l.nthread <= 0 || l.nthread > 1024 {
		return nil, cudart.Errorf(cudart.ErrInvalid, "%s: block of %d threads", k.name, l.nthread)
	}
	if prod := product(k.maxntid); len(k.maxntid) > 0 && l.nthread > prod {
		return nil, cudart.Errorf(cudart.ErrLaunch, "%s: block of %d threads exceeds its .maxntid %v", k.name, l.nthread, k.maxntid)
	}
	if len(k.reqntid) > 0 {
		for i, v := range k.reqntid {
			if i < 3 && int64(l.ntid[i]) != v {
				return nil, cudart.Errorf(cudart.ErrLaunch, "%s: block (%d,%d,%d) differs from its .reqntid %v", k.name, l.ntid[0], l.ntid[1], l.ntid[2], k.reqntid)
			}
		}
	}
	l.nwarp = (l.nthread + 31) / 32
	if g.SharedBytes < 0 {
		return nil, cudart.Errorf(cudart.ErrInvalid, "%s: negative dynamic shared memory", k.name)
	}
	l.smem = k.sharedEnd + g.SharedBytes
	if l.smem > 228<<10 {
		return nil, cudart.Errorf(cudart.ErrInvalid, "%s: %d bytes of shared memory per block (static %d + dynamic %d) exceed 228 KiB", k.name, l.smem, k.sharedEnd, g.SharedBytes)
	}
	if len(params) != len(k.params) {
		return nil, cudart.Errorf(cudart.ErrParams, "%s takes %d parameters, launched with %d", k.name, len(k.params), len(params))
	}
	l.params = make([]byte, k.paramSize)
	for i, p := range k.params {
		if len(params[i]) != p.size {
			return nil, cudart.Errorf(cudart.ErrParams, "%s parameter %d (%s) is %d bytes, launched with %d", k.name, i, p.name, p.size, len(params[i]))
		}
		copy(l.params[p.off:], params[i])
	}
	if l.cfg.Seed != 0 {
		l.rng = rand.New(rand.NewPCG(uint64(l.cfg.Seed), 0x9E3779B97F4A7C15))
	}
	return l, nil
}

func (l *launch) nextGen() uint32 {
	l.gen++
	return l.gen
}

// startCTA prepares context c for block idx; c is the running CTA.
func (l *launch) startCTA(c *cta, idx int) {
	c.idx = idx
	c.id = [3]uint32{uint32(idx) % l.nctaid[0], uint32(idx) / l.nctaid[0] % l.nctaid[1], uint32(idx) / (l.nctaid[0] * l.nctaid[1])}
	c.gbase = uint32(uint64(idx) * uint64(l.nwarp))
	c.live = l.nthread
	c.bars = map[barKey]*barrier{}
	c.blocked = false
	clear(c.smem)
	if c.linit != nil {
		clear(c.linit)
	}
	c.know.reset()
	clear(c.snap)
	g := l.nextGen()
	c.startGen = g
	l.pendingUninit, l.undefOrigin = nil, nil
	for _, w := range c.warps {
		w.reset(g)
		if l.undefOn {
			clear(w.undef)
			clear(w.pundef)
		}
	}
}

func (w *warp) reset(gen uint32) {
	l := w.l
	n := min(32, l.nthread-w.idx*32)
	w.valid = uint32(uint64(1)<<n - 1)
	w.active, w.pc = w.valid, 0
	w.waiting, w.waitMin = 0, maxPC
	w.barWait, w.syncWait, w.exited = 0, 0, 0
	w.barEpoch, w.syncEpoch = gen, gen
	w.carry = 0
	w.clock, w.fenced, w.okGid, w.okClk = 1, false, 0, 0
	w.know.reset()
	w.pend.reset()
	w.fence.reset()
	w.itHash, w.prevHash, w.itReads, w.itWrote, w.prevBra, w.spinning, w.itGen = 0, 0, 0, false, -1, false, w.l.memGen
	for i := range w.retStack {
		w.retStack[i] = w.retStack[i][:0]
	}
	for _, s := range l.k.specials {
		r := w.regs[s.slot*32 : s.slot*32+32]
		if s.perLane {
			for lane := range r {
				r[lane] = w.specialValue(s.name, lane)
			}
			continue
		}
		v := w.specialValue(s.name, 0)
		for lane := range r {
			r[lane] = v
		}
	}
}

const maxPC = int32(1<<31 - 1)

// tid returns the thread index of lane within the CTA.
func (w *warp) tid(lane int) [3]uint32 {
	t := uint32(w.idx*32 + lane)
	nt := w.l.ntid
	return [3]uint32{t % nt[0], t / nt[0] % nt[1], t / (nt[0] * nt[1])}
}

func (w *warp) specialValue(name string, lane int) uint64 {
	l := w.l
	t := w.tid(lane)
	axis := func() int { return int(name[len(name)-1] - 'x') }
	switch {
	case strings.HasPrefix(name, "%tid."):
		return uint64(t[axis()])
	case strings.HasPrefix(name, "%ntid."):
		return uint64(l.ntid[axis()])
	case strings.HasPrefix(name, "%ctaid."):
		return uint64(l.cta.id[axis()])
	case strings.HasPrefix(name, "%nctaid."):
		return uint64(l.nctaid[axis()])
	case strings.HasPrefix(name, "%nclusterid."):
		return uint64(l.nctaid[axis()])
	case strings.HasPrefix(name, "%clusterid."):
		return uint64(l.cta.id[axis()])
	case strings.HasPrefix(name, "%cluster_nctaid."):
		return 1
	}
	switch name {
	case "%laneid":
		return uint64(lane)
	case "%warpid":
		return uint64(w.idx)
	case "%nwarpid":
		return uint64(l.nwarp)
	case "%nsmid", "%cluster_nctarank":
		return 1
	case "%lanemask_eq":
		return 1 << lane
	case "%lanemask_le":
		return 1<<(lane+1) - 1
	case "%lanemask_lt":
		return 1<<lane - 1
	case "%lanemask_ge":
		return uint64(uint32(fullMask << lane))
	case "%lanemask_gt":
		return uint64(uint32(fullMask << (lane + 1)))
	case "%dynamic_smem_size":
		return uint64(l.g.SharedBytes)
	case "%total_smem_size", "%aggr_smem_size":
		return uint64(l.smem)
	}
	return 0 // %smid, %gridid, %envreg*, %pm*, cluster ranks, clocks at start
}

func (w *warp) runnable() bool {
	if w.spinning {
		if w.spinGen == w.l.memGen {
			return false
		}
		w.spinning = false
	}
	return w.active != 0 || w.waiting != 0 || w.syncWait != 0 && w.trySyncCompletion()
}

// run executes up to quantum warp-instructions.
func (w *warp) run(quantum int) {
	l := w.l
	insts := l.k.insts
	for n := 0; n < quantum; n++ {
		if w.active == 0 && !w.regroup() {
			return
		}
		if n&1023 == 1023 {
			if l.b.abort.Load() {
				return
			}
			if l.spec != nil && l.spec.run.stop.Load() {
				// Another worker abandoned the parallel run: stop now
				// rather than at the end of this CTA.
				w.specAbandon()
				return
			}
		}
		in := &insts[w.pc]
		m := w.active
		if in.guard >= 0 {
			p := w.preds[in.guard]
			if in.gneg {
				p = ^p
			}
			m &= p
			if l.cov != nil {
				l.noteGuard(in.pc, m, w.active)
			}
		}
		l.warpInsts++
		l.threadInsts += int64(bits.OnesCount32(w.active))
		if l.b.taint != nil {
			w.taintStep(in, m)
		}
		if l.undefOn && in.kind != kOp {
			w.checkGuard(in)
			if in.kind == kBar && in.sub != 0 {
				if u := w.pundef[in.c] & m; u != 0 {
					l.undefUse(w, in, bits.TrailingZeros32(u), "passes to bar.red a predicate")
				}
			}
		}
		switch in.kind {
		case kOp:
			if m != 0 {
				if in.fuse != nil && l.fused(in) {
					execFusedAdd(w, in, m)
				} else {
					in.fn(w, in, m)
				}
				if l.err != nil {
					return
				}
			}
			if l.undefOn {
				w.shadow(in, m)
			}
			w.pc++
			if w.pc == w.waitMin {
				w.merge()
			}
		case kBra:
			w.branch(in.target, m)
			if l.comm && m != 0 && in.target <= in.pc && w.spinStep(in.pc) {
				return
			}
		case kExit:
			w.exit(m)
		case kRet:
			w.ret(in, m)
		case kCall:
			w.call(in, m)
		case kBar:
			w.barrier(in, m)
		case kWarpSync:
			w.warpSync(in, m)
		case kTrap:
			if m != 0 {
				l.fault(cudart.ErrLaunch, w, in, bits.TrailingZeros32(m), in.src.Op+" executed")
				return
			}
			w.next()
		}
		if l.err != nil || l.yieldReq {
			return
		}
		if l.budget > 0 && l.threadInsts > l.budget {
			return
		}
	}
}

// next advances the group past the current instruction.
func (w *warp) next() {
	w.pc++
	w.settle()
}

// park puts lanes m aside at pc.
func (w *warp) park(m uint32, pc int32) {
	w.waiting |= m
	for ; m != 0; m &= m - 1 {
		w.lanePC[bits.TrailingZeros32(m)] = pc
	}
	w.waitMin = min(w.waitMin, pc)
}

func (w *warp) recomputeWaitMin() {
	w.waitMin = maxPC
	for m := w.waiting; m != 0; m &= m - 1 {
		w.waitMin = min(w.waitMin, w.lanePC[bits.TrailingZeros32(m)])
	}
}

// merge adds the parked lanes at pc to the group.
func (w *warp) merge() {
	for m := w.waiting; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		if w.lanePC[l] == w.pc {
			w.active |= 1 << l
			w.waiting &^= 1 << l
		}
	}
	w.recomputeWaitMin()
}

// settle keeps the lowest-PC lanes running: it merges lanes parked at pc and
// switches to parked lanes at a lower pc.
func (w *warp) settle() {
	if w.waiting == 0 || w.active != 0 && w.pc < w.waitMin {
		return
	}
	if w.active != 0 && w.pc == w.waitMin {
		w.merge()
		return
	}
	if w.active != 0 {
		w.park(w.active, w.pc)
		w.active = 0
	}
	w.regroup()
}

// regroup picks the lowest-PC parked lanes as the new group. It returns
// false when no lane of the warp can run.
func (w *warp) regroup() bool {
	if w.active != 0 {
		return true
	}
	if w.waiting == 0 {
		if w.syncWait != 0 && w.trySyncCompletion() {
			return w.regroup()
		}
		return false
	}
	w.pc = w.waitMin
	w.merge()
	return true
}

func (w *warp) branch(target int32, taken uint32) {
	not := w.active &^ taken
	switch {
	case taken == 0:
		w.pc++
	case not == 0:
		w.pc = target
	default:
		w.park(not, w.pc+1)
		w.active = taken
		w.pc = target
	}
	w.settle()
}

func (w *warp) exit(m uint32) {
	if m != 0 {
		w.exited |= m
		w.active &^= m
		w.l.cta.live -= bits.OnesCount32(m)
		w.l.checkBarriers()
	}
	if w.active != 0 {
		w.next()
	} else {
		w.regroup()
	}
}

// call enters a .func for lanes m.
func (w *warp) call(in *inst, m uint32) {
	if m == 0 {
		w.next()
		return
	}
	ci := in.call
	for mm := m; mm != 0; mm &= mm - 1 {
		lane := bits.TrailingZeros32(mm)
		if len(w.retStack[lane]) >= 64 {
			w.l.fault(cudart.ErrLaunch, w, in, lane, "call stack overflow")
			return
		}
		w.retStack[lane] = append(w.retStack[lane], in.pc)
		for _, c := range ci.args {
			if !w.frameCopy(lane, c, in) {
				return
			}
		}
	}
	w.branch(ci.target, m)
}

// ret returns lanes m from a .func to their call sites.
func (w *warp) ret(in *inst, m uint32) {
	if m == 0 {
		w.next()
		return
	}
	insts := w.l.k.insts
	w.active &^= m
	for mm := m; mm != 0; mm &= mm - 1 {
		lane := bits.TrailingZeros32(mm)
		st := w.retStack[lane]
		if len(st) == 0 {
			w.l.fault(cudart.ErrLaunch, w, in, lane, "ret with an empty call stack")
			return
		}
		callPC := st[len(st)-1]
		w.retStack[lane] = st[:len(st)-1]
		for _, c := range insts[callPC].call.rets {
			if !w.frameCopy(lane, c, in) {
				return
			}
		}
		w.park(1<<lane, callPC+1)
	}
	if w.active != 0 {
		w.next()
	} else {
		w.regroup()
	}
}

// frameCopy copies call parameter bytes within a thread's local frame.
func (w *warp) frameCopy(lane int, c frameCopy, in *inst) bool {
	t := w.idx*32 + lane
	base := t * w.l.k.localSize
	lm := w.l.cta.lmem
	copy(lm[base+int(c.to):base+int(c.to)+c.n], lm[base+int(c.from):base+int(c.from)+c.n])
	if li := w.l.cta.linit; li != nil {
		copy(li[base+int(c.to):base+int(c.to)+c.n], li[base+int(c.from):base+int(c.from)+c.n])
	}
	return true
}

// firstValue returns slot's value in the lowest lane of m.
func (w *warp) firstValue(slot int32, m uint32) uint64 {
	return w.regs[slot*32+int32(bits.TrailingZeros32(m))]
}

// barrier handles bar.sync, barrier.sync, bar.red and bar.arrive.
func (w *warp) barrier(in *inst, m uint32) {
	l := w.l
	if m == 0 {
		w.next()
		return
	}
	id := int64(uint32(w.firstValue(in.a, m)))
	count := 0
	key := barKey{id, in.pc}
	if in.b >= 0 {
		count = int(uint32(w.firstValue(in.b, m)))
		key.pc = -1
		if count <= 0 || count%32 != 0 && count < l.nthread {
			l.fault(cudart.ErrLaunch, w, in, bits.TrailingZeros32(m), fmt.Sprintf("barrier thread count %d is not a positive multiple of the warp size", count))
			return
		}
	}
	bar := l.cta.bars[key]
	if bar == nil {
		bar = &barrier{count: count, waiters: make([]uint32, l.nwarp), red: in.sub, line: in.line, pc: in.pc}
		if in.sub == 2 {
			bar.acc = 1
		}
		l.cta.bars[key] = bar
	}
	if in.sub != 0 { // bar.red: fold in the predicate c
		p := w.preds[in.c]
		if in.cneg {
			p = ^p
		}
		p &= m
		switch in.sub {
		case 1:
			bar.acc += uint64(bits.OnesCount32(p))
		case 2:
			if p != m {
				bar.acc = 0
			}
		case 3:
			if p != 0 {
				bar.acc = 1
			}
		}
	}
	bar.arrived += bits.OnesCount32(m)
	if in.aneg { // bar.arrive: do not wait
		l.completeBarrier(key, bar)
		w.next()
		return
	}
	w.barWait |= m
	for mm := m; mm != 0; mm &= mm - 1 {
		w.lanePC[bits.TrailingZeros32(mm)] = w.pc
	}
	bar.waiters[w.idx] |= m
	w.active &^= m
	l.completeBarrier(key, bar)
	if w.active != 0 {
		w.next()
	} else {
		w.regroup()
	}
}

// completeBarrier releases a barrier's waiters once enough threads arrived.
func (l *launch) completeBarrier(key barKey, bar *barrier) {
	want := bar.count
	if want == 0 {
		want = l.cta.live
	}
	if bar.arrived < want {
		return
	}
	delete(l.cta.bars, key)
	l.flushUninit()
	g := l.nextGen()
	insts := l.k.insts
	for wi, lanes := range bar.waiters {
		w := l.warps[wi]
		if bar.count == 0 {
			w.barEpoch, w.syncEpoch = g, g
		}
		if lanes == 0 {
			continue
		}
		w.barEpoch, w.syncEpoch = g, g
		w.barWait &^= lanes
		for mm := lanes; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			pc := w.lanePC[lane]
			if in := &insts[pc]; in.sub != 0 && in.d >= 0 {
				if in.sub == 1 {
					w.regs[in.d*32+int32(lane)] = bar.acc
				} else if bar.acc != 0 {
					w.preds[in.d] |= 1 << lane
				} else {
					w.preds[in.d] &^= 1 << lane
				}
			}
			w.park(1<<lane, pc+1)
		}
	}
	if bar.count == 0 {
		l.orderBarrier()
	}
}

// checkBarriers re-checks full-CTA barriers after threads exited.
func (l *launch) checkBarriers() {
	keys := make([]barKey, 0, len(l.cta.bars))
	for key, bar := range l.cta.bars {
		if bar.count == 0 {
			keys = append(keys, key)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].id < keys[j].id || keys[i].id == keys[j].id && keys[i].pc < keys[j].pc
	})
	for _, key := range keys {
		l.completeBarrier(key, l.cta.bars[key])
	}
}

// deadlock reports the CTA's blocked threads.
func (l *launch) deadlock() error {
	insts := l.k.insts
	var lines []string
	var first *warp
	var firstIn *inst
	firstLane := -1
	for _, w := range l.warps {
		groups := map[int32]uint32{}
		kinds := map[int32]string{}
		for m := w.barWait | w.syncWait; m != 0; m &= m - 1 {
			lane := bits.TrailingZeros32(m)
			pc := w.lanePC[lane]
			groups[pc] |= 1 << lane
			if w.barWait&(1<<lane) != 0 {
				kinds[pc] = "barrier"
			} else {
				kinds[pc] = "warp-sync"
			}
		}
		pcs := make([]int32, 0, len(groups))
		for pc := range groups {
			pcs = append(pcs, pc)
		}
		sort.Slice(pcs, func(i, j int) bool { return pcs[i] < pcs[j] })
		for _, pc := range pcs {
			in := &insts[pc]
			lanes := groups[pc]
			if first == nil {
				first, firstIn, firstLane = w, in, bits.TrailingZeros32(lanes)
			}
			desc := fmt.Sprintf("warp %d lanes %s wait at PTX line %d (pc %d) %s", w.idx, laneRanges(lanes), in.line, pc, in.text())
			if kinds[pc] == "warp-sync" {
				mask := uint32(w.regs[in.memberSlot()*32+int32(bits.TrailingZeros32(lanes))])
				missing := mask & w.valid &^ w.exited &^ w.syncWait
				desc += fmt.Sprintf(" for lanes %s of membermask %#08x", laneRanges(missing), mask)
			}
			lines = append(lines, desc)
		}
		if w.exited != 0 {
			lines = append(lines, fmt.Sprintf("warp %d lanes %s exited", w.idx, laneRanges(w.exited)))
		}
	}
	detail := fmt.Sprintf("no thread of block (%d,%d,%d) can proceed (%d of %d threads not exited):\n\t\t%s",
		l.cta.id[0], l.cta.id[1], l.cta.id[2], l.cta.live, l.nthread, strings.Join(lines, "\n\t\t"))
	return l.fault(cudart.ErrDeadlock, first, firstIn, firstLane, detail)
}

// fault records and returns the launch's first error.
func (l *launch) fault(code error, w *warp, in *inst, lane int, detail string) error {
	if l.err == nil {
		l.err = l.newFault(code, w, in, lane, detail)
	}
	return l.err
}

func (l *launch) newFault(code error, w *warp, in *inst, lane int, detail string) *Fault {
	f := &Fault{Code: code, Kernel: l.k.name, PC: -1, Lane: lane, CTA: l.cta.id, Detail: detail}
	if in != nil {
		f.PC, f.Line, f.Inst = int(in.pc), int(in.line), in.text()
	}
	if w != nil && lane >= 0 {
		f.Thread = w.tid(lane)
	}
	return f
}

// flushUninit reports a pending uninitialised shared read at the end of a
// barrier interval.
func (l *launch) flushUninit() {
	if l.pendingUninit != nil && l.err == nil {
		l.err = l.pendingUninit
	}
	l.pendingUninit = nil
}

func product(xs []int64) int {
	p := 1
	for _, x := range xs {
		p *= int(max(x, 1))
	}
	return p
}

// grow returns (*pool)[:n], reallocating the pool when it is too small.
func grow(pool *[]byte, n int) []byte {
	if cap(*pool) < n {
		*pool = make([]byte, n)
	}
	return (*pool)[:n]
}
