package emu

import (
	"math"

	"github.com/ptxprop/ptxprop/ptx"
)

// Contraction. The PTX ISA lets the code generator fuse mul and add (or
// sub) instructions that carry no rounding modifier into one fma: "mul/add
// sequences with no rounding modifiers may be optimized to use
// fused-multiply-add instructions on the target device". Whether ptxas does
// so depends on the driver version and the surrounding code, so a property
// must hold either way. Under ApproxAdversarial the emulator fuses each
// such pair or not, chosen per instruction from the seed; by default it
// never fuses (what the PTX says literally).

// fusion describes the multiply an add may absorb: the add's operand op
// (0 or 1) is the product of registers a and b.
type fusion struct {
	a, b int32
	op   int
	neg  bool // sub with the product as subtrahend: c − a·b
}

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
				add.fuse = f
				break
			}
		}
	}
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
			if in.src == nil || in.src.Op != "mul" || in.kind != kOp || !contractible(in.src) || in.guard >= 0 ||
				in.t != add.t || in.ftz != add.ftz || written[in.a] || written[in.b] {
				return nil
			}
			return &fusion{a: in.a, b: in.b}
		}
		for _, d := range ds {
			written[d] = true
		}
	}
	return nil
}

// fused reports whether the add at pc is fused under the approximation
// seed: fixed per instruction, as a compiler's contraction is.
func (l *launch) fused(in *inst) bool {
	return in.fuse != nil && l.cfg.Approx == ApproxAdversarial &&
		splitmix64(uint64(l.cfg.ApproxSeed)^uint64(in.pc)*0x9E3779B97F4A7C15^0xF05E)&1 == 1
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
	forLanes(m, func(l int) {
		x, y, z := a[l], b[l], c[l]
		switch {
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
