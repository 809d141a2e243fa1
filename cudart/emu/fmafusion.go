package emu

import (
	"math"

	"github.com/ptxprop/ptxprop/ptx"
)

// Contraction. The PTX ISA lets the code generator fuse mul and add (or
// sub) instructions that carry no rounding modifier into one fma: "mul/add
// sequences with no rounding modifiers may be optimized to use
// fused-multiply-add instructions on the target device". ptxas does so by
// default (-fmad=true) where the product has no other reader: the GPU then
// computes FFMA, one rounding. The emulator follows it by default: an add
// whose operand is a single-use product of the same basic block (the
// register written once and read once, as in compiler-generated PTX) is
// fused. ptxas also fuses the last multiply of a div.full or div.approx
// .f32 expansion (RN(MUFU.RCP(y')·x'), mufu.go) with such an add: measured
// on sm_90, cuobjdump -sass shows FFMA R, rcp, x', c. Under
// ApproxAdversarial the emulator instead fuses each mul/add pair or not,
// chosen per instruction from the seed, so a property must hold either way.
// PTX from nvcc -fmad=false carries .rn on every mul and add: nothing fuses.

// fusion describes the multiply an add may absorb: the add's operand op
// (0 or 1) is the product of registers a and b.
type fusion struct {
	a, b int32
	op   int
	neg  bool // sub with the product as subtrahend: c − a·b
	// single: the product's register is written once and read once, by
	// this add: ptxas fuses such a pair by default.
	single bool
	// div: the product is a div.full (full) or div.approx .f32 of a by b,
	// whose expansion ends in the multiply that fuses; nil for a mul.
	div *divFusion
}

type divFusion struct{ full bool }

// contractible reports whether an arithmetic instruction has no rounding
// modifier, so that the code generator may fuse it.
func contractible(p *ptx.Instruction) bool {
	_, _, rnd := roundingOf(p.Mods)
	return !rnd && !p.HasMod("sat") && (p.HasMod("f32") || p.HasMod("f64"))
}

// destSlots returns the register slots an instruction writes.
func destSlots(in *inst) []int32 {
	var ds []int32
	if in.d >= 0 && in.sh != shPredDst && in.sh != shPredOnly && in.kind != kBar && in.kind != kWarpSync {
		ds = append(ds, in.d)
	}
	if in.kind == kWarpSync && in.d >= 0 && in.sub != wsVoteAll && in.sub != wsVoteAny && in.sub != wsVoteUni {
		ds = append(ds, in.d)
	}
	if in.kind == kBar && in.sub == 1 {
		ds = append(ds, in.d)
	}
	if in.src != nil && (in.src.Op == "ld" || in.src.Op == "ldu" || in.src.Op == "ldmatrix") || in.sh == shUnpack {
		ds = append(ds, in.vec...)
	}
	return ds
}

// findContractions marks every add/sub without rounding modifier whose
// operand comes from a mul without rounding modifier earlier in the same
// basic block, with the mul's inputs still unchanged.
func findContractions(k *kernel) {
	leaders := map[int32]bool{}
	reads, writes := map[int32]int{}, map[int32]int{}
	for i := range k.insts {
		in := &k.insts[i]
		switch in.kind {
		case kBra:
			leaders[in.target] = true
			leaders[int32(i)+1] = true
		case kCall:
			leaders[in.call.target] = true
			leaders[int32(i)+1] = true
		case kExit, kRet, kBar, kWarpSync, kTrap:
			leaders[int32(i)+1] = true
		}
		for _, d := range destSlots(in) {
			writes[d]++
		}
		for _, r := range readSlots(in) {
			reads[r]++
		}
	}
	for j := range k.insts {
		add := &k.insts[j]
		if add.src == nil || add.kind != kOp || (add.src.Op != "add" && add.src.Op != "sub") || !contractible(add.src) || add.guard >= 0 {
			continue
		}
		for op, reg := range []int32{add.a, add.b} {
			if f := findMul(k, leaders, j, reg, add); f != nil {
				f.op = op
				f.neg = add.src.Op == "sub" && op == 1
				f.single = reads[reg] == 1 && writes[reg] == 1 && (op == 0 || add.a != add.b)
				add.fuse = f
				break
			}
		}
	}
}

// readSlots returns the register slots an instruction's operands a, b and c
// read, and every other slot it may read (conservatively: a register that
// appears anywhere in the instruction's source).
func readSlots(in *inst) []int32 {
	rs := []int32{in.a, in.b, in.c}
	if in.src != nil && (in.src.Op == "st" || in.src.Op == "atom" || in.src.Op == "red" || in.src.Op == "mov" || in.src.Op == "call") || in.sh == shUnpack {
		rs = append(rs, in.vec...)
	}
	var out []int32
	for _, r := range rs {
		if r >= 0 {
			out = append(out, r)
		}
	}
	return out
}

func findMul(k *kernel, leaders map[int32]bool, j int, reg int32, add *inst) *fusion {
	written := map[int32]bool{}
	for i := j - 1; i >= 0; i-- {
		if leaders[int32(i)+1] {
			return nil
		}
		in := &k.insts[i]
		ds := destSlots(in)
		for _, d := range ds {
			if d != reg {
				continue
			}
			if in.src == nil || in.kind != kOp || !contractible(in.src) || in.guard >= 0 ||
				in.t != add.t || in.ftz != add.ftz || written[in.a] || written[in.b] {
				return nil
			}
			switch {
			case in.src.Op == "mul":
				return &fusion{a: in.a, b: in.b}
			case in.src.Op == "div" && in.f2 != nil && in.t.n == 4 && (in.sub == apDiv || in.sub == apDivFull):
				return &fusion{a: in.a, b: in.b, div: &divFusion{full: in.sub == apDivFull}}
			}
			return nil
		}
		for _, d := range ds {
			written[d] = true
		}
	}
	return nil
}

// fused reports whether the add in is fused: by default where ptxas fuses
// (a single-use product); under ApproxAdversarial a mul/add pair by the
// approximation seed, fixed per instruction as a compiler's contraction is.
func (l *launch) fused(in *inst) bool {
	if in.fuse == nil {
		return false
	}
	if l.cfg.Approx != ApproxAdversarial {
		return in.fuse.single
	}
	return in.fuse.div == nil && splitmix64(uint64(l.cfg.ApproxSeed)^uint64(in.pc)*0x9E3779B97F4A7C15^0xF05E)&1 == 1
}

// execFusedAdd computes an add as a fused multiply-add: d = ±a·b + c.
func execFusedAdd(w *warp, in *inst, m uint32) {
	f := in.fuse
	d, a, b := w.r(in.d), w.r(f.a), w.r(f.b)
	c := w.r(in.b)
	if f.op == 1 {
		c = w.r(in.a)
	}
	sub := in.src.Op == "sub"
	f64 := in.t.n == 8
	var divFMA func(x, y, z uint32, neg bool) uint32
	if f.div != nil {
		delta, err := rcpTable()
		if err != nil { // decoded before: the table loaded then
			panic(err)
		}
		divFMA = sm90DivFMA(delta, f.div.full, in.ftz)
	}
	forLanes(m, func(l int) {
		x, y, z := a[l], b[l], c[l]
		switch {
		case divFMA != nil:
			zz := uint32(z)
			if sub && !f.neg {
				zz ^= 0x80000000
			}
			d[l] = uint64(divFMA(uint32(x), uint32(y), zz, f.neg))
		case f64:
			xf, yf, zf := math.Float64frombits(x), math.Float64frombits(y), math.Float64frombits(z)
			if f.neg {
				xf = -xf
			} else if sub {
				zf = -zf
			}
			d[l] = canon64(math.FMA(xf, yf, zf))
		default:
			xf, yf, zf := f32(x), f32(y), f32(z)
			if in.ftz {
				xf, yf, zf = ftz32(xf), ftz32(yf), ftz32(zf)
			}
			if f.neg {
				xf = -xf
			} else if sub {
				zf = -zf
			}
			r := fma32(xf, yf, zf, rn)
			if in.ftz {
				r = ftzBits32(r)
			}
			d[l] = uint64(r)
		}
	})
}
