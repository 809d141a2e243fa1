package ptx

import "fmt"

// Approximation is an instruction of a module whose result is not
// correctly rounded: where a GPU other than the one modelled may compute
// something else, and where the emulator and a GPU disagree unless Modelled.
type Approximation struct {
	Function string // the .entry or .func holding it
	Line     int    // PTX line
	Inst     string // opcode and modifiers, e.g. "ex2.approx.ftz.f32"
	Bound    string // the PTX ISA's error bound
	// Modelled says that ptxprop's emulator (cudart/emu) computes it as
	// sm_90 does, bit for bit (div.full, div.approx, the .f32 rcp, rsqrt,
	// sqrt, ex2, lg2, sin, cos and tanh .approx, their .f16/.bf16 ex2 and
	// tanh forms, rcp.approx.ftz.f64); the others (the .f64 forms without
	// a documented bound) it computes exactly. Kept here, beside the
	// classification, so that packages that must not depend on the
	// emulator can name what it does not model.
	Modelled bool
}

func (a Approximation) String() string {
	how := "emulated correctly rounded"
	if a.Modelled {
		how = "emulated as sm_90 computes it"
	}
	return fmt.Sprintf("%s (PTX line %d, %s; error within %s; %s)", a.Inst, a.Line, a.Function, a.Bound, how)
}

// Approximations returns the approximate instructions of the PTX module
// src in source order, so that a parity failure can name those its kernels
// use. FMA contraction of mul and add without rounding modifiers is not
// listed: the PTX ISA lets any such pair be fused.
func Approximations(src []byte) ([]Approximation, error) {
	m, err := Parse(src)
	if err != nil {
		return nil, err
	}
	var out []Approximation
	for _, it := range m.Items {
		f, ok := it.(*Function)
		if !ok || !f.HasBody {
			continue
		}
		f.Instructions(func(in *Instruction) {
			if a, ok := approximation(in); ok {
				a.Function = f.Name
				out = append(out, a)
			}
		})
	}
	return out, nil
}

// approximation classifies one instruction.
func approximation(in *Instruction) (Approximation, bool) {
	f32 := in.HasMod("f32")
	a := Approximation{Line: in.Line, Inst: in.Opcode()}
	switch in.Op {
	case "rcp":
		if !in.HasMod("approx") {
			return a, false
		}
		a.Bound, a.Modelled = "1 ulp", f32 || in.HasMod("f64") && in.HasMod("ftz")
		if !f32 {
			a.Bound = "no documented bound"
		}
	case "sqrt":
		if !in.HasMod("approx") {
			return a, false
		}
		a.Bound, a.Modelled = "2^-23 relative", f32
	case "rsqrt":
		a.Bound, a.Modelled = "2^-22.9 relative", f32
		if !f32 {
			a.Bound = "no documented bound"
		}
	case "ex2":
		a.Bound, a.Modelled = "2 ulp", true // .f32, and the .f16/.bf16 forms (tables of every input)
	case "lg2":
		a.Bound, a.Modelled = "2^-22 absolute for x in (0.5, 2), 2^-22 relative elsewhere", f32
	case "sin", "cos":
		a.Bound, a.Modelled = "2^-20.5 absolute for |x| <= 2π, 2^-14.7 for |x| <= 100π, none beyond", f32
	case "tanh":
		a.Bound, a.Modelled = "2^-11 relative", true
	case "div":
		switch {
		case in.HasMod("full"):
			a.Bound, a.Modelled = "2 ulp", true
		case in.HasMod("approx"):
			a.Bound, a.Modelled = "2 ulp for 2^-126 <= |y| <= 2^126", true
		default:
			return a, false
		}
	default:
		return a, false
	}
	if !f32 && in.Op != "rcp" && in.Op != "rsqrt" {
		a.Bound = "the PTX ISA's bound for ." + in.Mods[len(in.Mods)-1]
	}
	return a, true
}
