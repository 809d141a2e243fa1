package emu

import (
	"cmp"
	"encoding/hex"
	"slices"
	"strings"
	"sync"

	"github.com/ptxprop/ptxprop/ptx"
)

// Branch coverage.
//
// With Config.Coverage set, a launch notes, for every guarded instruction
// it executes, whether the guard held on some active lane (bit covTrue)
// and failed on some active lane (bit covFalse), in a byte per PC; a
// conditional bra's two bits are its taken and not-taken directions. That
// is one nil test per guarded warp-instruction, and nothing per lane. Which
// basic blocks ran follows from those bits and the control-flow graph:
// a block ran when the entry launched or an edge into it was taken (an
// unconditional edge out of a block that ran, a branch direction or the
// fall-through of a guarded exit whose guard failed). The launch ORs its
// bytes into the Coverage once, at its end.

const (
	covTrue  uint8 = 1 << iota // the guard held on some lane (bra: taken)
	covFalse                   // the guard failed on some lane (bra: not taken)
)

// Coverage accumulates, across launches and devices, which basic blocks,
// branch directions and guards of each kernel executed. The caller owns it
// and passes it in Config.Coverage; it is safe for concurrent use. Kernels
// are told apart by their entry and the SHA-256 of their module's PTX text,
// so a kernel loaded on several devices, or several times, is one entry.
type Coverage struct {
	mu      sync.Mutex
	kernels map[coverKey]*coverState
	// launches counts the launches recorded, numbering them from 1: a
	// Mark is a count, Since asks for what later launches set.
	launches uint64
}

type coverKey struct {
	sum   [32]byte
	entry string
}

type coverState struct {
	st       *coverStatic
	bits     []uint8 // per PC: covTrue | covFalse
	launches int
	// last holds, per PC and bit (2·PC: covTrue, 2·PC+1: covFalse), the
	// number of the latest launch that set it (0: none), and lastLaunch
	// the kernel's latest launch: what Since reads.
	last       []uint64
	lastLaunch uint64
	id         string // the kernel's name in Since: entry@hash prefix
}

// NewCoverage returns an empty Coverage.
func NewCoverage() *Coverage { return &Coverage{kernels: map[coverKey]*coverState{}} }

// KernelCoverage is what a Coverage recorded for one kernel.
type KernelCoverage struct {
	Entry     string
	PTXSHA256 string // of the module's PTX text, lower-case hex
	Launches  int
	Blocks    []BlockCoverage  // every basic block, in PC order
	Branches  []BranchCoverage // every conditional branch, in PC order
	Guards    []GuardCoverage  // every other guarded instruction, in PC order
}

// BlockCoverage is one basic block.
type BlockCoverage struct {
	Line    int // PTX line of its first instruction
	Covered bool
}

// BranchCoverage is one conditional branch (@p bra) and which directions
// some lane took.
type BranchCoverage struct {
	Line  int    // PTX line of the bra
	Guard string // "@%p3" or "@!%p3"
	// Condition is the instruction that defines the guard predicate (the
	// nearest one before the branch in its function that writes it, e.g.
	// "setp.lt.s32 %p3, %r5, %r2;"), and ConditionLine its line; empty and
	// 0 when none does.
	Condition       string
	ConditionLine   int
	Taken, NotTaken bool
}

// GuardCoverage is one guarded instruction other than a branch, and
// whether its guard held and failed on some lane.
type GuardCoverage struct {
	Line        int
	Instruction string
	True, False bool
}

// Directions returns the branch directions covered and in all.
func (k *KernelCoverage) Directions() (covered, total int) {
	for _, b := range k.Branches {
		covered += b2i(b.Taken) + b2i(b.NotTaken)
	}
	return covered, 2 * len(k.Branches)
}

// BlocksCovered returns the basic blocks covered and in all.
func (k *KernelCoverage) BlocksCovered() (covered, total int) {
	for _, b := range k.Blocks {
		covered += b2i(b.Covered)
	}
	return covered, len(k.Blocks)
}

// GuardOutcomes returns the guard outcomes (held, failed) of non-branch
// instructions covered and in all.
func (k *KernelCoverage) GuardOutcomes() (covered, total int) {
	for _, g := range k.Guards {
		covered += b2i(g.True) + b2i(g.False)
	}
	return covered, 2 * len(k.Guards)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Kernel returns the coverage of entry in the module whose PTX text has
// SHA-256 ptxSHA256 (lower-case hex); false when no such launch was
// recorded.
func (c *Coverage) Kernel(ptxSHA256, entry string) (KernelCoverage, bool) {
	var key coverKey
	if n, err := hex.Decode(key.sum[:], []byte(ptxSHA256)); err != nil || n != len(key.sum) {
		return KernelCoverage{}, false
	}
	key.entry = entry
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.kernels[key]
	if s == nil {
		return KernelCoverage{}, false
	}
	return s.result(key), true
}

// Kernels returns every kernel's coverage, by entry and PTX hash.
func (c *Coverage) Kernels() []KernelCoverage {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]KernelCoverage, 0, len(c.kernels))
	for key, s := range c.kernels {
		out = append(out, s.result(key))
	}
	slices.SortFunc(out, func(a, b KernelCoverage) int {
		return cmp.Or(cmp.Compare(a.Entry, b.Entry), cmp.Compare(a.PTXSHA256, b.PTXSHA256))
	})
	return out
}

// record ORs one launch's bits of kernel k of module m into c.
func (c *Coverage) record(m *module, k *kernel, bits []uint8) {
	key := coverKey{m.sum, k.name}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.kernels[key]
	if s == nil {
		s = &coverState{st: analyzeCoverage(k), bits: make([]uint8, len(k.insts)), last: make([]uint64, 2*len(k.insts)),
			id: key.entry + "@" + hex.EncodeToString(key.sum[:6])}
		c.kernels[key] = s
	}
	s.launches++
	c.launches++
	s.lastLaunch = c.launches
	for i, b := range bits {
		s.bits[i] |= b
		if b&covTrue != 0 {
			s.last[2*i] = c.launches
		}
		if b&covFalse != 0 {
			s.last[2*i+1] = c.launches
		}
	}
}

// Mark returns the number of launches c has recorded so far: the point
// from which Since reports.
func (c *Coverage) Mark() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.launches
}

// Since calls f, under c's lock (f must not call c), with every guard
// outcome that some launch recorded after mark set: the kernel (its entry
// and a prefix of its PTX hash), the PC of the guarded instruction and
// held, whether the guard held (a bra: taken) rather than failed. Each is
// one bit of the coverage; basic blocks follow from them. A launch counts
// when it ends: one that began before mark and ended after counts too.
// The cost is one pass over the instructions of each kernel launched
// since mark.
func (c *Coverage) Since(mark uint64, f func(kernel string, pc int, held bool)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.kernels {
		if s.lastLaunch <= mark {
			continue
		}
		for i, n := range s.last {
			if n > mark {
				f(s.id, i/2, i%2 == 0)
			}
		}
	}
}

func (s *coverState) result(key coverKey) KernelCoverage {
	st := s.st
	kc := KernelCoverage{Entry: key.entry, PTXSHA256: hex.EncodeToString(key.sum[:]), Launches: s.launches}
	ran := st.blocksRan(s.bits, s.launches > 0)
	for i, b := range st.blocks {
		kc.Blocks = append(kc.Blocks, BlockCoverage{Line: b.line, Covered: ran[i]})
	}
	for _, b := range st.branches {
		bc := b.BranchCoverage
		bc.Taken, bc.NotTaken = s.bits[b.pc]&covTrue != 0, s.bits[b.pc]&covFalse != 0
		kc.Branches = append(kc.Branches, bc)
	}
	for _, g := range st.guards {
		gc := g.GuardCoverage
		gc.True, gc.False = s.bits[g.pc]&covTrue != 0, s.bits[g.pc]&covFalse != 0
		kc.Guards = append(kc.Guards, gc)
	}
	return kc
}

// coverStatic is a kernel's control-flow graph, as coverage needs it.
type coverStatic struct {
	blocks   []coverBlock
	branches []struct {
		pc int32
		BranchCoverage
	}
	guards []struct {
		pc int32
		GuardCoverage
	}
}

// coverBlock is a basic block [start, end) and its edges out.
type coverBlock struct {
	start, end int32
	line       int
	edges      []coverEdge
}

// coverEdge leads to block to when the bits of PC at include need (0:
// whenever the block ran).
type coverEdge struct {
	to   int
	at   int32
	need uint8
}

// analyzeCoverage splits k into basic blocks and lists its guarded
// instructions. Leaders are the entry, call targets, branch targets and
// the instruction after a bra, exit, ret or trap; a call does not end a
// block (its lanes come back to the next instruction).
func analyzeCoverage(k *kernel) *coverStatic {
	n := int32(len(k.insts))
	lead := make([]bool, n+1)
	lead[0] = true
	for i := range k.insts {
		in := &k.insts[i]
		switch in.kind {
		case kBra:
			lead[in.target] = true
			lead[in.pc+1] = true
		case kCall:
			lead[in.call.target] = true
		case kExit, kRet, kTrap:
			lead[in.pc+1] = true
		}
	}
	st := &coverStatic{}
	blockOf := make([]int, n+1)
	for pc := int32(0); pc < n; pc++ {
		if lead[pc] {
			st.blocks = append(st.blocks, coverBlock{start: pc, line: int(k.insts[pc].line)})
		}
		blockOf[pc] = len(st.blocks) - 1
	}
	for i := range st.blocks {
		if i+1 < len(st.blocks) {
			st.blocks[i].end = st.blocks[i+1].start
		} else {
			st.blocks[i].end = n
		}
	}
	for i := range st.blocks {
		b := &st.blocks[i]
		fall := func(need uint8, at int32) {
			if b.end < n {
				b.edges = append(b.edges, coverEdge{to: blockOf[b.end], at: at, need: need})
			}
		}
		for pc := b.start; pc < b.end; pc++ {
			if in := &k.insts[pc]; in.kind == kCall {
				need := uint8(0)
				if in.guard >= 0 {
					need = covTrue
				}
				b.edges = append(b.edges, coverEdge{to: blockOf[in.call.target], at: pc, need: need})
			}
		}
		last := &k.insts[b.end-1]
		switch last.kind {
		case kBra:
			if last.guard < 0 {
				b.edges = append(b.edges, coverEdge{to: blockOf[last.target]})
				break
			}
			b.edges = append(b.edges, coverEdge{to: blockOf[last.target], at: last.pc, need: covTrue})
			fall(covFalse, last.pc)
		case kExit, kRet, kTrap:
			if last.guard >= 0 {
				fall(covFalse, last.pc)
			}
		default:
			fall(0, 0)
		}
	}
	fnStart := int32(0) // the start of the function holding pc
	for i := range k.insts {
		in := &k.insts[i]
		if lead[in.pc] && isCallTarget(k, in.pc) {
			fnStart = in.pc
		}
		if in.guard < 0 || in.src == nil {
			continue
		}
		if in.kind == kBra {
			g := "@" + in.src.Guard.Pred
			if in.gneg {
				g = "@!" + in.src.Guard.Pred
			}
			def := definition(k, in, fnStart)
			bc := BranchCoverage{Line: int(in.line), Guard: g}
			if def != nil {
				bc.Condition, bc.ConditionLine = strings.Join(strings.Fields(def.text()), " "), int(def.line)
			}
			st.branches = append(st.branches, struct {
				pc int32
				BranchCoverage
			}{in.pc, bc})
			continue
		}
		st.guards = append(st.guards, struct {
			pc int32
			GuardCoverage
		}{in.pc, GuardCoverage{Line: int(in.line), Instruction: strings.Join(strings.Fields(in.text()), " ")}})
	}
	return st
}

// isCallTarget reports whether some call of k calls the function at pc.
func isCallTarget(k *kernel, pc int32) bool {
	for i := range k.insts {
		if in := &k.insts[i]; in.kind == kCall && in.call.target == pc {
			return true
		}
	}
	return false
}

// definition returns the nearest instruction before br, in program order
// and within br's function (from fnStart), that writes br's guard
// predicate; nil if none.
func definition(k *kernel, br *inst, fnStart int32) *inst {
	name := br.src.Guard.Pred
	for pc := br.pc - 1; pc >= fnStart; pc-- {
		if in := &k.insts[pc]; in.src != nil && writes(in.src, name) {
			return in
		}
	}
	return nil
}

// writes reports whether in's destination operand (or one of a d|p pair)
// is the register name.
func writes(in *ptx.Instruction, name string) bool {
	if len(in.Operands) == 0 || in.Op == "st" || in.Op == "bra" || in.Op == "call" || in.Op == "red" {
		return false
	}
	d := in.Operands[0]
	switch d.Kind {
	case ptx.Name:
		return d.Name == name
	case ptx.Pair, ptx.Vector:
		for _, e := range d.Elems {
			if e.Kind == ptx.Name && e.Name == name {
				return true
			}
		}
	}
	return false
}

// blocksRan returns which blocks ran, given the bits and whether the
// kernel launched at all.
func (st *coverStatic) blocksRan(bits []uint8, launched bool) []bool {
	ran := make([]bool, len(st.blocks))
	if !launched || len(st.blocks) == 0 {
		return ran
	}
	work := []int{0}
	ran[0] = true
	for len(work) > 0 {
		b := &st.blocks[work[len(work)-1]]
		work = work[:len(work)-1]
		for _, e := range b.edges {
			if !ran[e.to] && (e.need == 0 || bits[e.at]&e.need != 0) {
				ran[e.to] = true
				work = append(work, e.to)
			}
		}
	}
	return ran
}

// noteGuard records lanes taken (the guard held) and the active lanes of
// a guarded instruction at pc.
func (l *launch) noteGuard(pc int32, taken, active uint32) {
	var b uint8
	if taken != 0 {
		b = covTrue
	}
	if active&^taken != 0 {
		b |= covFalse
	}
	l.cov[pc] |= b
}

// startCoverage gives the launch its coverage bytes when c is set.
func (l *launch) startCoverage(c *Coverage) {
	if c != nil {
		l.cov = make([]uint8, len(l.k.insts))
	}
}

// endCoverage adds the launch's coverage to c.
func (l *launch) endCoverage(c *Coverage) {
	if c != nil {
		c.record(l.m, l.k, l.cov)
	}
}

// forkCoverage gives a parallel worker f its own coverage bytes.
func (l *launch) forkCoverage(f *launch) {
	if l.cov != nil {
		f.cov = make([]uint8, len(l.cov))
	}
}

// joinCoverage adds a committed worker's coverage to l's.
func (l *launch) joinCoverage(f *launch) {
	for i, b := range f.cov {
		l.cov[i] |= b
	}
}
