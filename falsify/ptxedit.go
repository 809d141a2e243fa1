package falsify

import (
	"fmt"
	"math"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/ptx"
)

// site locates one instruction of a function body: the slice holding it
// (the function's body or a nested block's) and its index there.
type site struct {
	body *[]ptx.Statement
	idx  int
	in   *ptx.Instruction
}

// instructions returns every instruction of fn in source order, nested
// blocks included; the index in the result is the instruction's pc, the
// number generic mutants are named by.
func instructions(fn *ptx.Function) []site {
	var out []site
	var walk func(body *[]ptx.Statement)
	walk = func(body *[]ptx.Statement) {
		for i, s := range *body {
			switch s := s.(type) {
			case *ptx.Instruction:
				out = append(out, site{body: body, idx: i, in: s})
			case *ptx.Block:
				walk(&s.Body)
			}
		}
	}
	walk(&fn.Body)
	return out
}

// remove deletes the instruction at s from its body.
func (s site) remove() {
	b := *s.body
	*s.body = append(b[:s.idx:s.idx], b[s.idx+1:]...)
}

// insertBefore inserts ins before the instruction at s.
func (s site) insertBefore(ins ...*ptx.Instruction) {
	b := *s.body
	out := make([]ptx.Statement, 0, len(b)+len(ins))
	out = append(out, b[:s.idx]...)
	for _, in := range ins {
		out = append(out, in)
	}
	*s.body = append(out, b[s.idx:]...)
}

// parseEntry parses a kernel's PTX and returns the module and its entry.
func parseEntry(k *kernels.Kernel) (*ptx.Module, *ptx.Function, error) {
	m, err := ptx.Parse(k.PTX)
	if err != nil {
		return nil, nil, fmt.Errorf("falsify: parse %s: %w", k.PTXFile, err)
	}
	fn := m.Function(k.Entry)
	if fn == nil || !fn.Entry {
		return nil, nil, fmt.Errorf("falsify: entry %s not found in %s", k.Entry, k.PTXFile)
	}
	return m, fn, nil
}

// paramName returns the PTX name of k's parameter called name (the
// descriptor's ParamSpec order is the PTX order).
func paramName(k *kernels.Kernel, fn *ptx.Function, name string) (string, error) {
	for i, p := range k.Params {
		if p.Name == name {
			if i >= len(fn.Params) {
				return "", fmt.Errorf("falsify: %s: parameter %d (%s) missing from the PTX signature", k.Entry, i, name)
			}
			return fn.Params[i].Name, nil
		}
	}
	return "", fmt.Errorf("falsify: %s has no parameter %q", k.Entry, name)
}

// paramLoads returns the ld.param instructions of fn that read the PTX
// parameter pname.
func paramLoads(fn *ptx.Function, pname string) []site {
	var out []site
	for _, s := range instructions(fn) {
		if s.in.Op != "ld" || !s.in.HasMod("param") || len(s.in.Operands) != 2 {
			continue
		}
		if a := s.in.Operands[1]; a.Kind == ptx.Address && a.Name == pname && a.Int == 0 {
			out = append(out, s)
		}
	}
	return out
}

// bake returns k's PTX with the scalar parameters in values compiled in:
// every `ld.param.T %r, [param]` of them becomes `mov.T %r, imm`, so the
// parameter is still declared but never read — what a launcher does that
// specialises PTX text per call (upstream baked rows, hidden, ε and θ). A
// value is the parameter's bits: a uint32 for u32, math.Float32bits for f32.
func bake(k *kernels.Kernel, values map[string]uint64) ([]byte, error) {
	m, fn, err := parseEntry(k)
	if err != nil {
		return nil, err
	}
	for name, bits := range values {
		pname, err := paramName(k, fn, name)
		if err != nil {
			return nil, err
		}
		loads := paramLoads(fn, pname)
		if len(loads) == 0 {
			return nil, fmt.Errorf("falsify: %s never reads %s (%s)", k.Entry, name, pname)
		}
		for _, s := range loads {
			typ := s.in.Types()[0]
			imm := ptx.Imm(int64(bits))
			switch typ {
			case "f32":
				imm = ptx.Operand{Kind: ptx.Float32, Bits: bits & math.MaxUint32}
			case "f64":
				imm = ptx.Operand{Kind: ptx.Float64, Bits: bits}
			}
			*s.in = ptx.Instruction{Guard: s.in.Guard, Op: "mov", Mods: []string{typ},
				Operands: []ptx.Operand{s.in.Operands[0], imm}, Line: s.in.Line}
		}
	}
	return ptx.Print(m), nil
}

// defs returns the instructions of fn whose first operand (the
// destination) is register reg.
func defs(fn *ptx.Function, reg string) []site {
	var out []site
	for _, s := range instructions(fn) {
		if len(s.in.Operands) == 0 {
			continue
		}
		d := s.in.Operands[0]
		switch {
		case d.Kind == ptx.Name && d.Name == reg:
			out = append(out, s)
		case d.Kind == ptx.Pair && len(d.Elems) == 2 && (d.Elems[0].Name == reg || d.Elems[1].Name == reg):
			out = append(out, s)
		case d.Kind == ptx.Vector:
			for _, e := range d.Elems {
				if e.Name == reg && s.in.Op != "st" {
					out = append(out, s)
					break
				}
			}
		}
	}
	return out
}

// uses returns the instructions of fn that read register reg as a source
// operand (operands after the first).
func uses(fn *ptx.Function, reg string) []site {
	var out []site
	for _, s := range instructions(fn) {
		for i, o := range s.in.Operands {
			if i == 0 && s.in.Op != "st" {
				continue
			}
			if o.Kind == ptx.Name && o.Name == reg {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// edit applies f to every listed entry of k's module and returns the text.
func edit(k *kernels.Kernel, entries []string, f func(fn *ptx.Function) error) ([]byte, error) {
	m, err := ptx.Parse(k.PTX)
	if err != nil {
		return nil, fmt.Errorf("falsify: parse %s: %w", k.PTXFile, err)
	}
	for _, e := range entries {
		fn := m.Function(e)
		if fn == nil {
			return nil, fmt.Errorf("falsify: entry %s not found in %s", e, k.PTXFile)
		}
		if err := f(fn); err != nil {
			return nil, fmt.Errorf("falsify: %s: %w", e, err)
		}
	}
	return ptx.Print(m), nil
}

// f32imm is a float32 immediate operand.
func f32imm(v float32) ptx.Operand {
	return ptx.Operand{Kind: ptx.Float32, Bits: uint64(math.Float32bits(v))}
}

// ins builds an instruction from an opcode split at its dots.
func ins(opcode string, operands ...ptx.Operand) *ptx.Instruction {
	var op string
	var mods []string
	for i, part := range splitDots(opcode) {
		if i == 0 {
			op = part
		} else {
			mods = append(mods, part)
		}
	}
	return &ptx.Instruction{Op: op, Mods: mods, Operands: operands}
}

func splitDots(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}
