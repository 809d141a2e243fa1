package emu

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Parallel CTAs.
//
// Under the canonical schedule a launch whose kernel has no atomic, fence
// or strong access runs its CTAs one after another, in index order. When
// no CTA touches a global byte that another CTA writes, every order gives
// the same memory, write records and statistics, so such a launch may run
// its CTAs on all cores at once. Whether that holds is known only after
// the CTAs ran, so run first runs them speculatively (runParallel):
//
//   - each worker runs whole CTAs, one at a time, in a context of its own;
//   - global memory is not changed meanwhile: a worker's stores go to
//     private copies of the pages they hit (with their write records), and
//     its loads read those copies or the shared, unchanging memory;
//   - every byte a CTA reads or writes is noted, and when the CTA ends its
//     bytes are checked against those of the CTAs that ended before: a
//     byte that one CTA writes and another reads or writes is a conflict.
//
// A conflict needs a write, so the reads of an allocation that no CTA of
// the launch writes need not be noted: while a kernel has not shown
// otherwise, a worker reads an allocation without noting the bytes, and
// marks it read so (specRead); the first store to an allocation marks it
// written (specWritten), after which reads are noted. The marks change
// only from unmarked, atomically, so every read of a written allocation
// was noted; a store to an allocation read unnoted abandons the
// speculation, and the kernel's later launches note every read.
//
// Without a conflict the private pages are copied into memory, which is
// then what the serial run would have left. A conflict, any fault or
// uninitialised read, an exhausted instruction budget, an abort or too
// much private memory abandons the speculation: nothing was changed, and
// the launch runs serially from the start, which finds exactly what the
// serial run always finds (the race, the fault, the value order gives).
// Seeded schedules, whose interleavings depend on one random stream, and
// kernels that may communicate across CTAs always run serially.

// errSpec ends a worker's CTA when the speculation is abandoned.
var errSpec = errors.New("emu: parallel run abandoned")

// specBudget bounds the private memory of one speculative launch.
const specBudget = 512 << 20

// An allocation's marks in a parallel launch (allocation.spec).
const (
	specRead    = 1 // read without noting the bytes
	specWritten = 2 // stored to: its reads are noted
)

// specRun is the state the workers of one launch share.
type specRun struct {
	epoch      uint64      // the launch number << 2, in allocation.spec
	trackReads bool        // note every read (kernel.trackReads)
	readWrite  atomic.Bool // a store found its allocation read unnoted

	stop  atomic.Bool
	next  atomic.Int64 // next CTA index to run
	bytes atomic.Int64 // private memory held

	mu    sync.Mutex
	sum   map[*allocation][]*specSum // bytes read and written by ended CTAs
	pool  []specBuf                  // private pages to reuse
	arena []specSum                  // summaries to hand out
	spare [][]specSum                // arenas of earlier launches (cleared when taken)
	taken [][]specSum                // arenas this launch took
	forks []*launch
}

// specSum holds, for one page of an allocation, the bytes CTAs that ended
// read and wrote.
type specSum struct {
	r, w [pageSize / 64]uint64
	anyW bool // w is not all 0
}

// specWorker is one worker's private view of global memory.
type specWorker struct {
	run     *specRun
	allocs  []*specAlloc
	lastA   *allocation
	lastSA  *specAlloc
	touched []*specPage // pages the running CTA accessed
	free    []*specPage // page structures to reuse (from earlier launches)

	instPage []instPage // by pc: the page onePage last returned for the instruction
	ctaSeq   uint32     // counts the worker's CTAs (from 1): instPage's entries of the running CTA hold it
}

// instPage is the page onePage returned for an instruction, with what
// identifies it, so that the check reads no page structure.
type instPage struct {
	pg  *specPage
	a   *allocation
	idx int
	cta uint32
}

type specAlloc struct {
	a     *allocation
	pages []*specPage
}

// specPage is a worker's page of an allocation.
type specPage struct {
	sa    *specAlloc
	idx   int
	inCTA bool
	anyW  bool                  // the running CTA wrote some byte: w is not all 0
	r, w  [pageSize / 64]uint64 // bytes the running CTA read, wrote
	wrote [pageSize / 64]uint64 // bytes any CTA of the worker wrote
	data  []byte                // the page with the worker's stores; nil until one
	rec   []uint64              // write records of the bytes in wrote, 0 elsewhere in recValid's chunks
	// recValid has a bit per 64-byte chunk of rec that holds this launch's
	// records; the others are stale, cleared when first written (see
	// stampChunks) and adopted as stale (allocation.valid).
	recValid uint64
}

var specPageSize = int64(unsafe.Sizeof(specPage{}))

// page returns the worker's page holding byte off of a, noting it as
// accessed by the running CTA.
func (s *specWorker) page(a *allocation, off int) *specPage {
	sa := s.lastSA
	if s.lastA != a {
		sa = nil
		for _, x := range s.allocs {
			if x.a == a {
				sa = x
				break
			}
		}
		if sa == nil {
			sa = &specAlloc{a: a, pages: make([]*specPage, (len(a.data)+pageSize-1)>>pageBits)}
			s.allocs = append(s.allocs, sa)
		}
		s.lastA, s.lastSA = a, sa
	}
	p := off >> pageBits
	pg := sa.pages[p]
	if pg == nil {
		if n := len(s.free); n > 0 {
			pg, s.free = s.free[n-1], s.free[:n-1]
			pg.sa, pg.idx = sa, p // the rest left clean by runParallel
		} else {
			pg = &specPage{sa: sa, idx: p}
		}
		sa.pages[p] = pg
		s.run.bytes.Add(specPageSize)
	}
	if !pg.inCTA {
		pg.inCTA = true
		s.touched = append(s.touched, pg)
	}
	return pg
}

// markBytes sets bytes [o, o+n) of a page bitmap.
func markBytes(bm *[pageSize / 64]uint64, o, n int) {
	for n > 0 {
		k := min(n, 64-o&63)
		bm[o>>6] |= (uint64(1)<<k - 1) << (o & 63)
		o, n = o+k, n-k
	}
}

// unnoted reports whether the worker reads a without noting the bytes:
// unless the kernel notes every read, when no CTA stored to a in this
// launch, which a's mark then says.
func (s *specWorker) unnoted(a *allocation) bool {
	r := s.run
	if r.trackReads {
		return false
	}
	for {
		m := a.spec.Load()
		switch m {
		case r.epoch | specRead:
			return true
		case r.epoch | specWritten:
			return false
		}
		if a.spec.CompareAndSwap(m, r.epoch|specRead) {
			return true
		}
	}
}

// writable marks a written, or reports false when a CTA read it unnoted:
// the speculation cannot know whether the store conflicts.
func (s *specWorker) writable(a *allocation) bool {
	r := s.run
	for {
		m := a.spec.Load()
		switch m {
		case r.epoch | specWritten:
			return true
		case r.epoch | specRead:
			r.readWrite.Store(true)
			return false
		}
		if a.spec.CompareAndSwap(m, r.epoch|specWritten) {
			return true
		}
	}
}

// load reads size bytes at byte off of a, aligned, as the running CTA
// sees them; init reports whether every byte was written.
func (s *specWorker) load(a *allocation, off, size int) (v uint64, init bool) {
	if s.unnoted(a) {
		return getBits(a.data[off:], size), a.isInit(off, size)
	}
	pg := s.page(a, off)
	po := off & (pageSize - 1)
	markBytes(&pg.r, po, size)
	if pg.data == nil {
		return getBits(a.data[off:], size), a.isInit(off, size)
	}
	init = true
	for i := 0; i < size; i++ {
		if pg.wrote[(po+i)>>6]>>((po+i)&63)&1 == 0 && !a.isInit(off+i, 1) {
			init = false
		}
	}
	return getBits(pg.data[po:], size), init
}

// store writes size bytes of v at byte off of a, aligned, for warp w,
// recording the store as recordGlobalWrite does; false abandons the
// speculation (writable).
func (s *specWorker) store(w *warp, a *allocation, off, size int, v uint64) bool {
	if !s.writable(a) {
		return w.specAbandon()
	}
	pg := s.page(a, off)
	po := off & (pageSize - 1)
	if pg.data == nil {
		s.cow(pg)
	}
	pg.anyW = true
	markBytes(&pg.w, po, size)
	markBytes(&pg.wrote, po, size)
	me := uint64(w.gid())<<wcWarpShft | uint64(w.clock)<<wcClkShft
	freshChunks(pg.rec, &pg.recValid, po, size)
	for i := po; i < po+size; i++ {
		cnt := pg.rec[i] & wcMask
		if cnt < wcMask {
			cnt++
		}
		pg.rec[i] = me | cnt
	}
	putBits(pg.data[po:], size, v)
	return true
}

// endCTA checks the running CTA's bytes against those of the CTAs that
// ended before and adds them; false is a conflict.
func (s *specWorker) endCTA() bool {
	r := s.run
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := true
	for _, pg := range s.touched {
		a := pg.sa.a
		sums := r.sum[a]
		if sums == nil {
			sums = make([]*specSum, len(pg.sa.pages))
			r.sum[a] = sums
		}
		sm := sums[pg.idx]
		if sm == nil {
			if len(r.arena) == 0 {
				if n := len(r.spare); n > 0 {
					r.arena, r.spare = r.spare[n-1], r.spare[:n-1]
					clear(r.arena)
				} else {
					r.arena = make([]specSum, specArena)
				}
				r.taken = append(r.taken, r.arena)
				r.bytes.Add(int64(len(r.arena)) * int64(unsafe.Sizeof(specSum{})))
			}
			sm, r.arena = &r.arena[0], r.arena[1:]
			sums[pg.idx] = sm
		}
		// Most pages are only read (the inputs): their w is 0, and so is
		// the summary's while no CTA wrote there.
		switch {
		case pg.anyW:
			for i := range sm.r {
				if pg.w[i]&(sm.r[i]|sm.w[i]) != 0 || pg.r[i]&sm.w[i] != 0 {
					ok = false
				}
				sm.r[i] |= pg.r[i]
				sm.w[i] |= pg.w[i]
			}
			sm.anyW = true
			clear(pg.w[:])
			pg.anyW = false
		case sm.anyW:
			for i := range sm.r {
				if pg.r[i]&sm.w[i] != 0 {
					ok = false
				}
				sm.r[i] |= pg.r[i]
			}
		default:
			for i := range sm.r {
				sm.r[i] |= pg.r[i]
			}
		}
		clear(pg.r[:])
		pg.inCTA = false
	}
	s.touched = s.touched[:0]
	s.ctaSeq++
	return ok
}

// commit copies the workers' stores and their write records into memory,
// the pages of each allocation split into n ranges committed at once: a
// page's state (bytes, write records, initialised bits) is its own, and
// each range takes the workers in order, as one loop over them would.
func commit(forks []*launch, n int, launch uint32) {
	for _, f := range forks {
		for _, sa := range f.spec.allocs {
			sa.a.initShadow() // shared by the ranges: made before
		}
	}
	onAll(n, func(j int) {
		for _, f := range forks {
			for _, sa := range f.spec.allocs {
				np := len(sa.pages)
				for _, pg := range sa.pages[j*np/n : (j+1)*np/n] {
					if pg != nil && pg.data != nil {
						pg.commit(sa.a, launch)
					}
				}
			}
		}
	})
}

// onAll runs f(0), …, f(n-1) at once, f(0) on the calling goroutine (one
// goroutine fewer to start and wake), and returns when all have.
func onAll(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i)
		}()
	}
	f(0)
	wg.Wait()
}

// commit copies the page's stores and their write records into a. The
// records of a page no other worker committed in this launch are adopted
// whole, with their stale chunks (in the worker's current chunks the
// records are 0 where it did not write, as on a page fresh in this
// launch); the page's old records go to the worker, stale for whichever
// page it next takes (cow).
func (pg *specPage) commit(a *allocation, launch uint32) {
	base := pg.idx << pageBits
	var recs []uint64
	if old, ok := a.adoptPage(pg.idx, pg.rec, pg.recValid, launch); ok {
		pg.rec = old
	} else {
		recs = a.page(base, launch)
	}
	for i, word := range pg.wrote {
		if word == ^uint64(0) {
			o := i * 64
			copy(a.data[base+o:base+o+64], pg.data[o:o+64])
			if recs != nil {
				copy(recs[o:o+64], pg.rec[o:o+64])
			}
			if a.init != nil {
				a.init[(base+o)>>6] = ^uint64(0)
			}
			continue
		}
		for ; word != 0; word &= word - 1 {
			o := i*64 + bits.TrailingZeros64(word)
			a.data[base+o] = pg.data[o]
			if recs != nil {
				recs[o] = pg.rec[o]
			}
			a.markInit(base+o, 1)
		}
	}
}

// adoptPage makes recs, whose chunks valid are current, the write records
// of page p of a when no records were written there in this launch, and
// returns the page's old records (nil if it had none).
func (a *allocation) adoptPage(p int, recs []uint64, valid uint64, launch uint32) ([]uint64, bool) {
	a.initShadow()
	old := a.shadow[p]
	if old != nil && a.epochs[p] == launch {
		return nil, false
	}
	a.shadow[p], a.epochs[p], a.valid[p] = recs, launch, valid
	return old, true
}

// mayCommunicate reports whether k has an atomic, a fence or a strong
// access: an instruction through which CTAs may communicate.
func (k *kernel) mayCommunicate() bool {
	if k.comm == 0 {
		k.comm = 1
		for i := range k.insts {
			if k.insts[i].mo != 0 {
				k.comm = 2
				break
			}
		}
	}
	return k.comm == 2
}

// parallelMin is the work (thread-instructions of the kernel's last
// launch) below which starting workers costs more than they save.
const parallelMin = 1 << 18

// workers returns how many CTAs of the launch may run at once.
func (l *launch) workers() int {
	n := l.b.workers
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if l.rng != nil || l.b.ref || l.b.taint != nil || l.k.mayCommunicate() || l.k.lastInsts < parallelMin && l.b.workers == 0 {
		return 1
	}
	return min(n, l.ncta, l.ctxCap)
}

// runParallel runs every CTA of the launch on n workers and reports
// whether it did; false leaves the launch as it was, to run serially.
func (l *launch) runParallel(n int) bool {
	sr := &specRun{epoch: uint64(l.b.mem.launch) << 2, trackReads: l.k.trackReads,
		sum: map[*allocation][]*specSum{}, pool: l.b.specPool, spare: l.b.specSums}
	free := l.b.specPages
	defer func() {
		// Keep the private pages and their structures for the next launch
		// (in a new list: the workers' lists share free's array).
		var kept []*specPage
		for _, f := range sr.forks {
			kept = append(kept, f.spec.free...)
			for _, sa := range f.spec.allocs {
				for _, pg := range sa.pages {
					if pg == nil {
						continue
					}
					if pg.data != nil && len(sr.pool) < specPoolMax {
						sr.pool = append(sr.pool, specBuf{pg.data, pg.rec})
					}
					if len(kept) < specPagesMax {
						// Clean for page, which sets only sa and idx:
						// endCTA cleared r and w unless the CTA was cut
						// short, and only a page with data has wrote bits.
						if pg.inCTA {
							clear(pg.r[:])
							clear(pg.w[:])
							pg.inCTA, pg.anyW = false, false
						}
						if pg.data != nil {
							clear(pg.wrote[:])
						}
						pg.sa, pg.data, pg.rec, pg.recValid = nil, nil, nil, 0
						kept = append(kept, pg)
					}
				}
			}
		}
		l.b.specPool, l.b.specPages = sr.pool, kept
		l.b.specSums = append(sr.spare, sr.taken...)
		if len(l.b.specSums) > specArenasMax {
			l.b.specSums = l.b.specSums[:specArenasMax]
		}
	}()
	forks := make([]*launch, n)
	ctxs := make([]*cta, n)
	for i := range forks {
		c := l.takeCtx()
		f := new(launch)
		*f = *l
		f.resident, f.free = nil, nil
		f.spec = &specWorker{run: sr, ctaSeq: 1}
		l.forkCoverage(f)
		k := len(free) / (n - i)
		f.spec.free, free = free[len(free)-k:], free[:len(free)-k]
		f.instAlloc = nil // each worker keeps its own
		for _, w := range c.warps {
			w.l = f
		}
		forks[i], ctxs[i] = f, c
	}
	sr.forks = forks
	onAll(n, func(i int) { forks[i].specLoop(ctxs[i]) })
	var ti, wi int64
	var gb [3]int64
	ctas := 0
	for i, f := range forks {
		c := ctxs[i]
		for _, w := range c.warps {
			w.l = l
			clear(w.undef)
			clear(w.pundef)
		}
		c.pendingUninit, c.undefOrigin = nil, nil
		l.free = append(l.free, c)
		l.gen = max(l.gen, f.gen) // shared-memory records stay older than later CTAs
		ti, wi, ctas = ti+f.threadInsts, wi+f.warpInsts, ctas+f.ctasRun
		for k := range gb {
			gb[k] += f.gbytes[k] - l.gbytes[k] // each fork started from l's counts
		}
	}
	if sr.readWrite.Load() {
		l.k.trackReads = true
	}
	if sr.stop.Load() || ctas != l.ncta || l.budget > 0 && ti > l.budget {
		return false
	}
	l.b.parallelRuns++

	commit(forks, n, l.b.mem.launch)
	for _, f := range forks {
		l.joinCoverage(f)
	}
	l.threadInsts, l.warpInsts, l.ctasRun = ti, wi, ctas
	for k := range gb {
		l.gbytes[k] += gb[k]
	}
	l.nextCTA = l.ncta
	return true
}

// specLoop runs CTAs in context c until none is left or the speculation
// is abandoned.
func (l *launch) specLoop(c *cta) {
	s := l.spec
	r := s.run
	for !r.stop.Load() {
		idx := int(r.next.Add(1) - 1)
		if idx >= l.ncta {
			return
		}
		l.resident = append(l.resident[:0], c)
		l.free = l.free[:0]
		l.switchTo(c)
		l.startCTA(c, idx)
		err := l.runSlice(c)
		if err != nil || c.live > 0 || l.undefOn || l.pendingUninit != nil || l.comm ||
			l.budget > 0 && l.threadInsts > l.budget || !s.endCTA() || r.bytes.Load() > specBudget {
			r.stop.Store(true)
			return
		}
	}
}

// specAbandon ends a worker's CTA at an access the parallel run does not
// model (mayCommunicate keeps such kernels serial).
func (w *warp) specAbandon() bool {
	if w.l.err == nil {
		w.l.err = errSpec
	}
	return false
}

// onePage returns the worker's page holding global addresses [lo, end) of
// a, accessed by in, when they lie on one page.
func (s *specWorker) onePage(w *warp, in *inst, a *allocation, lo, end uint64) *specPage {
	o := int(lo - a.base)
	if o>>pageBits != int(end-1-a.base)>>pageBits {
		return nil
	}
	// The page the instruction used last, when it is this one and the
	// running CTA already noted it, saves page's search.
	if s.instPage == nil {
		s.instPage = make([]instPage, len(w.l.k.insts))
	}
	e := &s.instPage[in.pc]
	if e.cta == s.ctaSeq && e.a == a && e.idx == o>>pageBits {
		return e.pg
	}
	pg := s.page(a, o)
	*e = instPage{pg, a, o >> pageBits, s.ctaSeq}
	return pg
}

// load1 is execLd1 for the lanes m of a warp whose addresses, [lo, hi]
// in allocation a, lie on one page, without uninitialised-byte tracking;
// false leaves the lanes to load.
func (s *specWorker) load1(w *warp, a *allocation, lo, hi uint64, in *inst, m uint32, run bool) bool {
	n := uint64(in.t.n)
	if a.init != nil {
		return false
	}
	if s.unnoted(a) {
		readLanes(w, in, a.data, uint64(in.off)-a.base, lo-a.base, m, run)
		return true
	}
	pg := s.onePage(w, in, a, lo, hi+n)
	if pg == nil {
		return false
	}
	src := a.data[pg.idx<<pageBits:]
	if pg.data != nil {
		src = pg.data
	}
	pbase := a.base + uint64(pg.idx<<pageBits)
	// Marking every byte between the lowest and the highest address read
	// may note bytes no lane read: a conflict found there only sends the
	// launch to the serial run.
	markBytes(&pg.r, int(lo-pbase), int(hi+n-lo))
	readLanes(w, in, src, uint64(in.off)-pbase, lo-pbase, m, run)
	return true
}

// readLanes loads in's lanes m from src, where off is in's offset and lo
// the lowest address read, both relative to src; run: the lanes read
// 32 consecutive elements from lo.
func readLanes(w *warp, in *inst, src []byte, off, lo uint64, m uint32, run bool) {
	base, d := w.ra(in.a), w.ra(in.vec[0])
	n := uint64(in.t.n)
	size, t := int(n), in.t
	if run {
		loadRun(d, src[lo:lo+32*n], t)
		return
	}
	if size == 4 && t.k != 's' {
		for ; m != 0; m &= m - 1 {
			lane := bits.TrailingZeros32(m)
			d[lane] = uint64(binary.LittleEndian.Uint32(src[base[lane]+off:]))
		}
		return
	}
	for ; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m)
		d[lane] = t.ext(getBits(src[base[lane]+off:], size))
	}
}

// store1 is execSt1 for the lanes m of a warp whose addresses, [lo, hi]
// in allocation a, lie on one page; false leaves the lanes to store.
func (s *specWorker) store1(w *warp, a *allocation, lo, hi uint64, in *inst, m uint32, run bool) bool {
	n := uint64(in.t.n)
	if !s.writable(a) {
		return false // store abandons
	}
	pg := s.onePage(w, in, a, lo, hi+n)
	if pg == nil {
		return false
	}
	if pg.data == nil {
		s.cow(pg)
	}
	pg.anyW = true
	base, v := w.ra(in.a), w.ra(in.vec[0])
	off := uint64(in.off) - a.base - uint64(pg.idx<<pageBits)
	size := int(n)
	want := uint64(1)<<n - 1
	me := uint64(w.gid())<<wcWarpShft | uint64(w.clock)<<wcClkShft
	if run {
		o := int(lo - a.base - uint64(pg.idx<<pageBits))
		markBytes(&pg.w, o, 32*size)
		markBytes(&pg.wrote, o, 32*size)
		stampChunks(pg.rec, &pg.recValid, o, 32*size, me)
		storeRun(pg.data[o:o+32*size], v, in.t)
		return true
	}
	for ; m != 0; m &= m - 1 {
		lane := bits.TrailingZeros32(m)
		o := base[lane] + off
		pg.w[o>>6] |= want << (o & 63)
		pg.wrote[o>>6] |= want << (o & 63)
		freshChunks(pg.rec, &pg.recValid, int(o), int(n))
		for i := o; i < o+n; i++ {
			cnt := pg.rec[i] & wcMask
			if cnt < wcMask {
				cnt++
			}
			pg.rec[i] = me | cnt
		}
		putBits(pg.data[o:], size, v[lane])
	}
	return true
}

// cow gives pg a private copy of its page.
func (s *specWorker) cow(pg *specPage) {
	r := s.run
	r.mu.Lock()
	if n := len(r.pool); n > 0 {
		pg.data, pg.rec = r.pool[n-1].data, r.pool[n-1].rec
		r.pool = r.pool[:n-1]
		r.mu.Unlock()
		if pg.rec == nil {
			pg.rec = make([]uint64, pageSize)
		}
	} else {
		r.mu.Unlock()
		pg.data, pg.rec = make([]byte, pageSize), make([]uint64, pageSize)
	}
	pg.recValid = 0 // whatever rec holds is stale
	copy(pg.data, pg.sa.a.data[pg.idx<<pageBits:])
	r.bytes.Add(9 * pageSize)
}

// specBuf is the private copy of a page and its write records (any
// values, all stale to cow; nil: cow makes them), kept by the Backend for
// later launches.
type specBuf struct {
	data []byte
	rec  []uint64
}

// specPoolMax bounds the private pages a Backend keeps, specPagesMax
// the page structures.
const specPoolMax, specPagesMax = 256, 1024

// specArena is the number of page summaries allocated at once;
// specArenasMax bounds the arenas a Backend keeps.
const specArena, specArenasMax = 64, 32
