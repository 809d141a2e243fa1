package cudart

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/ptxprop/ptxprop/cudart/internal/alloc"
	"github.com/ptxprop/ptxprop/cudart/internal/staging"
)

// deviceChecker checks large buffers on the device with ptxprop_verify
// (verify.go), with the verify module and the arenas for its tables and
// input snapshots; freed buffers wait in quarantine for the next launch's
// verify pass to check their guard bands before their memory is pooled.
type deviceChecker struct {
	d          *device
	verify     ModuleHandle
	arenas     alloc.Arenas // not in use by a launch in flight
	quarantine alloc.Quarantine[*buffer]
}

// onDevice reports whether lb is an input verified on the device: a large
// one, or one the host holds no copy of. A small input with a host copy
// comes back in the verify pass's copy and is compared with it; one
// without would otherwise be read back before the kernel, a copy that
// waits, holding the backend, for all the work queued before it.
func (c *deviceChecker) onDevice(lb *launchBuf, opts Options) bool {
	return lb.role == RoleIn && opts.VerifyInputs && (lb.bytes > smallBuffer || !lb.shadowOK)
}

func (c *deviceChecker) retire(buf *buffer) bool {
	c.quarantine.Add(buf)
	return true
}

func (c *deviceChecker) close() ([]uint64, error) {
	var bases []uint64
	var errs []error
	for _, buf := range c.quarantine.Take() {
		errs = append(errs, wrap("free", buf.Buffer.String(), c.d.exec(func(b Backend) error { return checkGuards(b, buf) })))
		bases = append(bases, buf.base)
	}
	for _, a := range c.arenas.Drain() {
		bases = append(bases, a.Addr)
	}
	return bases, errors.Join(errs...)
}

func (c *deviceChecker) unload() error {
	if c.verify == nil {
		return nil
	}
	return c.d.b.UnloadModule(c.verify)
}

// verifyPlan is a launch's work for ptxprop_verify, laid out in the arena:
// one upload carries both passes' tables and the pending stores' data; the
// pass before the kernel (pre) makes the pending fills and writes, the pass
// after it (post) compares and gathers, and one copy brings the verdicts
// and the gathered buffers back.
//
//	arena: pre table | pre verdicts | staged data | post table | post verdicts | gathered | snapshots
type verifyPlan struct {
	c              *deviceChecker
	host           hostCheck // the buffers read back from the host (small inputs without a host copy)
	m              ModuleHandle
	arena          alloc.Arena
	freed          []*buffer // the quarantined buffers whose guard bands post checks
	snaps          []*launchBuf
	pre, post      []comparison
	upload         []byte // the arena's first len(upload) bytes (build)
	stageAt        int    // offset of the staged data
	postAt, backAt int    // offsets of the post table and of the copy back
	backLen        int
	back           []byte          // the copy back, once the batch has ended
	pinner         Pinner          // gave upload (upPinned) or back (backPinned)
	staged         []*staging.Copy // the shares of the Writes' data staged in the upload (build)
	upPinned       bool
	backPinned     bool
}

// plan decides how a launch's buffers are checked: guard bands and large
// inputs compared on the device (inputs against snapshots in the arena),
// small buffers gathered with their guard bands into the copy that brings
// the verdicts back, the guard bands of buffers freed since the last
// launch, and the pending stores to the launch's buffers (and to the
// quarantined ones) made by the pre pass. It takes those pending stores and
// the quarantine, and an arena, allocating one (and loading the verify
// module) in a call of its own when none is free and large enough. With
// nothing to do on the device, the launch is checked from the host.
func (c *deviceChecker) plan(l *launch) (launchCheck, error) {
	pl := &verifyPlan{c: c, host: hostCheck{l}, freed: c.quarantine.Held()}
	pl.compare(l)
	mine := c.d.stores.Of(pl.bases(l))
	staged := pl.stage(mine)
	if len(pl.post) == 0 && len(pl.pre) == 0 {
		return pl.host, nil
	}
	need := pl.layout(staged)
	made, err := c.acquire(pl, need)
	if err != nil {
		return nil, err
	}
	if !made {
		for _, p := range mine {
			if p.Ref != nil {
				pl.staged = append(pl.staged, p.Ref)
			}
		}
	}
	c.quarantine.Take()
	for _, b := range pl.bases(l) { // taken: by the pre pass, or by acquire's call
		c.d.stores.Drop(b)
	}
	pl.bind()
	return pl, nil
}

// compare lists the post pass's comparisons: large buffers' guard bands and
// inputs, the freed buffers' guard bands, then the small buffers gathered.
func (pl *verifyPlan) compare(l *launch) {
	opts := l.opts
	var gathers []comparison
	guards := func(lb *launchBuf) {
		p := canary64(lb.kind)
		pl.post = append(pl.post, comparison{addr: lb.base, words: lb.pre / 4, pattern: p, lb: lb, what: guardBefore},
			comparison{addr: lb.addr + uint64(lb.bytes), words: lb.guard / 4, pattern: p, lb: lb, what: guardAfter})
	}
	for _, lb := range l.bufs {
		lb.devInput = pl.c.onDevice(lb, opts)
		large := lb.pre+lb.bytes+lb.guard > smallBuffer
		if lb.role != RoleIn {
			large = lb.bytes > mirrorMax
		}
		switch {
		case lb.devInput || large:
			lb.devGuards = opts.CheckGuards && lb.guard > 0
			if lb.devGuards {
				guards(lb)
			}
			if lb.devInput {
				lb.stagedAt = -1
				pl.snaps = append(pl.snaps, lb)
			}
		case opts.CheckGuards || lb.role == RoleIn && opts.VerifyInputs:
			if lb.snap != nil {
				continue // read before and after from the host
			}
			lb.gathered = true
			gathers = append(gathers, comparison{addr: lb.base, words: (lb.pre + lb.bytes + lb.guard) / 4, lb: lb, what: gather})
		}
	}
	for _, buf := range pl.freed {
		guards(&launchBuf{buffer: buf, freed: true})
	}
	for _, lb := range pl.snaps {
		pl.post = append(pl.post, comparison{addr: lb.addr, words: lb.bytes / 4, lb: lb, what: inputChanged})
	}
	pl.post = append(pl.post, gathers...)
}

// bases are the allocations whose pending stores the plan makes: the
// launch's buffers' and the freed ones'. The others stay pending: the
// launches of other goroutines make them.
func (pl *verifyPlan) bases(l *launch) []uint64 {
	var bs []uint64
	for _, lb := range l.bufs {
		bs = append(bs, lb.base)
	}
	for _, buf := range pl.freed {
		bs = append(bs, buf.base)
	}
	return bs
}

// stage turns the pending stores into the pre pass's fills and scatters
// (from data staged in the upload), reduced to disjoint segments, and
// returns the staged bytes.
func (pl *verifyPlan) stage(mine []staging.Store) int {
	staged := 0
	for _, sg := range staging.Paint(mine) {
		if sg.Raw == nil {
			pl.pre = append(pl.pre, comparison{addr: sg.Addr, words: sg.N / 4, pattern: uint64(sg.V) | uint64(sg.V)<<32, what: fill})
			continue
		}
		// A large input that this upload writes in full is compared, after
		// the kernel, with the staged words the pre pass copied into it:
		// they are its contents before the kernel, so it needs no snapshot.
		for _, lb := range pl.snaps {
			if sg.Addr == lb.addr && sg.N == lb.bytes {
				lb.stagedAt = staged
			}
		}
		pl.pre = append(pl.pre, comparison{ref: sg.Addr, words: sg.N / 4, at: staged, data: sg.Raw, what: scatter})
		staged += (sg.N + 255) &^ 255
	}
	return staged
}

// layout places the tables, the staged data, the copy back and the
// snapshots in the arena, and returns the arena size they need.
func (pl *verifyPlan) layout(staged int) int {
	pl.stageAt = (40*len(pl.pre) + 255) &^ 255
	pl.postAt = pl.stageAt + staged
	pl.backAt = pl.postAt + 32*len(pl.post)
	at := pl.backAt + 8*len(pl.post)
	for i := range pl.post {
		if c := &pl.post[i]; c.what == gather {
			c.at = at - pl.backAt // offset in the copy back
			c.ref = uint64(at)    // an offset until the arena is known
			at += 4 * c.words
		}
	}
	pl.backLen = at - pl.backAt
	need := (at + 255) &^ 255
	for _, lb := range pl.snaps {
		lb.snapAt = uint64(need)
		need += (lb.bytes + 255) &^ 255
	}
	return need
}

// acquire gives pl the smallest free arena of need bytes, and the verify
// module; when either is missing it makes them in a call of its own, which
// makes every pending store the ordinary way (made; pl.pre is then
// dropped).
func (c *deviceChecker) acquire(pl *verifyPlan, need int) (made bool, err error) {
	a, ok := c.arenas.Take(need)
	if ok {
		pl.arena = a
	}
	if c.verify == nil || !ok {
		size := max(1<<20, 1<<bits.Len(uint(need-1)))
		err = c.d.exec(func(b Backend) error {
			if c.verify == nil {
				m, err := b.LoadModule("ptxprop_verify", []byte(verifyPTX))
				if err != nil {
					return err
				}
				c.verify = m
			}
			if !ok {
				if old, had := c.arenas.Evict(); had { // too small: one fewer to keep
					if err := b.Free(old.Addr); err != nil {
						return err
					}
				}
				addr, err := b.Alloc(size)
				if err != nil {
					return err
				}
				pl.arena = alloc.Arena{Addr: addr, Size: size}
			}
			return nil
		})
		if err != nil {
			if ok {
				c.arenas.Put(pl.arena)
			}
			return false, err
		}
		pl.pre = nil // made by that call, which released their data
		made = true
	}
	pl.m = c.verify
	return made, nil
}

// bind turns the plan's offsets into addresses in its arena.
func (pl *verifyPlan) bind() {
	base := pl.arena.Addr
	for i := range pl.pre {
		if c := &pl.pre[i]; c.what == scatter {
			c.addr = base + uint64(pl.stageAt+c.at)
		}
	}
	for _, lb := range pl.snaps {
		lb.snapAt += base
		if lb.stagedAt >= 0 && pl.pre != nil { // else the stores were made by acquire's call, not staged
			lb.snapAt = base + uint64(pl.stageAt+lb.stagedAt)
			lb.staged = true
		}
	}
	for i := range pl.post {
		switch c := &pl.post[i]; c.what {
		case inputChanged:
			c.ref = c.lb.snapAt
		case gather:
			c.ref += base
		}
	}
}

func (pl *verifyPlan) detached() bool { return true }

// build writes the upload (the pre table, its verdict words, the staged
// data, the post table and its verdict words) and makes room for the copy
// back, both in the backend's page-locked memory where it has some (then
// the backend copies neither: see Pinner), then lets go of the Writes'
// data (those that Paint found overwritten included: made or not, they
// are done with). It runs without d.mu: it reads only the plan and the
// pending stores' data, which nothing changes.
func (pl *verifyPlan) build(b Backend) {
	size := pl.backAt + 8*len(pl.post)
	if pl.c.d.caps.Has(CapPinned) {
		p := b.(Pinner)
		pl.pinner = p
		pl.upload = p.Pinned(size)
		pl.upPinned = pl.upload != nil
		if len(pl.post) > 0 {
			pl.back = p.Pinned(pl.backLen)
			pl.backPinned = pl.back != nil
		}
	}
	if pl.upload == nil {
		pl.upload = make([]byte, size)
	}
	if pl.back == nil && len(pl.post) > 0 {
		pl.back = make([]byte, pl.backLen)
	}
	for _, c := range pl.pre {
		if c.what == scatter {
			copy(pl.upload[pl.stageAt+c.at:], c.data)
		}
	}
	putVerifyTable(pl.upload, pl.pre)
	putVerifyTable(pl.upload[pl.postAt:], pl.post)
	for _, h := range pl.staged {
		h.Release()
	}
	pl.staged = nil
}

// before uploads the plan, runs the pre pass (the pending stores), then
// snapshots the large inputs not staged and the small ones the host reads.
func (pl *verifyPlan) before(b Backend) error {
	if err := b.CopyHtoD(pl.arena.Addr, pl.upload); err != nil {
		return err
	}
	if err := pl.pass(b, 0, pl.pre); err != nil {
		return err
	}
	for _, lb := range pl.snaps {
		if !lb.staged {
			dc, ok := b.(DeviceCopier)
			if !ok {
				return Errorf(ErrInvalid, "the batch of backend %s declares copy-dtod without CopyDtoD", pl.c.d.b.Info().Backend)
			}
			if err := dc.CopyDtoD(lb.snapAt, lb.addr, lb.bytes); err != nil {
				return err
			}
		}
	}
	return pl.host.before(b)
}

// after runs the post pass and brings the verdicts and the gathered
// buffers back in one copy, into pl.back, then reads back what the host
// checks.
func (pl *verifyPlan) after(b Backend) error {
	if len(pl.post) > 0 {
		if err := pl.pass(b, pl.postAt, pl.post); err != nil {
			return err
		}
		if err := b.CopyDtoH(pl.back, pl.arena.Addr+uint64(pl.backAt)); err != nil {
			return err
		}
	}
	return pl.host.after(b)
}

// pass launches ptxprop_verify over cs, whose table is at offset at.
func (pl *verifyPlan) pass(b Backend, at int, cs []comparison) error {
	if len(cs) == 0 {
		return nil
	}
	tab := pl.arena.Addr + uint64(at)
	params := [][]byte{
		binary.LittleEndian.AppendUint64(nil, tab),
		binary.LittleEndian.AppendUint32(nil, uint32(len(cs))),
		binary.LittleEndian.AppendUint64(nil, tab+uint64(32*len(cs))),
	}
	if err := b.Launch(pl.m, verifyEntry, Geometry{Grid: Dim3{X: uint32(len(cs)), Y: verifyRows(cs), Z: 1}, Block: D1(256)}, params); err != nil {
		return fmt.Errorf("%s: %w", verifyEntry, err)
	}
	return nil
}

// land parses the copy back once it has arrived (ok), then gives the
// plan's page-locked memory back (after a failure or a timeout it is not
// known to be unused: it is not).
func (pl *verifyPlan) land(ok bool) {
	if !ok {
		return
	}
	pl.parse()
	if pl.upPinned {
		pl.pinner.Unpin(pl.upload)
	}
	if pl.backPinned {
		pl.pinner.Unpin(pl.back)
	}
	pl.upload, pl.back, pl.upPinned, pl.backPinned = nil, nil, false, false
}

// parse records on each comparison's buffer what the post pass found: a
// guard band's damage in gerr, an input's change in inErr, a gathered
// buffer's contents in now (and its guard bands' damage in gerr).
func (pl *verifyPlan) parse() {
	if pl.back == nil {
		return
	}
	out := pl.back
	for i, c := range pl.post {
		lb := c.lb
		if c.what == gather {
			all := out[c.at : c.at+4*c.words]
			lb.now = all[lb.pre : lb.pre+lb.bytes]
			if pl.backPinned { // kept (as a mirror) after Unpin
				lb.nowCopy = staging.New(lb.now)
				lb.now = lb.nowCopy.Bytes()
			}
			if lb.guard > 0 {
				lb.gerr = guardError(lb.buffer, all[:lb.pre], all[lb.pre+lb.bytes:])
			}
			continue
		}
		err := c.verdict(binary.LittleEndian.Uint32(out[8*i:]), binary.LittleEndian.Uint32(out[8*i+4:]))
		switch {
		case err == nil:
		case c.what == inputChanged:
			lb.inErr = err
		case lb.gerr == nil:
			lb.gerr = err
		}
	}
}

// settle takes the arena back unless the launch timed out (a hung kernel
// may still use it), and, the launch having succeeded, pools the freed
// buffers its pass checked and reports the first whose guard bands were
// found damaged (that buffer's memory is not reused); after a failure they
// go back to quarantine, unchecked (Close checks them).
func (pl *verifyPlan) settle(err error, timedOut bool) error {
	c := pl.c
	if !timedOut {
		c.arenas.Put(pl.arena)
	}
	if err != nil {
		c.quarantine.Add(pl.freed...)
		return nil
	}
	if len(pl.freed) == 0 {
		return nil
	}
	var first error
	for _, cm := range pl.post {
		if cm.lb.freed && cm.lb.gerr != nil {
			if first == nil {
				first = cm.lb.gerr
			}
			cm.lb.buffer.class = 0 // damaged: never pooled again
		}
	}
	for _, buf := range pl.freed {
		if buf.class > 0 {
			c.d.pool.Put(buf.class, buf.base)
		}
	}
	return first
}

// verifyRows is the number of blocks ptxprop_verify gives each
// comparison (blockIdx.y; its threads stride over the words): enough that
// no thread handles more than verifyWordsPerThread words of the largest one,
// at least 8. The kernel's loop has one dependent global load per word (two
// when comparing), so a thread's time is that count times the memory
// latency.
func verifyRows(cs []comparison) uint32 {
	most := 0
	for _, c := range cs {
		most = max(most, c.words)
	}
	const perBlock = 256 * verifyWordsPerThread
	return uint32(min(max(8, (most+perBlock-1)/perBlock), 65535))
}

const verifyWordsPerThread = 4
