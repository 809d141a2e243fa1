package emu

import (
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/ptxprop/ptxprop/cudart"
)

// Dependence tracking (cudart.CapDependence). While it is on, every byte of
// device memory, every register lane and every predicate lane carries the
// set of sources (input elements) its value was computed from:
//
//   - a marked input byte holds its element's source; a byte the host
//     copied or filled holds none (a constant); any other byte holds the
//     stale source (memory no input names and nothing wrote while tracking:
//     old scratch, another launch's leftovers);
//   - an instruction's result holds the union of its operands' sources
//     (value dependence: x·0 depends on x), selp's the selected operand's
//     and the predicate's, a predicated instruction's also its guard's
//     (if-converted code);
//   - a load's result holds the loaded bytes' sources and its address's
//     (address dependence: y[r] computed from x[r+1] names x[r+1]); a store
//     writes the value's and the address's sources into the bytes it
//     writes, in global, shared and local memory alike;
//   - shuffles move the source lane's sources, votes and reductions join
//     the participating lanes'.
//
// Branches are not followed (no control dependence): without the branch's
// reconvergence point every later instruction of the thread would carry
// the predicate's sources, and a thread that branches on its own row's
// values would seem to read the whole row everywhere. A kernel that decides
// through a branch alone what to compute escapes the tracking; one that
// selects a value (selp, a guard) does not. Instructions whose flow is not
// modelled (calls with parameters, bar.red, vector
// atomics) make Sources fail, naming the first one, rather than answer
// wrongly.
//
// The tracking costs nothing while it is off (one nil test per warp
// instruction); while on, CTAs run one at a time.

// Source encoding: the tensor in the high 32 bits, the index in the low.
type srcKey = uint64

func srcOf(k srcKey) cudart.Source {
	return cudart.Source{Tensor: int32(uint32(k >> 32)), Index: int32(uint32(k))}
}

func keyOf(s cudart.Source) srcKey { return uint64(uint32(s.Tensor))<<32 | uint64(uint32(s.Index)) }

// taintMark is an input range: byte i of [addr, addr+n) holds source
// (tensor, first + i/elem).
type taintMark struct {
	addr   uint64
	n      int
	elem   int
	tensor int32
	first  int32
}

// taintState is a backend's dependence tracking while it is on. Sets of
// sources are interned: a set is a uint32, 0 the empty set.
type taintState struct {
	sets   [][]srcKey
	index  map[string]uint32
	unions map[[2]uint32]uint32
	single map[srcKey]uint32
	stale  uint32

	global map[*allocation][]uint32 // per byte
	marks  []taintMark
	ctas   map[*cta]*ctaTaint
	warps  map[*warp]*warpTaint
	class  map[*inst]uint8

	untracked string // the first instruction whose flow is not modelled
}

// ctaTaint is a CTA's shared and local memory shadow, valid for the CTA
// started at gen.
type ctaTaint struct {
	gen           uint32
	shared, local []uint32
}

// warpTaint is a warp's register and predicate shadow (slot·32 + lane).
type warpTaint struct {
	gen         uint32
	regs, preds []uint32
	guard       [32]uint32
}

func newTaintState() *taintState {
	t := &taintState{sets: [][]srcKey{nil}, index: map[string]uint32{"": 0}, unions: map[[2]uint32]uint32{},
		single: map[srcKey]uint32{}, global: map[*allocation][]uint32{}, ctas: map[*cta]*ctaTaint{},
		warps: map[*warp]*warpTaint{}, class: map[*inst]uint8{}}
	t.stale = t.one(keyOf(cudart.Source{Tensor: cudart.StaleSource}))
	return t
}

func (t *taintState) intern(s []srcKey) uint32 {
	if len(s) == 0 {
		return 0
	}
	k := unsafe.String((*byte)(unsafe.Pointer(&s[0])), len(s)*8)
	if id, ok := t.index[k]; ok {
		return id
	}
	s = slices.Clone(s)
	id := uint32(len(t.sets))
	t.sets = append(t.sets, s)
	t.index[unsafe.String((*byte)(unsafe.Pointer(&s[0])), len(s)*8)] = id
	return id
}

func (t *taintState) one(k srcKey) uint32 {
	if id, ok := t.single[k]; ok {
		return id
	}
	id := t.intern([]srcKey{k})
	t.single[k] = id
	return id
}

// union returns the set a ∪ b.
func (t *taintState) union(a, b uint32) uint32 {
	switch {
	case a == b || b == 0:
		return a
	case a == 0:
		return b
	}
	if a > b {
		a, b = b, a
	}
	if id, ok := t.unions[[2]uint32{a, b}]; ok {
		return id
	}
	x, y := t.sets[a], t.sets[b]
	out := make([]srcKey, 0, len(x)+len(y))
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] < y[j]:
			out = append(out, x[i])
			i++
		case x[i] > y[j]:
			out = append(out, y[j])
			j++
		default:
			out = append(out, x[i])
			i, j = i+1, j+1
		}
	}
	out = append(append(out, x[i:]...), y[j:]...)
	id := t.intern(out)
	t.unions[[2]uint32{a, b}] = id
	return id
}

// bytes returns a's byte shadow, made on first use: marked bytes hold
// their sources, a module's variables none, everything else the stale
// source.
func (t *taintState) bytes(a *allocation) []uint32 {
	if s, ok := t.global[a]; ok {
		return s
	}
	s := make([]uint32, len(a.data))
	if a.moduleGlobal == "" {
		for i := range s {
			s[i] = t.stale
		}
	}
	for _, m := range t.marks {
		t.applyMark(a, s, m)
	}
	t.global[a] = s
	return s
}

func (t *taintState) applyMark(a *allocation, s []uint32, m taintMark) {
	lo, hi := max(m.addr, a.base), min(m.addr+uint64(m.n), a.end)
	for p := lo; p < hi; p++ {
		i := int(p - m.addr)
		s[p-a.base] = t.one(keyOf(cudart.Source{Tensor: m.tensor, Index: m.first + int32(i/m.elem)}))
	}
}

// hostWrote records that the host wrote [off, off+n) of a: a constant,
// except where an input is marked.
func (t *taintState) hostWrote(a *allocation, off, n int) {
	s := t.bytes(a)
	clear(s[off : off+n])
	for _, m := range t.marks {
		if m.addr < a.base+uint64(off+n) && m.addr+uint64(m.n) > a.base+uint64(off) {
			t.applyMark(a, s, m)
		}
	}
}

func (t *taintState) cta(l *launch) *ctaTaint {
	c := l.cta
	ct := t.ctas[c]
	if ct == nil {
		ct = &ctaTaint{}
		t.ctas[c] = ct
	}
	if ct.gen != c.startGen || len(ct.shared) != l.smem || len(ct.local) != l.nthread*l.k.localSize {
		ct.gen = c.startGen
		ct.shared = resize(ct.shared, l.smem)
		ct.local = resize(ct.local, l.nthread*l.k.localSize)
	}
	return ct
}

func (t *taintState) warp(w *warp) *warpTaint {
	wt := t.warps[w]
	if wt == nil {
		wt = &warpTaint{}
		t.warps[w] = wt
	}
	if g := w.l.cta.startGen; wt.gen != g || len(wt.regs) != int(w.l.k.nslots)*32 || len(wt.preds) != int(w.l.k.npreds)*32 {
		wt.gen = g
		wt.regs = resize(wt.regs, int(w.l.k.nslots)*32)
		wt.preds = resize(wt.preds, int(w.l.k.npreds)*32)
	}
	return wt
}

func resize(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func (t *taintState) skip(in *inst, why string) {
	if t.untracked == "" {
		t.untracked = fmt.Sprintf("%s at PTX line %d (%s)", in.src.Opcode(), in.line, why)
	}
}

// Instruction classes for the tracker, beyond the shadow classes.
const (
	tcShadow uint8 = iota // follows in.sh
	tcLoad
	tcStore
	tcAtom
	tcCpAsync
	tcConst // writes d (if any) with a value no source determines
	tcLdmatrix
	tcStmatrix
	tcUnmodel  // not modelled
	tcNoResult // no register result
)

func (t *taintState) classOf(in *inst) uint8 {
	if c, ok := t.class[in]; ok {
		return c
	}
	c := tcShadow
	if in.sh == shNone {
		switch in.src.Op {
		case "ld", "ldu":
			c = tcLoad
		case "st":
			c = tcStore
		case "atom", "red":
			c = tcAtom
			if len(in.vec) > 0 {
				c = tcUnmodel
			}
		case "cp":
			c = tcCpAsync
			if in.a < 0 {
				c = tcNoResult // commit_group, wait_group
			}
		case "ldmatrix":
			c = tcLdmatrix
		case "stmatrix":
			c = tcStmatrix
		default:
			c = tcConst
		}
	}
	t.class[in] = c
	return c
}

// memSlice returns the shadow of size bytes at addr in space for lane,
// or nil where no source is kept (constants, parameters) or the access is
// out of bounds (the instruction itself faults).
func (t *taintState) memSlice(w *warp, lane int, space uint8, addr uint64, size int) []uint32 {
	space, addr = resolve(space, addr)
	l := w.l
	switch space {
	case spGlobal:
		a := l.b.mem.find(addr)
		if a == nil || addr+uint64(size) > a.end {
			return nil
		}
		off := addr - a.base
		return t.bytes(a)[off : off+uint64(size)]
	case spShared:
		ct := t.cta(l)
		if addr+uint64(size) > uint64(len(ct.shared)) {
			return nil
		}
		return ct.shared[addr : addr+uint64(size)]
	case spLocal:
		ls := uint64(l.k.localSize)
		if addr+uint64(size) > ls {
			return nil
		}
		ct := t.cta(l)
		base := uint64(w.idx*32+lane)*ls + addr
		return ct.local[base : base+uint64(size)]
	}
	return nil
}

func (t *taintState) joinAll(s []uint32) uint32 {
	var u uint32
	for _, x := range s {
		u = t.union(u, x)
	}
	return u
}

// taintStep follows instruction in, about to run for lanes m of w, in the
// shadow state (before it runs: its operands are still in the registers).
func (w *warp) taintStep(in *inst, m uint32) {
	l := w.l
	t := l.b.taint
	switch in.kind {
	case kOp:
	case kCall, kRet:
		if in.call != nil && len(in.call.args)+len(in.call.rets) > 0 && m != 0 {
			t.skip(in, "parameters passed through a call")
		}
		return
	case kBar:
		if in.sub != 0 && m != 0 {
			t.skip(in, "a barrier reduction")
		}
		return
	default:
		return // branches, exits, warp-synchronous operations (execSync)
	}
	wt := t.warp(w)
	act := w.active
	g := &wt.guard
	if in.guard >= 0 {
		copy(g[:], wt.preds[in.guard*32:in.guard*32+32])
	} else {
		*g = [32]uint32{}
	}
	// set gives lane the value v of slot d (regs or preds): v ∪ guard
	// where the instruction runs, the old value ∪ guard where its guard
	// kept it from running.
	set := func(sh []uint32, d int32, lane int, v uint32) {
		i := d*32 + int32(lane)
		if m>>lane&1 != 0 {
			sh[i] = t.union(v, g[lane])
		} else if g[lane] != 0 {
			sh[i] = t.union(sh[i], g[lane])
		}
	}
	reg := func(s int32, lane int) uint32 {
		if s < 0 {
			return 0
		}
		return wt.regs[s*32+int32(lane)]
	}
	pred := func(s int32, lane int) uint32 {
		if s < 0 {
			return 0
		}
		return wt.preds[s*32+int32(lane)]
	}
	each := func(f func(lane int)) {
		for mm := act; mm != 0; mm &= mm - 1 {
			f(bits.TrailingZeros32(mm))
		}
	}
	switch t.classOf(in) {
	case tcUnmodel:
		if m != 0 {
			t.skip(in, "not modelled")
		}
	case tcNoResult:
	case tcConst:
		if in.d >= 0 {
			each(func(lane int) { set(wt.regs, in.d, lane, 0) })
		}
	case tcLoad:
		size := int(in.t.n)
		base := w.r(in.a)
		each(func(lane int) {
			if m>>lane&1 == 0 {
				for _, s := range in.vec {
					set(wt.regs, s, lane, 0)
				}
				return
			}
			at := reg(in.a, lane)
			addr := base[lane] + uint64(in.off)
			for i, s := range in.vec {
				v := t.union(at, t.joinAll(t.memSlice(w, lane, in.space, addr+uint64(i*size), size)))
				set(wt.regs, s, lane, v)
			}
		})
	case tcStore:
		size := int(in.t.n)
		base := w.r(in.a)
		for mm := m; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			at := t.union(reg(in.a, lane), g[lane])
			addr := base[lane] + uint64(in.off)
			for i, s := range in.vec {
				v := t.union(at, reg(s, lane))
				dst := t.memSlice(w, lane, in.space, addr+uint64(i*size), size)
				for k := range dst {
					dst[k] = v
				}
			}
		}
	case tcAtom:
		size := int(in.t.n)
		base := w.r(in.a)
		each(func(lane int) {
			if m>>lane&1 == 0 {
				if in.d >= 0 {
					set(wt.regs, in.d, lane, 0)
				}
				return
			}
			at := t.union(reg(in.a, lane), g[lane])
			mem := t.memSlice(w, lane, in.space, base[lane]+uint64(in.off), size)
			old := t.union(at, t.joinAll(mem))
			if in.d >= 0 {
				set(wt.regs, in.d, lane, old)
			}
			nv := t.union(old, t.union(reg(in.b, lane), reg(in.c, lane)))
			for k := range mem {
				mem[k] = nv
			}
		})
	case tcLdmatrix:
		w.taintLdmatrix(in, m, set)
	case tcStmatrix:
		w.taintStmatrix(in, m)
	case tcCpAsync:
		n := int(in.t.n)
		dst, src := w.r(in.a), w.r(in.b)
		for mm := m; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			at := t.union(t.union(reg(in.a, lane), reg(in.b, lane)), t.union(reg(in.c, lane), g[lane]))
			d := t.memSlice(w, lane, spShared, dst[lane]+uint64(in.off), n)
			s := t.memSlice(w, lane, spGlobal, src[lane]+uint64(in.target), n)
			for k := range d {
				v := at
				if k < len(s) {
					v = t.union(v, s[k])
				}
				d[k] = v
			}
		}
	case tcShadow:
		switch in.sh {
		case shRegs:
			if in.d >= 0 {
				each(func(lane int) {
					v := t.union(t.union(reg(in.a, lane), reg(in.b, lane)), t.union(reg(in.c, lane), reg(in.e, lane)))
					set(wt.regs, in.d, lane, v)
					if in.d2 >= 0 {
						set(wt.preds, in.d2, lane, v)
					}
				})
			}
		case shSelp:
			p := w.preds[in.c]
			if in.cneg {
				p = ^p
			}
			each(func(lane int) {
				v := reg(in.b, lane)
				if p>>lane&1 != 0 {
					v = reg(in.a, lane)
				}
				set(wt.regs, in.d, lane, t.union(v, pred(in.c, lane)))
			})
		case shPredDst, shSet:
			dst := wt.preds
			if in.sh == shSet {
				dst = wt.regs
			}
			each(func(lane int) {
				v := t.union(reg(in.a, lane), reg(in.b, lane))
				if in.bop != 0 {
					v = t.union(v, pred(in.c, lane))
				}
				set(dst, in.d, lane, v)
				if in.sh == shPredDst && in.d2 >= 0 {
					set(wt.preds, in.d2, lane, v)
				}
			})
		case shPredOnly:
			each(func(lane int) { set(wt.preds, in.d, lane, t.union(pred(in.a, lane), pred(in.b, lane))) })
		case shPack:
			each(func(lane int) {
				var v uint32
				for _, s := range in.vec {
					v = t.union(v, reg(s, lane))
				}
				set(wt.regs, in.d, lane, v)
			})
		case shUnpack:
			each(func(lane int) {
				v := reg(in.a, lane)
				for _, s := range in.vec {
					set(wt.regs, s, lane, v)
				}
			})
		}
	}
}

// matrixElem returns the lane of an ldmatrix or stmatrix whose register
// i holds element (row, col) of matrix i: lane 4·row + col/2 (4·col +
// row/2 with .trans), as execLdmatrix lays them out.
func matrixElem(trans bool, row, col int) int {
	if trans {
		return 4*col + row/2
	}
	return 4*row + col/2
}

// matrixRow returns the shadow of element col of row r of matrix i of an
// ldmatrix or stmatrix (2 bytes; nil out of bounds, where the instruction
// itself faults) and the sources of that row's address (lane 8i+r's).
func (w *warp) matrixRow(in *inst, wt *warpTaint, i, r, col int) ([]uint32, uint32) {
	lane := 8*i + r
	at := uint32(0)
	if in.a >= 0 {
		at = wt.regs[in.a*32+int32(lane)]
	}
	addr := w.r(in.a)[lane] + uint64(in.off) + uint64(2*col)
	return w.l.b.taint.memSlice(w, lane, in.space, addr, 2), at
}

// taintLdmatrix follows an ldmatrix about to run for lanes m: register i
// of each lane gets the sources of the two elements it loads and of the
// addresses of their rows. The whole warp runs it (execLdmatrix faults
// otherwise); set applies the guard.
func (w *warp) taintLdmatrix(in *inst, m uint32, set func(sh []uint32, d int32, lane int, v uint32)) {
	t := w.l.b.taint
	wt := t.warp(w)
	trans := in.sub == 1
	var v [4][32]uint32 // computed before any is set: a destination may be the address
	if m != 0 {
		for i := range in.vec {
			for r := 0; r < 8; r++ {
				for c := 0; c < 8; c++ {
					mem, at := w.matrixRow(in, wt, i, r, c)
					lane := matrixElem(trans, r, c)
					v[i][lane] = t.union(v[i][lane], t.union(at, t.joinAll(mem)))
				}
			}
		}
	}
	for lane := 0; lane < 32; lane++ {
		if w.active>>lane&1 == 0 {
			continue
		}
		for i, s := range in.vec {
			set(wt.regs, s, lane, v[i][lane]) // 0 where it does not run: set keeps the old value ∪ guard
		}
	}
}

// taintStmatrix follows an stmatrix about to run for lanes m: each
// element stored gets the sources of the register it came from, of its
// row's address and of the guards of both lanes.
func (w *warp) taintStmatrix(in *inst, m uint32) {
	if m == 0 {
		return
	}
	t := w.l.b.taint
	wt := t.warp(w)
	trans := in.sub == 1
	guard := func(lane int) uint32 {
		if in.guard < 0 {
			return 0
		}
		return wt.preds[in.guard*32+int32(lane)]
	}
	for i, s := range in.vec {
		for r := 0; r < 8; r++ {
			for c := 0; c < 8; c++ {
				mem, at := w.matrixRow(in, wt, i, r, c)
				lane := matrixElem(trans, r, c)
				v := t.union(t.union(at, wt.regs[s*32+int32(lane)]), t.union(guard(lane), guard(8*i+r)))
				for k := range mem {
					mem[k] = v
				}
			}
		}
	}
}

// taintSync follows a warp-synchronous operation about to run for the
// participating lanes p, lane i's operands those of l.srcs[i].
func (w *warp) taintSync(in *inst, p uint32) {
	t := w.l.b.taint
	wt := t.warp(w)
	src := &w.l.srcs
	reg := func(s int32, lane int) uint32 {
		if s < 0 {
			return 0
		}
		return wt.regs[s*32+int32(lane)]
	}
	switch in.sub {
	case wsShflUp, wsShflDown, wsShflBfly, wsShflIdx:
		var res [32]uint32
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			s := src[lane]
			j, _ := shflSource(s.sub, lane, uint32(w.regs[s.b*32+int32(lane)]), uint32(w.regs[s.c*32+int32(lane)]))
			ctl := t.union(reg(s.b, lane), reg(s.c, lane))
			v := ctl
			if p&(1<<j) != 0 {
				v = t.union(v, reg(src[j].a, j))
			}
			res[lane] = v
			if s.d2 >= 0 {
				wt.preds[s.d2*32+int32(lane)] = ctl
			}
		}
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			wt.regs[src[lane].d*32+int32(lane)] = res[lane]
		}
	case wsVoteAll, wsVoteAny, wsVoteUni, wsVoteBallot, wsMatchAny, wsMatchAll, wsRedux:
		var u uint32
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			s := src[lane]
			if in.sub <= wsVoteBallot {
				u = t.union(u, wt.preds[s.a*32+int32(lane)])
			} else {
				u = t.union(u, reg(s.a, lane))
			}
		}
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			s := src[lane]
			if s.d < 0 {
				continue
			}
			if in.sub == wsVoteBallot || in.sub >= wsMatchAny {
				wt.regs[s.d*32+int32(lane)] = u
			} else {
				wt.preds[s.d*32+int32(lane)] = u
			}
			if s.d2 >= 0 {
				wt.preds[s.d2*32+int32(lane)] = u
			}
		}
	case wsElect:
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			s := src[lane]
			if s.d >= 0 {
				wt.regs[s.d*32+int32(lane)] = 0
			}
			if s.d2 >= 0 {
				wt.preds[s.d2*32+int32(lane)] = 0
			}
		}
	}
}

// TrackDependence turns dependence tracking on (clearing what an earlier
// tracking recorded and every mark) or off.
func (b *Backend) TrackDependence(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.taint = nil
	if on {
		b.taint = newTaintState()
	}
}

// MarkSource marks [addr, addr+n) as an input: byte i holds source
// (tensor, first + i/elem).
func (b *Backend) MarkSource(addr uint64, n, elem int, tensor, first int32) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.taint
	if t == nil {
		return cudart.Errorf(cudart.ErrInvalid, "mark source: dependence tracking is off")
	}
	if elem <= 0 || n%elem != 0 {
		return cudart.Errorf(cudart.ErrInvalid, "mark source of %d bytes in elements of %d", n, elem)
	}
	a, _, err := b.span(addr, n, "mark source")
	if err != nil {
		return err
	}
	mk := taintMark{addr: addr, n: n, elem: elem, tensor: tensor, first: first}
	t.marks = append(t.marks, mk)
	t.applyMark(a, t.bytes(a), mk)
	return nil
}

// Sources returns, for each element of size elem in [addr, addr+n), the
// sources of its bytes, in ascending order. It fails when a launch since
// tracking began ran an instruction whose flow the tracker does not model.
func (b *Backend) Sources(addr uint64, n, elem int) ([][]cudart.Source, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.taint
	if t == nil {
		return nil, cudart.Errorf(cudart.ErrInvalid, "sources: dependence tracking is off")
	}
	if t.untracked != "" {
		return nil, cudart.Errorf(cudart.ErrUnsupported, "sources: a launch ran %s, whose dependence the emulator does not track", t.untracked)
	}
	if elem <= 0 || n%elem != 0 {
		return nil, cudart.Errorf(cudart.ErrInvalid, "sources of %d bytes in elements of %d", n, elem)
	}
	a, off, err := b.span(addr, n, "sources")
	if err != nil {
		return nil, err
	}
	s := t.bytes(a)[off : off+n]
	out := make([][]cudart.Source, n/elem)
	for i := range out {
		set := t.joinAll(s[i*elem : (i+1)*elem])
		for _, k := range t.sets[set] {
			out[i] = append(out[i], srcOf(k))
		}
	}
	return out, nil
}
