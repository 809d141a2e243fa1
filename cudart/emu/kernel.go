package emu

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ptxprop/ptxprop/ptx"
)

// Instruction kinds that the warp scheduler handles itself.
const (
	kOp       uint8 = iota // plain: fn(w, in, mask), then the next instruction
	kBra                   // branch to target
	kExit                  // exit, or ret from the entry function
	kRet                   // ret from a .func
	kCall                  // call of a .func
	kBar                   // CTA barrier (bar.sync, barrier.sync, bar.red, bar.arrive)
	kWarpSync              // shfl.sync, vote.sync, bar.warp.sync, match.sync, redux.sync
	kTrap                  // trap, brkpt
)

// inst is a decoded instruction.
type inst struct {
	fn         func(*warp, *inst, uint32)
	kind       uint8
	guard      int32 // predicate slot, -1 for none
	gneg       bool
	d, a, b, c int32 // register slots (predicate slots for predicate operands); -1 unused
	e          int32 // fifth operand (bfi)
	d2         int32 // predicate destination of a d|p pair; -1 unused
	aneg, cneg bool  // negated predicate operands
	vec        []int32
	t, t2      dtype
	space      uint8
	mode       rmode
	ftz, sat   bool
	sub        uint8 // operation variant (shfl mode, vote mode, atomic op, …)
	off        int64 // address offset
	target     int32 // branch target
	sig        int32 // warp-sync compatibility signature
	f1         func(a uint64) uint64
	f2         func(a, b uint64) uint64
	f3         func(a, b, c uint64) uint64
	cmp        func(a, b uint64) bool
	bop        uint8 // setp combine: 0 none, 1 and, 2 or, 3 xor
	sh         uint8 // shadow class: how undefined values propagate
	call       *callInfo
	fuse       *fusion // a multiply this add may absorb (see fmafusion.go)
	mo         uint8   // memory-order bits of ld, st, atom, red, fence (mo*)
	pc         int32
	line       int32
	src        *ptx.Instruction
}

func (in *inst) text() string {
	if in.src == nil {
		return ""
	}
	return in.src.String()
}

// callInfo describes a call: where the callee starts and which parameter
// bytes (offsets in the thread's local frame) to copy in and out.
type callInfo struct {
	target     int32
	name       string
	args, rets []frameCopy
}

type frameCopy struct {
	from, to uint64
	n        int
}

// kernel is a decoded .entry function with every .func it calls.
type kernel struct {
	name       string
	insts      []inst
	nslots     int32 // register slots per lane
	npreds     int32
	consts     []constSlot
	predConsts []constSlot
	specials   []specialSlot
	params     []paramLayout
	paramSize  int
	shared     []sharedVar // static shared variables, by offset
	sharedEnd  int         // end of static shared (red zones included)
	dynShared  string      // name of the dynamic shared array, if any
	dynAlign   int
	localSize  int // bytes of local memory per thread
	locals     []sharedVar
	nsigs      int32
	maxntid    []int64 // .maxntid, if declared
	reqntid    []int64 // .reqntid, if declared

	// CTA contexts (warps and per-block memories), reused by successive
	// launches: the backend serialises them.
	ctxPool   []*cta
	comm      uint8 // mayCommunicate: 0 not known yet, 1 no, 2 yes
	lastInsts int64 // thread-instructions of the last launch (see launch.workers)
	// trackReads: a parallel launch of the kernel wrote an allocation its
	// CTAs had read untracked (spec.go); its later launches track every read.
	trackReads bool
}

type constSlot struct {
	slot int32
	val  uint64
}

type specialSlot struct {
	slot    int32
	name    string
	perLane bool // differs between the lanes of a warp (%tid, %laneid, %lanemask_*)
}

type paramLayout struct {
	name string
	off  int
	size int
}

// sharedVar places a shared (or local) variable: bytes [off, off+size).
type sharedVar struct {
	name      string
	off, size int
}

// redZone is the number of unaddressable bytes after every shared variable.
const redZone = 32

// Entity kinds in a scope.
const (
	eReg uint8 = iota
	ePred
	eSym
)

type entity struct {
	kind uint8
	t    dtype
	slot int32
	sym  symbol
}

type scope struct {
	names  map[string]*entity
	parent *scope
}

func newScope(parent *scope) *scope { return &scope{names: map[string]*entity{}, parent: parent} }

func (s *scope) lookup(n string) *entity {
	for ; s != nil; s = s.parent {
		if e, ok := s.names[n]; ok {
			return e
		}
	}
	return nil
}

// funcCode is one function's place in a kernel.
type funcCode struct {
	f       *ptx.Function
	entry   bool
	start   int32
	sc      *scope
	labels  map[string]int32
	params  []symbol
	returns []symbol
	items   []flatItem
}

type flatItem struct {
	in *ptx.Instruction
	sc *scope
}

type decoder struct {
	m        *module
	k        *kernel
	entry    *ptx.Function
	funcs    map[string]*funcCode
	order    []*funcCode
	consts   map[uint64]int32
	pconsts  map[uint64]int32
	specials map[string]int32
	sigs     map[string]int32
	scratch  int32 // a register slot for "_" destinations
	pscratch int32
	cur      *funcCode
	curLine  int
	curText  string
}

func decodeKernel(m *module, f *ptx.Function) (*kernel, error) {
	d := &decoder{
		m: m, k: &kernel{name: f.Name}, entry: f, funcs: map[string]*funcCode{},
		consts: map[uint64]int32{}, pconsts: map[uint64]int32{}, specials: map[string]int32{}, sigs: map[string]int32{},
		scratch: -1, pscratch: -1,
	}
	if err := d.collect(f, true, nil); err != nil {
		return nil, err
	}
	modScope := newScope(nil)
	for name, a := range m.globals {
		modScope.names[name] = &entity{kind: eSym, sym: symbol{spGlobal, a.base, len(a.data)}}
	}
	for name, s := range m.consts {
		modScope.names[name] = &entity{kind: eSym, sym: s}
	}
	// Kernel parameters.
	psc := newScope(modScope)
	off := 0
	for _, p := range f.Params {
		if p.Space != "param" {
			return nil, decodeError(f.Name, p.Line, "", "parameter %s in state space .%s is not supported", p.Name, p.Space)
		}
		n := p.Size() * max(p.Elements(), 1)
		off = alignUp(off, varAlign(p))
		d.k.params = append(d.k.params, paramLayout{p.Name, off, n})
		psc.names[p.Name] = &entity{kind: eSym, sym: symbol{spParam, uint64(off), n}}
		off += n
	}
	d.k.paramSize = off
	// Shared memory: module-scope variables, then those of every function.
	shScope := newScope(psc)
	for _, v := range m.shared {
		d.placeShared(shScope, v)
	}
	if m.dynShared != nil {
		d.k.dynShared = m.dynShared.Name
		d.k.dynAlign = max(varAlign(m.dynShared), 16)
		shScope.names[m.dynShared.Name] = &entity{kind: eSym, sym: symbol{spShared, 0, 0}} // fixed up below
	}
	// Pass 1: flatten every function, declaring registers and variables.
	for _, fc := range d.order {
		fsc := newScope(shScope)
		for _, p := range fc.f.Returns {
			fc.returns = append(fc.returns, d.placeLocal(fsc, p))
		}
		if !fc.entry {
			for _, p := range fc.f.Params {
				fc.params = append(fc.params, d.placeLocal(fsc, p))
			}
		}
		fc.sc = fsc
		fc.labels = map[string]int32{}
		d.cur = fc
		if err := d.flatten(fc, fc.f.Body, fsc); err != nil {
			return nil, err
		}
		// Falling off the end of a function returns.
		if n := len(fc.items); n == 0 || !terminates(fc.items[n-1].in) {
			fc.items = append(fc.items, flatItem{&ptx.Instruction{Op: "ret", Line: fc.f.Line}, fsc})
		}
	}
	// Dynamic shared memory starts after the static variables.
	dynOff := alignUp(d.k.sharedEnd, max(d.k.dynAlign, 1))
	if e := shScope.names[d.k.dynShared]; e != nil {
		e.sym.addr = uint64(dynOff)
	}
	d.k.sharedEnd = dynOff
	// Lay out code: entry first, then callees.
	pc := int32(0)
	for _, fc := range d.order {
		fc.start = pc
		for name, rel := range fc.labels {
			fc.labels[name] = rel + pc
		}
		pc += int32(len(fc.items))
	}
	d.k.insts = make([]inst, 0, pc)
	// Pass 2: decode.
	for _, fc := range d.order {
		d.cur = fc
		for _, it := range fc.items {
			in, err := d.decode(it.in, it.sc)
			if err != nil {
				return nil, err
			}
			in.pc = int32(len(d.k.insts))
			d.k.insts = append(d.k.insts, in)
		}
	}
	d.k.nsigs = int32(len(d.sigs))
	findContractions(d.k)
	for _, dir := range f.Directives {
		switch dir.Name {
		case "maxntid":
			d.k.maxntid = dir.Args
		case "reqntid":
			d.k.reqntid = dir.Args
		}
	}
	sort.Slice(d.k.shared, func(i, j int) bool { return d.k.shared[i].off < d.k.shared[j].off })
	return d.k, nil
}

func terminates(in *ptx.Instruction) bool {
	return in.Guard == nil && (in.Op == "ret" || in.Op == "exit" || in.Op == "bra")
}

// collect finds f and every function it calls, in call order, and rejects
// recursion.
func (d *decoder) collect(f *ptx.Function, entry bool, stack []string) error {
	for _, s := range stack {
		if s == f.Name {
			return decodeError(d.entry.Name, f.Line, "", "recursive call of %s (%s) is not supported", f.Name, strings.Join(append(stack, f.Name), " → "))
		}
	}
	if _, ok := d.funcs[f.Name]; ok {
		return nil
	}
	fc := &funcCode{f: f, entry: entry}
	d.funcs[f.Name] = fc
	d.order = append(d.order, fc)
	var err error
	f.Instructions(func(in *ptx.Instruction) {
		if err != nil || in.Op != "call" {
			return
		}
		name := ""
		for _, o := range in.Operands {
			if o.Kind == ptx.Name {
				name = o.Name
				break
			}
		}
		callee := d.m.funcs[name]
		if callee == nil {
			err = decodeError(d.entry.Name, in.Line, in.String(), "call of %s, which has no body in this module (indirect and external calls are not supported)", name)
			return
		}
		err = d.collect(callee, false, append(stack, f.Name))
	})
	return err
}

func (d *decoder) placeShared(sc *scope, v *ptx.Variable) {
	n := v.Size() * v.Elements()
	off := alignUp(d.k.sharedEnd, varAlign(v))
	d.k.shared = append(d.k.shared, sharedVar{v.Name, off, n})
	d.k.sharedEnd = off + n + redZone
	sc.names[v.Name] = &entity{kind: eSym, sym: symbol{spShared, uint64(off), n}}
}

func (d *decoder) placeLocal(sc *scope, v *ptx.Variable) symbol {
	n := v.Size() * max(v.Elements(), 1)
	off := alignUp(d.k.localSize, varAlign(v))
	d.k.localSize = off + n
	d.k.locals = append(d.k.locals, sharedVar{v.Name, off, n})
	s := symbol{spLocal, uint64(off), n}
	sc.names[v.Name] = &entity{kind: eSym, sym: s}
	return s
}

// flatten declares the statements' variables and lists their instructions.
func (d *decoder) flatten(fc *funcCode, ss []ptx.Statement, sc *scope) error {
	for _, s := range ss {
		switch s := s.(type) {
		case *ptx.Instruction:
			fc.items = append(fc.items, flatItem{s, sc})
		case *ptx.Label:
			fc.labels[s.Name] = int32(len(fc.items))
		case *ptx.Block:
			if err := d.flatten(fc, s.Body, newScope(sc)); err != nil {
				return err
			}
		case *ptx.Variable:
			if err := d.declare(sc, s); err != nil {
				return err
			}
		case *ptx.Raw:
			if strings.Contains(s.Text, ".callprototype") || strings.Contains(s.Text, ".branchtargets") || strings.Contains(s.Text, ".calltargets") {
				continue // only used by indirect calls and brx.idx, rejected when decoded
			}
			return decodeError(d.entry.Name, s.Line, "", "unsupported directive %q", s.Text)
		}
	}
	return nil
}

func (d *decoder) declare(sc *scope, v *ptx.Variable) error {
	switch v.Space {
	case "reg":
		t, ok := parseType(v.Type)
		if !ok {
			return decodeError(d.entry.Name, v.Line, "", "register %s has unsupported type .%s", v.Name, v.Type)
		}
		if v.Vector > 0 {
			return decodeError(d.entry.Name, v.Line, "", "vector register %s is not supported", v.Name)
		}
		kind := eReg
		if t.k == 'p' {
			kind = ePred
		}
		if v.Count == 0 {
			sc.names[v.Name] = &entity{kind: kind, t: t, slot: -1}
			return nil
		}
		for i := 0; i < v.Count; i++ {
			sc.names[fmt.Sprintf("%s%d", v.Name, i)] = &entity{kind: kind, t: t, slot: -1}
		}
	case "shared":
		d.placeShared(sc, v)
	case "local", "param":
		d.placeLocal(sc, v)
	default:
		return decodeError(d.entry.Name, v.Line, "", ".%s variable %s inside a function is not supported", v.Space, v.Name)
	}
	return nil
}

// Operand resolution.

func (d *decoder) errf(format string, args ...any) error {
	return decodeError(d.entry.Name, d.curLine, d.curText, format, args...)
}

func (d *decoder) newSlot() int32 {
	d.k.nslots++
	return d.k.nslots - 1
}

func (d *decoder) newPred() int32 {
	d.k.npreds++
	return d.k.npreds - 1
}

func (d *decoder) constSlot(v uint64) int32 {
	return intern(d.consts, v, d.newSlot, &d.k.consts)
}

func (d *decoder) constPred(v bool) int32 {
	key := uint64(0)
	if v {
		key = 1
	}
	return intern(d.pconsts, key, d.newPred, &d.k.predConsts)
}

// intern returns the slot that holds constant v, taking a new one from
// alloc (and listing it in list, for the launch to fill) the first time.
func intern(slots map[uint64]int32, v uint64, alloc func() int32, list *[]constSlot) int32 {
	if s, ok := slots[v]; ok {
		return s
	}
	s := alloc()
	slots[v] = s
	*list = append(*list, constSlot{s, v})
	return s
}

// specialNames are the special registers the emulator provides.
var specialNames = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`%tid.x %tid.y %tid.z %ntid.x %ntid.y %ntid.z %ctaid.x %ctaid.y %ctaid.z
		%nctaid.x %nctaid.y %nctaid.z %laneid %warpid %nwarpid %smid %nsmid %gridid
		%lanemask_eq %lanemask_le %lanemask_lt %lanemask_ge %lanemask_gt
		%clock %clock_hi %clock64 %globaltimer %globaltimer_lo %globaltimer_hi
		%dynamic_smem_size %total_smem_size %aggr_smem_size
		%clusterid.x %clusterid.y %clusterid.z %nclusterid.x %nclusterid.y %nclusterid.z
		%cluster_ctaid.x %cluster_ctaid.y %cluster_ctaid.z %cluster_nctaid.x %cluster_nctaid.y %cluster_nctaid.z
		%cluster_ctarank %cluster_nctarank %is_explicit_cluster`) {
		specialNames[n] = true
	}
}

func (d *decoder) special(name string) (int32, bool) {
	if !specialNames[name] && !strings.HasPrefix(name, "%envreg") && !strings.HasPrefix(name, "%pm") && !strings.HasPrefix(name, "%reserved_smem") {
		return 0, false
	}
	if s, ok := d.specials[name]; ok {
		return s, true
	}
	s := d.newSlot()
	d.specials[name] = s
	perLane := strings.HasPrefix(name, "%tid") || name == "%laneid" || strings.HasPrefix(name, "%lanemask")
	d.k.specials = append(d.k.specials, specialSlot{s, name, perLane})
	return s, true
}

func (d *decoder) regSlot(e *entity) int32 {
	if e.slot < 0 {
		if e.kind == ePred {
			e.slot = d.newPred()
		} else {
			e.slot = d.newSlot()
		}
	}
	return e.slot
}

// src resolves a value operand of type t to a register slot.
func (d *decoder) src(sc *scope, o ptx.Operand, t dtype) (int32, error) {
	switch o.Kind {
	case ptx.Int, ptx.Float32, ptx.Float64:
		v, err := immBits(o, t)
		if err != nil {
			return 0, d.errf("%v", err)
		}
		return d.constSlot(v), nil
	case ptx.Name:
		if o.Neg {
			return 0, d.errf("negated operand %v where a value is expected", o)
		}
		if e := sc.lookup(o.Name); e != nil {
			switch e.kind {
			case eReg:
				if o.Int != 0 {
					return 0, d.errf("offset on register operand %v", o)
				}
				return d.regSlot(e), nil
			case eSym:
				return d.constSlot(e.sym.addr + uint64(o.Int)), nil
			case ePred:
				return 0, d.errf("predicate %s used as a value", o.Name)
			}
		}
		if s, ok := d.special(o.Name); ok {
			return s, nil
		}
		if _, ok := d.m.funcs[o.Name]; ok {
			return 0, d.errf("function address %s is not supported", o.Name)
		}
		return 0, d.errf("unknown register or symbol %s", o.Name)
	}
	return 0, d.errf("unsupported operand %v", o)
}

// dst resolves a destination register.
func (d *decoder) dst(sc *scope, o ptx.Operand) (int32, error) {
	if o.Kind != ptx.Name || o.Neg || o.Int != 0 {
		return 0, d.errf("bad destination operand %v", o)
	}
	if o.Name == "_" {
		if d.scratch < 0 {
			d.scratch = d.newSlot()
		}
		return d.scratch, nil
	}
	e := sc.lookup(o.Name)
	if e == nil || e.kind != eReg {
		if e != nil && e.kind == ePred {
			return 0, d.errf("predicate %s used as a value destination", o.Name)
		}
		return 0, d.errf("unknown destination register %s", o.Name)
	}
	return d.regSlot(e), nil
}

// predSrc resolves a predicate operand (possibly negated).
func (d *decoder) predSrc(sc *scope, o ptx.Operand) (int32, bool, error) {
	switch o.Kind {
	case ptx.Int:
		return d.constPred(o.Int != 0), false, nil
	case ptx.Name:
		e := sc.lookup(o.Name)
		if e == nil || e.kind != ePred {
			return 0, false, d.errf("%s is not a predicate register", o.Name)
		}
		return d.regSlot(e), o.Neg, nil
	}
	return 0, false, d.errf("bad predicate operand %v", o)
}

func (d *decoder) predDst(sc *scope, o ptx.Operand) (int32, error) {
	if o.Kind == ptx.Name && o.Name == "_" {
		if d.pscratch < 0 {
			d.pscratch = d.newPred()
		}
		return d.pscratch, nil
	}
	s, neg, err := d.predSrc(sc, o)
	if err == nil && neg {
		err = d.errf("negated predicate destination %v", o)
	}
	return s, err
}

// isPred reports whether o names a predicate register.
func (d *decoder) isPred(sc *scope, o ptx.Operand) bool {
	if o.Kind != ptx.Name {
		return false
	}
	e := sc.lookup(o.Name)
	return e != nil && e.kind == ePred
}

// address resolves a memory operand for an access in space sp. It returns
// the base register slot, the offset and the space actually accessed
// (a .param access of a function parameter goes to the local frame).
func (d *decoder) address(sc *scope, o ptx.Operand, sp uint8) (int32, int64, uint8, error) {
	if o.Kind != ptx.Address || len(o.Elems) > 0 {
		return 0, 0, sp, d.errf("bad address operand %v", o)
	}
	if o.Name == "" {
		return d.constSlot(uint64(o.Int)), 0, sp, nil
	}
	e := sc.lookup(o.Name)
	if e == nil {
		return 0, 0, sp, d.errf("unknown register or symbol %s in address", o.Name)
	}
	switch e.kind {
	case eReg:
		return d.regSlot(e), o.Int, sp, nil
	case eSym:
		s := e.sym
		switch {
		case sp == spGeneric:
			return d.constSlot(s.generic()), o.Int, sp, nil
		case sp == spParam && s.space == spLocal:
			return d.constSlot(s.addr), o.Int, spLocal, nil
		case s.space != sp && !(sp == spGlobal && s.space == spGlobal):
			return 0, 0, sp, d.errf("%s is a .%s variable, accessed as .%s", o.Name, spaceNames[s.space], spaceNames[sp])
		}
		return d.constSlot(s.addr), o.Int, sp, nil
	}
	return 0, 0, sp, d.errf("predicate %s used as an address", o.Name)
}

func (d *decoder) sig(s string) int32 {
	if v, ok := d.sigs[s]; ok {
		return v
	}
	v := int32(len(d.sigs))
	d.sigs[s] = v
	return v
}

// rounding modifiers
func roundingOf(mods []string) (rmode, string, bool) {
	for _, m := range mods {
		switch m {
		case "rn", "rni":
			return rn, m, true
		case "rz", "rzi":
			return rz, m, true
		case "rm", "rmi":
			return rm, m, true
		case "rp", "rpi":
			return rp, m, true
		}
	}
	return rn, "", false
}

// typesOf returns the type modifiers of an instruction.
func typesOf(mods []string) []dtype {
	var ts []dtype
	for _, m := range mods {
		if t, ok := parseType(m); ok {
			ts = append(ts, t)
		}
	}
	return ts
}
