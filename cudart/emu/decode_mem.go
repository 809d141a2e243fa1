package emu

import (
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

func (d *decoder) decodeLdSt(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	ops, mods := pin.Operands, pin.Mods
	if pin.HasMod("async") {
		return in, d.errf("%s (asynchronous, completing an mbarrier) is not supported", pin.Opcode())
	}
	if len(ops) == 3 && pin.HasMod("L2::cache_hint") {
		// The cache policy operand only steers the L2 cache.
		if _, err := d.src(sc, ops[2], dtype{'b', 8}); err != nil {
			return in, err
		}
		ops = ops[:2]
	}
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
	in.mo = memOrder(pin, false)
	if store {
		in.fn = execSt
	} else {
		in.fn = execLd
	}
	return in, nil
}

func (d *decoder) decodeCpAsync(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	if !pin.HasMod("async") {
		return in, d.unsupported(pin)
	}
	if pin.HasMod("commit_group") || pin.HasMod("wait_group") || pin.HasMod("wait_all") {
		in.fn, in.sh = execNop, shNone
		return in, nil
	}
	if pin.HasMod("bulk") || pin.HasMod("mbarrier") {
		return in, d.unsupported(pin)
	}
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

// decodeLdmatrix decodes ldmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans]
// [.shared{::cta}].b16 r, [p]: one 8×8 matrix of 16-bit elements per
// destination register.
func (d *decoder) decodeLdmatrix(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	return d.decodeMatrix(in, sc, pin, false)
}

// decodeMatrix decodes ldmatrix (store false) or stmatrix
// .sync.aligned.m8n8.{x1,x2,x4}[.trans][.shared{::cta}].b16: the address
// operand, and the one register per matrix each lane loads into or stores
// from.
func (d *decoder) decodeMatrix(in inst, sc *scope, pin *ptx.Instruction, store bool) (inst, error) {
	name, addrOp, regOp, regs, fn := "ldmatrix", 1, 0, "destination", execLdmatrix
	if store {
		name, addrOp, regOp, regs, fn = "stmatrix", 0, 1, "source", execStmatrix
	}
	if !pin.HasMod("sync") || !pin.HasMod("aligned") {
		return in, d.errf("%s without .sync.aligned", pin.Opcode())
	}
	if !pin.HasMod("m8n8") {
		return in, d.errf("%s: only the .m8n8 shape is supported", pin.Opcode())
	}
	if !pin.HasMod("b16") {
		return in, d.errf("%s: only .b16 elements are supported", pin.Opcode())
	}
	for _, m := range pin.Mods {
		switch m {
		case "sync", "aligned", "m8n8", "x1", "x2", "x4", "trans", "shared", "shared::cta", "b16":
		default:
			return in, d.errf("%s: modifier .%s is not supported", pin.Opcode(), m)
		}
	}
	n := 0
	for i, m := range []string{"x1", "x2", "x4"} {
		if pin.HasMod(m) {
			n = 1 << i
		}
	}
	if n == 0 {
		return in, d.errf("%s without .x1, .x2 or .x4", pin.Opcode())
	}
	ops := pin.Operands
	if len(ops) != 2 {
		return in, d.errf("%s takes 2 operands", name)
	}
	var err error
	if in.a, in.off, in.space, err = d.address(sc, ops[addrOp], spaceOf(pin.Mods)); err != nil {
		return in, err
	}
	if in.space != spShared && in.space != spGeneric {
		return in, d.errf("%s accesses shared memory only", name)
	}
	elems := []ptx.Operand{ops[regOp]}
	if ops[regOp].Kind == ptx.Vector {
		elems = ops[regOp].Elems
	}
	if len(elems) != n {
		return in, d.errf("%d %s registers for .x%d", len(elems), regs, n)
	}
	for _, o := range elems {
		var r int32
		if store {
			r, err = d.src(sc, o, dtype{'b', 4})
		} else {
			r, err = d.dst(sc, o)
		}
		if err != nil {
			return in, err
		}
		in.vec = append(in.vec, r)
	}
	in.t = dtype{'b', 2}
	if pin.HasMod("trans") {
		in.sub = 1
	}
	in.fn, in.sh = fn, shNone
	return in, nil
}
