package emu

import (
	"math"

	"github.com/ptxprop/ptxprop/ptx"
)

// decodeFloat handles floating-point arithmetic.
func (d *decoder) decodeFloat(in inst, sc *scope, pin *ptx.Instruction, t dtype) (inst, error) {
	if pin.HasMod("xorsign") {
		return in, d.errf("%s: .xorsign.abs is not supported", pin.Opcode())
	}
	ops, mods, op := pin.Operands, pin.Mods, pin.Op
	mode, _, hasRnd := roundingOf(mods)
	ftz, sat := pin.HasMod("ftz"), pin.HasMod("sat")
	approx, full := pin.HasMod("approx"), pin.HasMod("full")
	in.mode, in.ftz, in.sat = mode, ftz, sat
	var err error
	if op == "testp" {
		if len(ops) != 2 {
			return in, d.errf("testp takes 2 operands")
		}
		if in.d, err = d.predDst(sc, ops[0]); err != nil {
			return in, err
		}
		if in.a, err = d.src(sc, ops[1], t); err != nil {
			return in, err
		}
		var test func(float64) bool
		switch {
		case pin.HasMod("finite"):
			test = func(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }
		case pin.HasMod("infinite"):
			test = func(x float64) bool { return math.IsInf(x, 0) }
		case pin.HasMod("number"):
			test = func(x float64) bool { return !math.IsNaN(x) }
		case pin.HasMod("notanumber"):
			test = math.IsNaN
		case pin.HasMod("normal"):
			test = func(x float64) bool { return isNormal(t, x) }
		case pin.HasMod("subnormal"):
			test = func(x float64) bool { return x != 0 && !math.IsInf(x, 0) && !math.IsNaN(x) && !isNormal(t, x) }
		default:
			return in, d.errf("unsupported testp")
		}
		in.cmp = func(a, _ uint64) bool { return test(fval(t, a)) }
		in.fn, in.sh = execPredTest, shPredDst
		return in, nil
	}
	if len(ops) < 2 {
		return in, d.errf("%s needs operands", op)
	}
	if in.d, err = d.dst(sc, ops[0]); err != nil {
		return in, err
	}
	slots := []*int32{&in.a, &in.b, &in.c}
	if len(ops)-1 > len(slots) {
		return in, d.errf("too many operands")
	}
	for i, o := range ops[1:] {
		if *slots[i], err = d.src(sc, o, t); err != nil {
			return in, err
		}
	}
	nsrc := len(ops) - 1
	want := map[string]int{"add": 2, "sub": 2, "mul": 2, "fma": 3, "mad": 3, "div": 2, "min": 2, "max": 2, "copysign": 2,
		"abs": 1, "neg": 1, "rcp": 1, "sqrt": 1, "rsqrt": 1, "ex2": 1, "lg2": 1, "sin": 1, "cos": 1, "tanh": 1}[op]
	if nsrc != want {
		return in, d.errf("%s takes %d source operands, has %d", op, want, nsrc)
	}
	half := t.k == 'h' || t.k == 'H' || t.k == 'x' || t.k == 'X'
	f64 := t.k == 'f' && t.n == 8
	switch op {
	case "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh":
		if approx || op == "rsqrt" || op == "ex2" || op == "lg2" || op == "sin" || op == "cos" || op == "tanh" {
			if half && op != "ex2" && op != "tanh" || f64 && op != "rcp" && op != "rsqrt" {
				return in, d.errf("unsupported instruction %s", pin.Opcode())
			}
			in.sub = map[string]uint8{"rcp": apRcp, "sqrt": apSqrt, "rsqrt": apRsqrt, "ex2": apEx2, "lg2": apLg2, "sin": apSin, "cos": apCos, "tanh": apTanh}[op]
			in.fn = execApprox
			switch {
			case op == "rcp" && !f64:
				delta, err := rcpTable()
				if err != nil {
					return in, d.errf("%v", err)
				}
				in.f1 = sm90Rcp(delta, ftz)
			case !half:
				f, err := sm90Mufu(in.sub, f64, ftz)
				if err != nil {
					return in, d.errf("%v", err)
				}
				in.f1 = f
			default:
				f, err := sm90Half(in.sub, t.k == 'H' || t.k == 'X', t.k == 'x' || t.k == 'X')
				if err != nil {
					return in, d.errf("%v", err)
				}
				in.f1 = f
			}
			return in, nil
		}
		if !hasRnd {
			return in, d.errf("%s needs .approx or a rounding modifier", pin.Opcode())
		}
		if half {
			return in, d.errf("unsupported instruction %s", pin.Opcode())
		}
		in.fn = exec1
		switch {
		case op == "rcp" && f64:
			in.f1 = func(a uint64) uint64 { return canon64(div64(1, math.Float64frombits(a), mode)) }
		case op == "sqrt" && f64:
			in.f1 = func(a uint64) uint64 { return canon64(sqrt64(math.Float64frombits(a), mode)) }
		case op == "rcp":
			in.f1 = f32Wrap1(func(x float32) uint32 { return div32(1, x, mode) }, ftz, false)
		default:
			in.f1 = f32Wrap1(func(x float32) uint32 { return sqrt32(x, mode) }, ftz, false)
		}
		return in, nil
	case "div":
		if approx || full {
			if f64 || half {
				return in, d.errf("unsupported instruction %s", pin.Opcode())
			}
			in.sub = apDiv
			if full {
				in.sub = apDivFull
			}
			in.fn = execApprox
			delta, err := rcpTable()
			if err != nil {
				return in, d.errf("%v", err)
			}
			in.f2 = sm90Div(delta, full, ftz)
			return in, nil
		}
		if half {
			return in, d.errf("unsupported instruction %s", pin.Opcode())
		}
		in.fn = exec2
		switch {
		case f64:
			in.f2 = func(a, b uint64) uint64 {
				return canon64(div64(math.Float64frombits(a), math.Float64frombits(b), mode))
			}
		case mode == rn && !ftz:
			in.f2 = func(a, b uint64) uint64 { return uint64(canon32(f32(a) / f32(b))) }
		default:
			in.f2 = f32Wrap2(func(x, y float32) uint32 { return div32(x, y, mode) }, ftz, false)
		}
		return in, nil
	}
	if half {
		return d.decodeHalf(in, pin, t, mode, ftz, sat)
	}
	nanProp := pin.HasMod("NaN")
	switch op {
	case "add", "sub", "mul":
		in.fn = exec2
		if f64 {
			var f func(x, y float64) float64
			switch op {
			case "add":
				f = func(x, y float64) float64 { return add64(x, y, mode) }
			case "sub":
				f = func(x, y float64) float64 { return add64(x, -y, mode) }
			default:
				f = func(x, y float64) float64 { return mul64(x, y, mode) }
			}
			in.f2 = func(a, b uint64) uint64 { return canon64(f(math.Float64frombits(a), math.Float64frombits(b))) }
			return in, nil
		}
		var f func(x, y float32) uint32
		switch {
		case op == "add" && mode == rn:
			f = func(x, y float32) uint32 { return canon32(x + y) }
		case op == "sub" && mode == rn:
			f = func(x, y float32) uint32 { return canon32(x - y) }
		case op == "mul" && mode == rn:
			f = func(x, y float32) uint32 { return canon32(x * y) }
		case op == "add":
			f = func(x, y float32) uint32 { return add32(x, y, mode) }
		case op == "sub":
			f = func(x, y float32) uint32 { return add32(x, -y, mode) }
		default:
			f = func(x, y float32) uint32 { return mul32(x, y, mode) }
		}
		in.f2 = f32Wrap2(f, ftz, sat)
		if fn := fastFloat(op, t, mode, ftz, sat); fn != nil {
			in.fn = fn
		}
	case "fma", "mad":
		in.fn = exec3
		if f64 {
			in.f3 = func(a, b, c uint64) uint64 {
				return canon64(fma64(math.Float64frombits(a), math.Float64frombits(b), math.Float64frombits(c), mode))
			}
			return in, nil
		}
		in.f3 = f32Wrap3(func(x, y, z float32) uint32 { return fma32(x, y, z, mode) }, ftz, sat)
		if fn := fastFloat("fma", t, mode, ftz, sat); fn != nil {
			in.fn = fn
		}
	case "min", "max":
		in.fn = exec2
		isMax := op == "max"
		if f64 {
			in.f2 = func(a, b uint64) uint64 { return minMaxFloat(t, a, b, isMax, nanProp) }
			return in, nil
		}
		in.f2 = func(a, b uint64) uint64 {
			if ftz {
				a, b = uint64(math.Float32bits(ftz32(f32(a)))), uint64(math.Float32bits(ftz32(f32(b))))
			}
			return minMaxFloat(t, a, b, isMax, nanProp)
		}
	case "abs", "neg":
		in.fn = exec1
		sign := uint64(1) << (t.bits() - 1)
		isAbs := op == "abs"
		in.f1 = func(a uint64) uint64 {
			if ftz && t.n == 4 {
				a = uint64(math.Float32bits(ftz32(f32(a))))
			}
			if isAbs {
				return a &^ sign
			}
			return a ^ sign
		}
	case "copysign":
		in.fn = exec2
		sign := uint64(1) << (t.bits() - 1)
		in.f2 = func(a, b uint64) uint64 { return b&^sign | a&sign }
	default:
		return in, d.errf("unsupported instruction %s", pin.Opcode())
	}
	return in, nil
}

func (d *decoder) decodeHalf(in inst, pin *ptx.Instruction, t dtype, mode rmode, ftz, sat bool) (inst, error) {
	var op func(x []float64) (float64, float64)
	nanProp := pin.HasMod("NaN")
	switch pin.Op {
	case "add":
		op = func(x []float64) (float64, float64) { return twoSum(x[0], x[1]) }
	case "sub":
		op = func(x []float64) (float64, float64) { return twoSum(x[0], -x[1]) }
	case "mul":
		op = func(x []float64) (float64, float64) { return x[0] * x[1], 0 }
	case "fma", "mad":
		op = func(x []float64) (float64, float64) { return twoSum(x[0]*x[1], x[2]) }
	case "neg":
		op = func(x []float64) (float64, float64) { return -x[0], 0 }
	case "abs":
		op = func(x []float64) (float64, float64) { return math.Abs(x[0]), 0 }
	case "min", "max":
		isMax := pin.Op == "max"
		op = func(x []float64) (float64, float64) {
			a, b := math.Float64bits(x[0]), math.Float64bits(x[1])
			return math.Float64frombits(minMaxFloat(dtype{'f', 8}, a, b, isMax, nanProp)), 0
		}
	default:
		return in, d.errf("unsupported instruction %s", pin.Opcode())
	}
	f := halfWrap(t, mode, ftz, sat, op)
	switch pin.Op {
	case "neg", "abs":
		in.fn, in.f1 = exec1, func(a uint64) uint64 { return f(a, 0, 0) }
	case "fma", "mad":
		in.fn, in.f3 = exec3, f
	default:
		in.fn, in.f2 = exec2, func(a, b uint64) uint64 { return f(a, b, 0) }
	}
	return in, nil
}
