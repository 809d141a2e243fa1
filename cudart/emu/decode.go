package emu

import (
	"strings"

	"github.com/ptxprop/ptxprop/ptx"
)

var spaceByName = map[string]uint8{"global": spGlobal, "shared": spShared, "local": spLocal, "const": spConst, "param": spParam,
	"shared::cta": spShared, "shared::cluster": spShared}

// spaceOf returns the state space named in mods (generic if none).
func spaceOf(mods []string) uint8 {
	for _, m := range mods {
		if s, ok := spaceByName[m]; ok {
			return s
		}
	}
	return spGeneric
}

func (d *decoder) decode(pin *ptx.Instruction, sc *scope) (in inst, err error) {
	d.curLine, d.curText = pin.Line, pin.String()
	in = inst{kind: kOp, guard: -1, d: -1, a: -1, b: -1, c: -1, e: -1, d2: -1, line: int32(pin.Line), src: pin}
	if pin.Guard != nil {
		in.guard, _, err = d.predSrc(sc, ptx.Operand{Kind: ptx.Name, Name: pin.Guard.Pred})
		if err != nil {
			return in, err
		}
		in.gneg = pin.Guard.Neg
	}
	ops, mods := pin.Operands, pin.Mods
	ts := typesOf(mods)
	nops := func(n ...int) error {
		for _, k := range n {
			if len(ops) == k {
				return nil
			}
		}
		return d.errf("%s takes %v operands, has %d", pin.Op, n, len(ops))
	}
	typ := func() (dtype, error) {
		if len(ts) == 0 {
			return dtype{}, d.errf("missing type")
		}
		return ts[len(ts)-1], nil
	}
	// sources resolves value operands a, b, c (as many as given) of type t.
	sources := func(t dtype, from int) error {
		slots := []*int32{&in.a, &in.b, &in.c, &in.e}
		for i, o := range ops[from:] {
			if i >= len(slots) {
				return d.errf("too many operands")
			}
			s, err := d.src(sc, o, t)
			if err != nil {
				return err
			}
			*slots[i] = s
		}
		return nil
	}
	dest := func() error {
		s, err := d.dst(sc, ops[0])
		in.d = s
		return err
	}
	unsupported := func() error {
		return d.errf("unsupported instruction %s", pin.Opcode())
	}
	switch pin.Op {
	case "mov":
		if err := nops(2); err != nil {
			return in, err
		}
		t, err := typ()
		if err != nil {
			return in, err
		}
		in.t = t
		if t.k == 'p' {
			if in.d, err = d.predDst(sc, ops[0]); err != nil {
				return in, err
			}
			if in.a, in.aneg, err = d.predSrc(sc, ops[1]); err != nil {
				return in, err
			}
			in.fn, in.sh = execPredMov, shPredOnly
			return in, nil
		}
		if ops[0].Kind == ptx.Vector || ops[1].Kind == ptx.Vector {
			return d.decodePack(in, sc, ops)
		}
		if ops[1].Kind == ptx.Name && isClock(ops[1].Name) {
			if err := dest(); err != nil {
				return in, err
			}
			in.sub = clockKind(ops[1].Name)
			in.fn, in.sh = execClock, shNone
			return in, nil
		}
		if err := dest(); err != nil {
			return in, err
		}
		if err := sources(t, 1); err != nil {
			return in, err
		}
		in.fn = execMov
		return in, nil

	case "ld", "ldu", "st":
		return d.decodeLdSt(in, sc, pin)

	case "atom", "red":
		return d.decodeAtom(in, sc, pin)

	case "cvta":
		if err := nops(2); err != nil {
			return in, err
		}
		t, err := typ()
		if err != nil {
			return in, err
		}
		in.t = t
		sp := spaceOf(mods)
		if sp == spGeneric {
			return in, d.errf("cvta without a state space")
		}
		if err := dest(); err != nil {
			return in, err
		}
		// A variable operand is taken at its address in its own space.
		if err := sources(t, 1); err != nil {
			return in, err
		}
		window := symbol{space: sp}.generic()
		if pin.HasMod("to") {
			in.f1 = func(a uint64) uint64 { return t.trunc(a - window) }
		} else {
			in.f1 = func(a uint64) uint64 { return t.trunc(a + window) }
		}
		in.fn = exec1
		return in, nil

	case "isspacep":
		if err := nops(2); err != nil {
			return in, err
		}
		sp := spaceOf(mods)
		if in.d, err = d.predDst(sc, ops[0]); err != nil {
			return in, err
		}
		if in.a, err = d.src(sc, ops[1], dtype{'u', 8}); err != nil {
			return in, err
		}
		in.cmp = func(a, _ uint64) bool { s, _ := resolve(spGeneric, a); return s == sp }
		in.fn, in.sh = execPredTest, shPredDst
		return in, nil

	case "setp":
		return d.decodeSetp(in, sc, pin)

	case "set":
		return d.decodeSet(in, sc, pin)

	case "selp":
		if err := nops(4); err != nil {
			return in, err
		}
		t, err := typ()
		if err != nil {
			return in, err
		}
		in.t = t
		if err := dest(); err != nil {
			return in, err
		}
		if in.a, err = d.src(sc, ops[1], t); err != nil {
			return in, err
		}
		if in.b, err = d.src(sc, ops[2], t); err != nil {
			return in, err
		}
		if in.c, in.cneg, err = d.predSrc(sc, ops[3]); err != nil {
			return in, err
		}
		in.fn, in.sh = execSelp, shSelp
		return in, nil

	case "slct":
		if err := nops(4); err != nil || len(ts) != 2 {
			return in, d.errf("slct needs two types and four operands")
		}
		in.t, in.t2 = ts[0], ts[1]
		if err := dest(); err != nil {
			return in, err
		}
		if err := sources(ts[0], 1); err != nil {
			return in, err
		}
		if in.c, err = d.src(sc, ops[3], ts[1]); err != nil {
			return in, err
		}
		ftz, ct := pin.HasMod("ftz"), ts[1]
		in.f3 = func(a, b, c uint64) uint64 {
			if ct.k == 'f' {
				x := f32(c)
				if ftz {
					x = ftz32(x)
				}
				if x >= 0 {
					return a
				}
				return b
			}
			if int32(c) >= 0 {
				return a
			}
			return b
		}
		in.fn = exec3
		return in, nil

	case "and", "or", "xor", "not", "cnot":
		t, err := typ()
		if err != nil {
			return in, err
		}
		in.t = t
		if t.k == 'p' {
			return d.decodePredLogic(in, sc, pin)
		}
		fallthrough
	case "add", "sub", "mul", "mad", "fma", "div", "rem", "abs", "neg", "min", "max",
		"popc", "clz", "brev", "bfind", "shl", "shr", "bfe", "bfi", "prmt", "lop3", "shf",
		"sad", "mul24", "mad24", "addc", "subc", "madc", "copysign", "dp4a", "dp2a",
		"rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "testp":
		return d.decodeArith(in, sc, pin)

	case "cvt":
		return d.decodeCvt(in, sc, pin)

	case "bra":
		if err := nops(1); err != nil {
			return in, err
		}
		if ops[0].Kind != ptx.Name {
			return in, d.errf("bra to %v", ops[0])
		}
		target, ok := d.cur.labels[ops[0].Name]
		if !ok {
			return in, d.errf("unknown label %s", ops[0].Name)
		}
		in.kind, in.target = kBra, target
		return in, nil

	case "brx":
		return in, d.errf("brx.idx (indirect branch) is not supported")

	case "exit":
		in.kind = kExit
		return in, nil

	case "ret":
		in.kind = kExit
		if !d.cur.entry {
			in.kind = kRet
		}
		return in, nil

	case "call":
		return d.decodeCall(in, sc, pin)

	case "trap", "brkpt":
		in.kind = kTrap
		return in, nil

	case "bar", "barrier":
		return d.decodeBarrier(in, sc, pin)

	case "shfl":
		if !pin.HasMod("sync") {
			return in, d.errf("shfl without .sync (pre-Volta shuffle) is not supported")
		}
		if err := nops(5); err != nil {
			return in, err
		}
		in.kind = kWarpSync
		for i, m := range []string{"up", "down", "bfly", "idx"} {
			if pin.HasMod(m) {
				in.sub = wsShflUp + uint8(i)
			}
		}
		u32 := dtype{'b', 4}
		if ops[0].Kind == ptx.Pair {
			if in.d, err = d.dst(sc, ops[0].Elems[0]); err != nil {
				return in, err
			}
			if in.d2, err = d.predDst(sc, ops[0].Elems[1]); err != nil {
				return in, err
			}
		} else if err := dest(); err != nil {
			return in, err
		}
		if err := sources(u32, 1); err != nil {
			return in, err
		}
		in.sig = d.sig("shfl." + strings.Join(mods, "."))
		return in, nil

	case "vote":
		if err := nops(2, 3); err != nil {
			return in, err
		}
		in.kind = kWarpSync
		for i, m := range []string{"all", "any", "uni", "ballot"} {
			if pin.HasMod(m) {
				in.sub = wsVoteAll + uint8(i)
			}
		}
		if in.sub == wsVoteBallot {
			err = dest()
		} else {
			in.d, err = d.predDst(sc, ops[0])
		}
		if err != nil {
			return in, err
		}
		if in.a, in.aneg, err = d.predSrc(sc, ops[1]); err != nil {
			return in, err
		}
		if err := d.memberMask(&in, sc, ops, 2); err != nil {
			return in, err
		}
		in.sig = d.sig("vote." + strings.Join(mods, "."))
		return in, nil

	case "match":
		if err := nops(3); err != nil {
			return in, err
		}
		t, err := typ()
		if err != nil {
			return in, err
		}
		in.kind, in.t, in.sub = kWarpSync, t, wsMatchAny
		if pin.HasMod("all") {
			in.sub = wsMatchAll
		}
		if ops[0].Kind == ptx.Pair {
			if in.d, err = d.dst(sc, ops[0].Elems[0]); err != nil {
				return in, err
			}
			if in.d2, err = d.predDst(sc, ops[0].Elems[1]); err != nil {
				return in, err
			}
		} else if err := dest(); err != nil {
			return in, err
		}
		if in.a, err = d.src(sc, ops[1], t); err != nil {
			return in, err
		}
		if err := d.memberMask(&in, sc, ops, 2); err != nil {
			return in, err
		}
		in.sig = d.sig("match." + strings.Join(mods, "."))
		return in, nil

	case "redux":
		if err := nops(3); err != nil {
			return in, err
		}
		t, err := typ()
		if err != nil {
			return in, err
		}
		if t.k == 'f' {
			return in, d.errf("redux.sync on floats is not supported")
		}
		in.kind, in.t, in.sub = kWarpSync, t, wsRedux
		switch {
		case pin.HasMod("add"):
			in.f2 = func(a, b uint64) uint64 { return a + b }
		case pin.HasMod("min"):
			in.f2 = func(a, b uint64) uint64 { return minInt(t, a, b) }
		case pin.HasMod("max"):
			in.f2 = func(a, b uint64) uint64 { return maxInt(t, a, b) }
		case pin.HasMod("and"):
			in.f2 = func(a, b uint64) uint64 { return a & b }
		case pin.HasMod("or"):
			in.f2 = func(a, b uint64) uint64 { return a | b }
		case pin.HasMod("xor"):
			in.f2 = func(a, b uint64) uint64 { return a ^ b }
		default:
			return in, unsupported()
		}
		if err := dest(); err != nil {
			return in, err
		}
		if in.a, err = d.src(sc, ops[1], t); err != nil {
			return in, err
		}
		if err := d.memberMask(&in, sc, ops, 2); err != nil {
			return in, err
		}
		in.sig = d.sig("redux." + strings.Join(mods, "."))
		return in, nil

	case "elect":
		if err := nops(2); err != nil {
			return in, err
		}
		in.kind, in.sub = kWarpSync, wsElect
		if ops[0].Kind == ptx.Pair {
			if in.d, err = d.dst(sc, ops[0].Elems[0]); err != nil {
				return in, err
			}
			if in.d2, err = d.predDst(sc, ops[0].Elems[1]); err != nil {
				return in, err
			}
		} else if in.d2, err = d.predDst(sc, ops[0]); err != nil {
			return in, err
		}
		if err := d.memberMask(&in, sc, ops, 1); err != nil {
			return in, err
		}
		in.sig = d.sig("elect")
		return in, nil

	case "activemask":
		if err := nops(1); err != nil {
			return in, err
		}
		if err := dest(); err != nil {
			return in, err
		}
		in.fn, in.sh = execActivemask, shNone
		return in, nil

	case "membar", "fence", "prefetch", "prefetchu", "nanosleep", "pmevent", "griddepcontrol",
		"discard", "applypriority", "setmaxnreg":
		in.fn, in.sh = execNop, shNone
		return in, nil

	case "createpolicy":
		if len(ops) == 0 {
			return in, unsupported()
		}
		if err := dest(); err != nil {
			return in, err
		}
		in.a = d.constSlot(0)
		in.fn = execMov
		in.t = dtype{'b', 8}
		return in, nil

	case "cp":
		if !pin.HasMod("async") {
			return in, unsupported()
		}
		if pin.HasMod("commit_group") || pin.HasMod("wait_group") || pin.HasMod("wait_all") {
			in.fn, in.sh = execNop, shNone
			return in, nil
		}
		if pin.HasMod("bulk") || pin.HasMod("mbarrier") {
			return in, unsupported()
		}
		return d.decodeCpAsync(in, sc, pin)
	}
	if ptx.IsOpcode(pin.Op) {
		return in, unsupported()
	}
	return in, d.errf("unknown instruction %s", pin.Op)
}

// memberMask resolves the membermask operand at ops[i] into in.e.
func (d *decoder) memberMask(in *inst, sc *scope, ops []ptx.Operand, i int) error {
	if len(ops) <= i {
		return d.errf("missing membermask (pre-Volta warp vote is not supported)")
	}
	s, err := d.src(sc, ops[i], dtype{'b', 4})
	in.e = s
	return err
}

func isClock(name string) bool {
	return strings.HasPrefix(name, "%clock") || strings.HasPrefix(name, "%globaltimer")
}

func clockKind(name string) uint8 {
	switch name {
	case "%clock_hi":
		return 1
	case "%globaltimer_hi":
		return 1
	}
	return 0
}

// decodePack handles mov with a vector operand: pack or unpack.
func (d *decoder) decodePack(in inst, sc *scope, ops []ptx.Operand) (inst, error) {
	var err error
	t := in.t
	if ops[1].Kind == ptx.Vector { // pack: mov.b64 d, {a, b}
		n := len(ops[1].Elems)
		if int(t.n)%n != 0 {
			return in, d.errf("cannot pack %d values into .%v", n, t)
		}
		et := dtype{'b', t.n / uint8(n)}
		for _, o := range ops[1].Elems {
			s, err := d.src(sc, o, et)
			if err != nil {
				return in, err
			}
			in.vec = append(in.vec, s)
		}
		if in.d, err = d.dst(sc, ops[0]); err != nil {
			return in, err
		}
		in.t2 = et
		in.fn, in.sh = execPack, shPack
		return in, nil
	}
	n := len(ops[0].Elems)
	if int(t.n)%n != 0 {
		return in, d.errf("cannot unpack .%v into %d values", t, n)
	}
	for _, o := range ops[0].Elems {
		s, err := d.dst(sc, o)
		if err != nil {
			return in, err
		}
		in.vec = append(in.vec, s)
	}
	if in.a, err = d.src(sc, ops[1], t); err != nil {
		return in, err
	}
	in.t2 = dtype{'b', t.n / uint8(n)}
	in.fn, in.sh = execUnpack, shUnpack
	return in, nil
}

func (d *decoder) decodeLdSt(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops, mods := pin.Operands, pin.Mods
	if len(ops) != 2 {
		return in, d.errf("%s takes 2 operands", pin.Op)
	}
	ts := typesOf(mods)
	if len(ts) == 0 {
		return in, d.errf("missing type")
	}
	t := ts[len(ts)-1]
	if t.k == 'p' || t.n > 8 {
		return in, d.errf("%s of .%v is not supported", pin.Op, t)
	}
	in.t = t
	vecN := 1
	for _, m := range mods {
		switch m {
		case "v2":
			vecN = 2
		case "v4":
			vecN = 4
		case "v8":
			vecN = 8
		}
	}
	sp := spaceOf(mods)
	store := pin.Op == "st"
	addrOp, valOp := ops[1], ops[0]
	if store {
		addrOp, valOp = ops[0], ops[1]
	}
	var err error
	if in.a, in.off, in.space, err = d.address(sc, addrOp, sp); err != nil {
		return in, err
	}
	elems := []ptx.Operand{valOp}
	if valOp.Kind == ptx.Vector {
		elems = valOp.Elems
	}
	if len(elems) != vecN {
		return in, d.errf("%d values for a .v%d access", len(elems), vecN)
	}
	for _, o := range elems {
		var s int32
		if store {
			s, err = d.src(sc, o, t)
		} else {
			s, err = d.dst(sc, o)
		}
		if err != nil {
			return in, err
		}
		in.vec = append(in.vec, s)
	}
	in.sh = shNone
	if store {
		in.fn = execSt
	} else {
		in.fn = execLd
	}
	return in, nil
}

// Atomic operations (inst.sub).
const (
	atAdd uint8 = iota
	atMin
	atMax
	atInc
	atDec
	atAnd
	atOr
	atXor
	atExch
	atCas
)

func (d *decoder) decodeAtom(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops, mods := pin.Operands, pin.Mods
	ts := typesOf(mods)
	if len(ts) == 0 {
		return in, d.errf("missing type")
	}
	t := ts[len(ts)-1]
	in.t = t
	if t.k == 'x' || t.k == 'X' || pin.HasMod("v2") || pin.HasMod("v4") {
		return in, d.errf("vector atomics are not supported")
	}
	found := false
	for i, m := range []string{"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"} {
		if pin.HasMod(m) {
			in.sub, found = uint8(i), true
		}
	}
	if !found {
		return in, d.errf("unsupported atomic operation %s", pin.Opcode())
	}
	first := 0
	var err error
	if pin.Op == "atom" {
		if len(ops) < 3 {
			return in, d.errf("atom takes at least 3 operands")
		}
		if in.d, err = d.dst(sc, ops[0]); err != nil {
			return in, err
		}
		first = 1
	} else {
		in.d = -1
	}
	want := 2
	if in.sub == atCas {
		want = 3
	}
	if len(ops)-first < want {
		return in, d.errf("%s takes %d operands", pin.Opcode(), first+want)
	}
	if in.a, in.off, in.space, err = d.address(sc, ops[first], spaceOf(mods)); err != nil {
		return in, err
	}
	if in.b, err = d.src(sc, ops[first+1], t); err != nil {
		return in, err
	}
	if in.sub == atCas {
		if in.c, err = d.src(sc, ops[first+2], t); err != nil {
			return in, err
		}
	}
	in.fn, in.sh = execAtom, shNone
	return in, nil
}

func (d *decoder) decodeCall(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	var rets, args *ptx.Operand
	name := ""
	for i := range pin.Operands {
		o := &pin.Operands[i]
		switch {
		case o.Kind == ptx.List && name == "":
			rets = o
		case o.Kind == ptx.Name && name == "":
			name = o.Name
		case o.Kind == ptx.List:
			args = o
		default:
			return in, d.errf("indirect calls and call prototypes are not supported")
		}
	}
	callee := d.funcs[name]
	if callee == nil {
		return in, d.errf("call of unknown function %s", name)
	}
	ci := &callInfo{target: callee.start, name: name}
	bind := func(list *ptx.Operand, formals []symbol, isArg bool) error {
		var n int
		if list != nil {
			n = len(list.Elems)
		}
		if n != len(formals) {
			return d.errf("%s has %d parameters of this kind, the call passes %d", name, len(formals), n)
		}
		for i := 0; i < n; i++ {
			o := list.Elems[i]
			e := sc.lookup(o.Name)
			if o.Kind != ptx.Name || e == nil || e.kind != eSym || e.sym.space != spLocal {
				return d.errf("call argument %v is not a .param variable of the call site", o)
			}
			c := frameCopy{from: e.sym.addr, to: formals[i].addr, n: min(e.sym.size, formals[i].size)}
			if !isArg {
				c = frameCopy{from: formals[i].addr, to: e.sym.addr, n: min(e.sym.size, formals[i].size)}
				ci.rets = append(ci.rets, c)
			} else {
				ci.args = append(ci.args, c)
			}
		}
		return nil
	}
	if err := bind(args, callee.params, true); err != nil {
		return in, err
	}
	if err := bind(rets, callee.returns, false); err != nil {
		return in, err
	}
	in.kind, in.call = kCall, ci
	return in, nil
}

func (d *decoder) decodeBarrier(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops, mods := pin.Operands, pin.Mods
	var err error
	if pin.HasMod("warp") {
		if len(ops) != 1 {
			return in, d.errf("bar.warp.sync takes 1 operand")
		}
		in.kind, in.sub = kWarpSync, wsBarWarp
		if in.e, err = d.src(sc, ops[0], dtype{'b', 4}); err != nil {
			return in, err
		}
		in.sig = d.sig("bar.warp.sync")
		return in, nil
	}
	in.kind = kBar
	u32 := dtype{'u', 4}
	switch {
	case pin.HasMod("red"):
		// bar.red.popc.u32 d, a{, b}, {!}c  /  bar.red.and.pred p, a{, b}, {!}c
		if len(ops) != 3 && len(ops) != 4 {
			return in, d.errf("bar.red takes 3 or 4 operands")
		}
		switch {
		case pin.HasMod("popc"):
			in.sub = 1
			in.d, err = d.dst(sc, ops[0])
		case pin.HasMod("and"):
			in.sub = 2
			in.d, err = d.predDst(sc, ops[0])
		case pin.HasMod("or"):
			in.sub = 3
			in.d, err = d.predDst(sc, ops[0])
		default:
			return in, d.errf("unsupported bar.red operation")
		}
		if err != nil {
			return in, err
		}
		if in.a, err = d.src(sc, ops[1], u32); err != nil {
			return in, err
		}
		if len(ops) == 4 {
			if in.b, err = d.src(sc, ops[2], u32); err != nil {
				return in, err
			}
		}
		if in.c, in.cneg, err = d.predSrc(sc, ops[len(ops)-1]); err != nil {
			return in, err
		}
	case pin.HasMod("sync") || pin.HasMod("arrive") || len(mods) == 0 || pin.HasMod("cta") && !pin.HasMod("red"):
		if len(ops) != 1 && len(ops) != 2 {
			return in, d.errf("%s takes 1 or 2 operands", pin.Opcode())
		}
		if in.a, err = d.src(sc, ops[0], u32); err != nil {
			return in, err
		}
		if len(ops) == 2 {
			if in.b, err = d.src(sc, ops[1], u32); err != nil {
				return in, err
			}
		}
		if pin.HasMod("arrive") {
			if in.b < 0 {
				return in, d.errf("bar.arrive needs a thread count")
			}
			in.aneg = true // arrive without waiting
		}
	default:
		return in, d.errf("unsupported barrier %s", pin.Opcode())
	}
	return in, nil
}

func (d *decoder) decodePredLogic(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	var err error
	if in.d, err = d.predDst(sc, ops[0]); err != nil {
		return in, err
	}
	switch pin.Op {
	case "not", "cnot":
		if len(ops) != 2 {
			return in, d.errf("%s takes 2 operands", pin.Op)
		}
		if in.a, in.aneg, err = d.predSrc(sc, ops[1]); err != nil {
			return in, err
		}
		in.aneg = !in.aneg
		in.fn, in.sh = execPredMov, shPredOnly
		return in, nil
	}
	if len(ops) != 3 {
		return in, d.errf("%s takes 3 operands", pin.Op)
	}
	if in.a, in.aneg, err = d.predSrc(sc, ops[1]); err != nil {
		return in, err
	}
	if in.b, in.cneg, err = d.predSrc(sc, ops[2]); err != nil {
		return in, err
	}
	in.bop = map[string]uint8{"and": 1, "or": 2, "xor": 3}[pin.Op]
	in.fn, in.sh = execPredLogic, shPredOnly
	return in, nil
}

func (d *decoder) decodeCpAsync(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops := pin.Operands
	if len(ops) < 3 {
		return in, d.errf("cp.async takes 3 or 4 operands")
	}
	var err error
	var dsp uint8
	if in.a, in.off, dsp, err = d.address(sc, ops[0], spShared); err != nil {
		return in, err
	}
	if dsp != spShared {
		return in, d.errf("cp.async destination must be shared")
	}
	var srcOff int64
	if in.b, srcOff, _, err = d.address(sc, ops[1], spGlobal); err != nil {
		return in, err
	}
	in.target = int32(srcOff)
	if ops[2].Kind != ptx.Int {
		return in, d.errf("cp.async size must be an immediate")
	}
	in.t = dtype{'b', uint8(ops[2].Int)}
	in.c = -1
	if len(ops) >= 4 && !d.isPred(sc, ops[3]) { // the optional src-size (a trailing predicate is ignore-src)
		if in.c, err = d.src(sc, ops[3], dtype{'u', 4}); err != nil {
			return in, err
		}
	}
	in.fn, in.sh = execCpAsync, shNone
	return in, nil
}
