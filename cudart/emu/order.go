package emu

import (
	"unsafe"

	"github.com/ptxprop/ptxprop/ptx"
)

// Memory ordering across CTAs.
//
// Every warp has a clock; a global store is stamped with its warp and the
// warp's clock, and a later store to the same byte by another CTA is a race
// unless the storing warp knows that stamp, i.e. the first store happens
// before it. Knowledge (a vector clock) flows:
//   - through a release (st.release, atom/red .release or .acq_rel, or a
//     strong write after a fence) to the synchronising location, and from
//     there to a warp that acquires it (ld.acquire, atom .acquire or
//     .acq_rel, or a strong read before a fence); a relaxed read-modify-write
//     continues the release sequence, a plain strong store ends it;
//   - between the warps of a CTA at a full-CTA barrier.
//
// A release publishes what the warp knows, the clock of every warp of its
// CTA at their last common barrier, and its own clock, which then
// advances. .cta-scoped operations order nothing across CTAs, nor do
// .cluster-scoped ones (the emulator's clusters are single CTAs).

// Memory-order bits (inst.mo).
const (
	moStrong  uint8 = 1 << iota // .relaxed, .volatile, .acquire, .release, .acq_rel, .sc, or an atomic
	moAcquire                   // .acquire, .acq_rel, .sc
	moRelease                   // .release, .acq_rel, .sc
	moCTA                       // .cta (or .cluster) scope
)

// memOrder returns the memory-order bits of an ld, st, atom, red or fence.
func memOrder(pin *ptx.Instruction, atomic bool) uint8 {
	var mo uint8
	if atomic {
		mo = moStrong
	}
	for _, m := range pin.Mods {
		switch m {
		case "relaxed", "volatile", "mmio":
			mo |= moStrong
		case "acquire":
			mo |= moStrong | moAcquire
		case "release":
			mo |= moStrong | moRelease
		case "acq_rel", "sc":
			mo |= moStrong | moAcquire | moRelease
		case "cta", "cluster": // a cluster is one CTA here
			mo |= moCTA
		}
	}
	return mo
}

// decodeFence decodes membar and fence. Proxy fences and mbarrier-init
// fences order nothing the emulator models.
func (d *decoder) decodeFence(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	in.fn, in.sh = execNop, shNone
	if pin.HasMod("proxy") || pin.HasMod("mbarrier_init") || pin.HasMod("op_restrict") {
		return in, nil
	}
	in.mo = memOrder(pin, false) | moStrong | moAcquire | moRelease
	if in.mo&moCTA == 0 {
		in.fn = execFence
	}
	return in, nil
}

// execFence: a fence acquires what the warp's strong reads saw and
// releases, to its later strong writes, what it knows now.
func execFence(w *warp, in *inst, m uint32) {
	if m == 0 {
		return
	}
	w.l.noteComm()
	if !w.pend.empty() {
		w.know.join(w.pend, w.l.memo)
		w.pend.reset()
	}
	w.fence.reset()
	w.publish(&w.fence)
	w.fenced = true
}

// vclock maps a global warp number + 1 to the last of its clocks known,
// as a persistent trie (vcFan-ary, leaves of vcFan clocks) whose nodes are
// never changed once built: set and join copy the paths they change and
// share the rest, and join skips subtrees both sides share. A chain of
// acquire/release atomics through one location (every warp of a big grid
// in turn) then costs O(depth) per step, not O(warps): knowledge passed on
// is shared, not copied. The zero value is empty.
type vclock struct {
	root *vcNode
	h    uint8 // levels above the leaves: the trie holds keys < vcFan^(h+1)
}

const (
	vcBits = 5
	vcFan  = 1 << vcBits
)

// vcNode is a leaf (clk) or an inner node (kids), by its height in the trie.
type vcNode struct {
	kids [vcFan]*vcNode
	clk  [vcFan]uint32
}

func (v vclock) empty() bool { return v.root == nil }

func (v *vclock) reset() { *v = vclock{} }

// get returns the clock known for k (0: none).
func (v vclock) get(k uint32) uint32 {
	if uint64(k)>>(vcBits*(uint(v.h)+1)) != 0 {
		return 0
	}
	n := v.root
	for h := int(v.h); n != nil; h-- {
		i := k >> (vcBits * uint(h)) & (vcFan - 1)
		if h == 0 {
			return n.clk[i]
		}
		n = n.kids[i]
	}
	return 0
}

// grow raises v's height to h.
func (v *vclock) grow(h uint8) {
	for v.h < h {
		if v.root != nil {
			v.root = &vcNode{kids: [vcFan]*vcNode{v.root}}
		}
		v.h++
	}
}

func (v *vclock) set(k, c uint32) {
	for uint64(k)>>(vcBits*(uint(v.h)+1)) != 0 {
		v.grow(v.h + 1)
	}
	v.root = vcSet(v.root, int(v.h), k, c)
}

func vcSet(n *vcNode, h int, k, c uint32) *vcNode {
	i := k >> (vcBits * uint(h)) & (vcFan - 1)
	if h == 0 {
		if n != nil && n.clk[i] >= c {
			return n
		}
		m := new(vcNode)
		if n != nil {
			m.clk = n.clk
		}
		m.clk[i] = c
		return m
	}
	var kid *vcNode
	if n != nil {
		kid = n.kids[i]
	}
	nk := vcSet(kid, h-1, k, c)
	if n != nil && nk == kid {
		return n
	}
	m := new(vcNode)
	if n != nil {
		m.kids = n.kids
	}
	m.kids[i] = nk
	return m
}

// vcMemo remembers pairs of nodes found one to hold the other, so a join
// of tries that differ from earlier joined ones in a few paths visits only
// those paths. Direct-mapped: a collision forgets, it never errs.
type vcMemo struct {
	big, small [1 << 12]*vcNode
}

func (m *vcMemo) slot(a, b *vcNode) int {
	x := uint64(uintptr(unsafe.Pointer(a)))*0x9E3779B97F4A7C15 ^ uint64(uintptr(unsafe.Pointer(b)))*0xC2B2AE3D27D4EB4F
	return int(x >> 52)
}

// holds reports whether a is known to hold b.
func (m *vcMemo) holds(a, b *vcNode) bool {
	if m == nil {
		return false
	}
	i := m.slot(a, b)
	return m.big[i] == a && m.small[i] == b
}

func (m *vcMemo) note(a, b *vcNode) {
	if m == nil {
		return
	}
	i := m.slot(a, b)
	m.big[i], m.small[i] = a, b
}

// join sets v to the element-wise maximum of v and o; m may be nil.
func (v *vclock) join(o vclock, m *vcMemo) {
	if o.root == nil || o.root == v.root {
		return
	}
	if v.root == nil {
		*v = o
		return
	}
	h := max(v.h, o.h)
	v.grow(h)
	o.grow(h)
	a := v.root
	v.root = vcJoin(a, o.root, int(h), m)
	m.note(v.root, a)
	m.note(v.root, o.root)
}

// vcJoin returns the element-wise maximum of a and b, which are a or b
// themselves where one holds the other.
func vcJoin(a, b *vcNode, h int, m *vcMemo) *vcNode {
	switch {
	case a == b || b == nil:
		return a
	case a == nil:
		return b
	case m.holds(a, b):
		return a
	case m.holds(b, a):
		return b
	}
	aGE, bGE := true, true
	if h == 0 {
		for i := range a.clk {
			aGE = aGE && a.clk[i] >= b.clk[i]
			bGE = bGE && b.clk[i] >= a.clk[i]
		}
		switch {
		case aGE:
			m.note(a, b)
			return a
		case bGE:
			m.note(b, a)
			return b
		}
		n := new(vcNode)
		for i := range n.clk {
			n.clk[i] = max(a.clk[i], b.clk[i])
		}
		return n
	}
	var kids [vcFan]*vcNode
	for i := range kids {
		kids[i] = vcJoin(a.kids[i], b.kids[i], h-1, m)
		aGE = aGE && kids[i] == a.kids[i]
		bGE = bGE && kids[i] == b.kids[i]
	}
	switch {
	case aGE:
		m.note(a, b)
		return a
	case bGE:
		m.note(b, a)
		return b
	}
	return &vcNode{kids: kids}
}

// clockMax is the largest clock a write record holds (24 bits).
const clockMax = 1<<24 - 1

func (w *warp) tick() {
	if w.clock < clockMax {
		w.clock++
	}
}

// gid is the warp's global number + 1, as write records hold it.
func (w *warp) gid() uint32 { return w.l.cta.gbase + uint32(w.idx) + 1 }

// knows reports whether w is ordered after the write of warp g at clock clk.
// Knowledge only grows while the CTA runs, so the last positive answer is
// kept for the bytes that follow.
func (w *warp) knows(g, clk uint32) bool {
	if g == w.okGid && clk <= w.okClk {
		return true
	}
	k := max(w.l.cta.know.get(g), w.know.get(g))
	if k >= clk {
		w.okGid, w.okClk = g, k
		return true
	}
	return false
}

// publish joins what w releases into dst and advances w's clock.
func (w *warp) publish(dst *vclock) {
	c := w.l.cta
	dst.join(c.know, w.l.memo)
	dst.join(w.know, w.l.memo)
	for i, s := range c.snap {
		if s > 0 {
			dst.set(c.gbase+uint32(i)+1, s)
		}
	}
	dst.set(w.gid(), w.clock)
	w.tick()
}

// orderBarrier orders, at a full-CTA barrier, every warp of the running
// CTA after what each of them did and knew before it.
func (l *launch) orderBarrier() {
	c := l.cta
	for i, w := range c.warps {
		if w.exited == w.valid {
			continue
		}
		c.snap[i] = w.clock
		w.tick()
		if !w.know.empty() {
			c.know.join(w.know, l.memo)
			w.know.reset()
		}
	}
}

// syncLoc returns the vector clock of the synchronising location addr.
func (l *launch) syncLoc(addr uint64) *vclock {
	if l.syncs == nil {
		l.syncs = map[uint64]*vclock{}
	}
	s := l.syncs[addr]
	if s == nil {
		s = new(vclock)
		l.syncs[addr] = s
	}
	return s
}

// syncRead is a strong read of global addr by w: an acquire, or a read a
// later fence makes one.
func (w *warp) syncRead(mo uint8, addr uint64) {
	if mo&moCTA != 0 {
		return
	}
	s := w.l.syncs[addr]
	if s == nil || s.empty() {
		return
	}
	if mo&moAcquire != 0 {
		w.know.join(*s, w.l.memo)
	} else {
		w.pend.join(*s, w.l.memo)
	}
}

// syncWrite is a strong write of global addr by w; rmw for the write of a
// read-modify-write, which continues a release sequence.
func (w *warp) syncWrite(mo uint8, addr uint64, rmw bool) {
	if mo&moCTA != 0 {
		return
	}
	l := w.l
	switch {
	case mo&moRelease != 0:
		s := l.syncLoc(addr)
		if !rmw {
			s.reset()
		}
		if w.pubs != nil {
			*w.pubs = append(*w.pubs, pubRec{s, mo&moAcquire != 0})
			return
		}
		w.publish(s)
	case w.fenced:
		s := l.syncLoc(addr)
		if !rmw {
			s.reset()
		}
		s.join(w.fence, l.memo)
	case !rmw:
		if s := l.syncs[addr]; s != nil {
			s.reset()
		}
	}
}

// pubRec is a release an atomic instruction's lane made, published when
// every lane has run (flushPubs); acquired: the lane acquired the location
// first, so its clock is within what the warp knows.
type pubRec struct {
	s        *vclock
	acquired bool
}

// deferPubs makes the releases of the instruction about to run on every
// lane wait for flushPubs: they then publish one clock, shared by every
// location, so the warps that acquire them next join it once, not once a
// lane. The lanes of a warp share their knowledge already, and an
// instruction's own writes are atomics, which race with no atomic.
func (w *warp) deferPubs() {
	w.pubBuf = w.pubBuf[:0]
	w.pubs = &w.pubBuf
}

func (w *warp) flushPubs() {
	w.pubs = nil
	if len(w.pubBuf) == 0 {
		return
	}
	var p vclock
	w.publish(&p)
	for _, r := range w.pubBuf {
		if r.acquired || r.s.empty() {
			*r.s = p
		} else {
			r.s.join(p, w.l.memo)
		}
	}
	w.pubBuf = w.pubBuf[:0]
}
