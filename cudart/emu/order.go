package emu

import (
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
	if len(w.pend) > 0 {
		w.know.join(w.pend)
		clear(w.pend)
	}
	clear(w.fence)
	w.publish(&w.fence)
	w.fenced = true
}

// vclock maps a global warp number + 1 to the last of its clocks known.
type vclock map[uint32]uint32

func (v *vclock) set(k, c uint32) {
	if *v == nil {
		*v = vclock{}
	}
	if c > (*v)[k] {
		(*v)[k] = c
	}
}

func (v *vclock) join(o vclock) {
	if len(o) == 0 {
		return
	}
	if *v == nil {
		*v = make(vclock, len(o))
	}
	for k, c := range o {
		if c > (*v)[k] {
			(*v)[k] = c
		}
	}
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
	k := max(w.l.cta.know[g], w.know[g])
	if k >= clk {
		w.okGid, w.okClk = g, k
		return true
	}
	return false
}

// publish joins what w releases into dst and advances w's clock.
func (w *warp) publish(dst *vclock) {
	c := w.l.cta
	dst.join(c.know)
	dst.join(w.know)
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
		if len(w.know) > 0 {
			c.know.join(w.know)
			clear(w.know)
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
	if s == nil || len(*s) == 0 {
		return
	}
	if mo&moAcquire != 0 {
		w.know.join(*s)
	} else {
		w.pend.join(*s)
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
			clear(*s)
		}
		w.publish(s)
	case w.fenced:
		s := l.syncLoc(addr)
		if !rmw {
			clear(*s)
		}
		s.join(w.fence)
	case !rmw:
		if s := l.syncs[addr]; s != nil {
			clear(*s)
		}
	}
}
