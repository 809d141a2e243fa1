package falsify

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/ptx"
)

// Op is a generic PTX mutation operator. Each applies at one instruction
// (a site) of one kernel entry and changes exactly that instruction.
type Op uint8

// The operators.
const (
	ArithSwap  Op = iota + 1 // add↔sub, mul↔div, min↔max
	ImmInc                   // integer immediate +1; float immediate ×(1+2⁻¹⁰)
	ImmDec                   // integer immediate −1; float immediate ×(1−2⁻¹⁰)
	CmpFlip                  // setp lt↔le, gt↔ge (and lo↔ls, hi↔hs, ltu↔leu, gtu↔geu)
	PredNeg                  // guard @%p ↔ @!%p
	ShflOffset               // shuffle lane operand b: b/2, or b+1 when b < 2
	ShflMode                 // shuffle mode bfly→down→bfly, up→down, idx→bfly
	StoreDel                 // delete a st
	BarDel                   // delete a bar / barrier
	SwapArgs                 // swap the two sources of a non-commutative instruction (sub, div, rem, 32-bit shifts, ordered setp, selp, fma/mad.lo addend)
)

var opNames = map[Op]string{
	ArithSwap: "arith-swap", ImmInc: "imm-inc", ImmDec: "imm-dec", CmpFlip: "cmp-flip", PredNeg: "pred-neg",
	ShflOffset: "shfl-offset", ShflMode: "shfl-mode", StoreDel: "store-del", BarDel: "bar-del", SwapArgs: "swap-args",
}

// Ops lists every operator in a fixed order.
func Ops() []Op {
	return []Op{ArithSwap, ImmInc, ImmDec, CmpFlip, PredNeg, ShflOffset, ShflMode, StoreDel, BarDel, SwapArgs}
}

func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// ParseOp returns the operator named s ("arith-swap", …).
func ParseOp(s string) (Op, error) {
	for o, n := range opNames {
		if n == s {
			return o, nil
		}
	}
	return 0, fmt.Errorf("falsify: unknown operator %q", s)
}

// Generic is a generic mutant: operator Op applied at instruction PC (its
// index among the instructions of the entry, in source order) of kernel
// Kernel, to operand Arg for the immediate operators (−1 otherwise). Its
// String is "kernel/op@pcN" or "kernel/op@pcN.arg", and ParseMutant reads
// it back.
type Generic struct {
	Kernel string
	Op     Op
	PC     int
	Arg    int
}

func (g Generic) String() string {
	s := fmt.Sprintf("%s/%s@pc%d", g.Kernel, g.Op, g.PC)
	if g.Arg >= 0 {
		s += "." + strconv.Itoa(g.Arg)
	}
	return s
}

var genericName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_$]*)/([a-z-]+)@pc(\d+)(?:\.(\d+))?$`)

// parseGeneric parses a Generic's String. It checks the syntax, the kernel
// and the operator, not that the site exists (Sites does).
func parseGeneric(s string) (Generic, error) {
	m := genericName.FindStringSubmatch(s)
	if m == nil {
		return Generic{}, fmt.Errorf("falsify: %q is not a mutant name (want kernel/op@pcN[.arg])", s)
	}
	if _, ok := kernels.Lookup(m[1]); !ok {
		return Generic{}, fmt.Errorf("falsify: %q: unknown kernel %s", s, m[1])
	}
	op, err := ParseOp(m[2])
	if err != nil {
		return Generic{}, fmt.Errorf("falsify: %q: %w", s, err)
	}
	pc, err := strconv.Atoi(m[3])
	if err != nil || strconv.Itoa(pc) != m[3] {
		return Generic{}, fmt.Errorf("falsify: %q: bad pc %s", s, m[3])
	}
	g := Generic{Kernel: m[1], Op: op, PC: pc, Arg: -1}
	if m[4] != "" {
		if g.Arg, err = strconv.Atoi(m[4]); err != nil || strconv.Itoa(g.Arg) != m[4] {
			return Generic{}, fmt.Errorf("falsify: %q: bad operand index %s", s, m[4])
		}
	}
	if (op == ImmInc || op == ImmDec) != (g.Arg >= 0) {
		return Generic{}, fmt.Errorf("falsify: %q: operand index is given exactly for imm-inc and imm-dec", s)
	}
	return g, nil
}

// Sites returns every generic mutant of kernel k: each operator at each
// instruction where it applies, in pc order, operators in Ops order.
func Sites(k *kernels.Kernel) ([]Generic, error) {
	_, fn, err := parseEntry(k)
	if err != nil {
		return nil, err
	}
	var out []Generic
	for pc, s := range instructions(fn) {
		for _, op := range Ops() {
			for _, arg := range applicable(fn, s.in, op) {
				out = append(out, Generic{Kernel: k.Name, Op: op, PC: pc, Arg: arg})
			}
		}
	}
	return out, nil
}

// Apply returns the PTX text of k with g applied. It fails when g does not
// name a site of k.
func (g Generic) Apply(k *kernels.Kernel) ([]byte, error) {
	if k.Name != g.Kernel {
		return nil, fmt.Errorf("falsify: %v applied to kernel %s", g, k.Name)
	}
	m, fn, err := parseEntry(k)
	if err != nil {
		return nil, err
	}
	all := instructions(fn)
	if g.PC < 0 || g.PC >= len(all) {
		return nil, fmt.Errorf("falsify: %v: %s has %d instructions", g, k.Entry, len(all))
	}
	s := all[g.PC]
	if !slices.Contains(applicable(fn, s.in, g.Op), g.Arg) {
		return nil, fmt.Errorf("falsify: %v: %s does not apply to `%v`", g, g.Op, s.in)
	}
	if err := mutate(fn, s, g.Op, g.Arg); err != nil {
		return nil, fmt.Errorf("falsify: %v: %w", g, err)
	}
	return ptx.Print(m), nil
}

// Instruction returns the original instruction at g's site, as PTX text.
func (g Generic) Instruction(k *kernels.Kernel) (string, error) {
	_, fn, err := parseEntry(k)
	if err != nil {
		return "", err
	}
	all := instructions(fn)
	if g.PC < 0 || g.PC >= len(all) {
		return "", fmt.Errorf("falsify: %v: %s has %d instructions", g, k.Entry, len(all))
	}
	return all[g.PC].in.String(), nil
}

var (
	cmpFlip      = map[string]string{"lt": "le", "le": "lt", "gt": "ge", "ge": "gt", "lo": "ls", "ls": "lo", "hi": "hs", "hs": "hi", "ltu": "leu", "leu": "ltu", "gtu": "geu", "geu": "gtu"}
	shflMode     = map[string]string{"bfly": "down", "down": "bfly", "up": "down", "idx": "bfly"}
	symmetricCmp = map[string]bool{"eq": true, "ne": true, "equ": true, "neu": true, "num": true, "nan": true}
	noImm        = map[string]bool{"bar": true, "barrier": true, "membar": true, "bra": true, "ret": true, "exit": true, "call": true}
)

// applicable returns the operand indices at which op applies to in: [-1]
// for the operators that take no operand, the immediate operands for
// ImmInc/ImmDec, nil when op does not apply.
func applicable(fn *ptx.Function, in *ptx.Instruction, op Op) []int {
	yes := []int{-1}
	switch op {
	case ArithSwap:
		if _, ok := arithSwap(in); ok {
			return yes
		}
	case ImmInc, ImmDec:
		if noImm[in.Op] {
			return nil
		}
		var idx []int
		for i, o := range in.Operands {
			if i == 0 && in.Op != "st" {
				continue
			}
			switch o.Kind {
			case ptx.Int:
				idx = append(idx, i)
			case ptx.Float32:
				if f := math.Float32frombits(uint32(o.Bits)); f != 0 && !math.IsInf(float64(f), 0) && f == f {
					idx = append(idx, i)
				}
			case ptx.Float64:
				if f := math.Float64frombits(o.Bits); f != 0 && !math.IsInf(f, 0) && f == f {
					idx = append(idx, i)
				}
			}
		}
		return idx
	case CmpFlip:
		if in.Op == "setp" && len(in.Mods) > 0 && cmpFlip[in.Mods[0]] != "" {
			return yes
		}
	case PredNeg:
		if in.Guard != nil {
			return yes
		}
	case ShflOffset:
		if in.Op == "shfl" && len(in.Operands) >= 4 {
			if _, ok := immValue(fn, in.Operands[2]); ok {
				return yes
			}
		}
	case ShflMode:
		if in.Op == "shfl" && shflModeIndex(in) >= 0 {
			return yes
		}
	case StoreDel:
		if in.Op == "st" {
			return yes
		}
	case BarDel:
		if in.Op == "bar" || in.Op == "barrier" {
			return yes
		}
	case SwapArgs:
		if i, j, ok := swappable(in); ok && !sameOperand(in.Operands[i], in.Operands[j]) {
			return yes
		}
	}
	return nil
}

// arithSwap returns in's opcode with the arithmetic operation swapped.
func arithSwap(in *ptx.Instruction) (ptx.Instruction, bool) {
	out := *in
	out.Mods = slices.Clone(in.Mods)
	types := in.Types()
	if len(types) != 1 {
		return out, false
	}
	t := types[0]
	float := t == "f32" || t == "f64"
	keep := func(drop ...string) []string {
		var m []string
		for _, x := range in.Mods {
			if !slices.Contains(drop, x) {
				m = append(m, x)
			}
		}
		return m
	}
	switch in.Op {
	case "add", "sub":
		if in.HasMod("cc") {
			return out, false
		}
		out.Op = map[string]string{"add": "sub", "sub": "add"}[in.Op]
	case "min", "max":
		out.Op = map[string]string{"min": "max", "max": "min"}[in.Op]
	case "mul":
		switch {
		case float:
			out.Op = "div"
			m := keep("rn", "rz", "rm", "rp", "sat", t)
			out.Mods = append(append([]string{"rn"}, m...), t)
		case in.HasMod("lo"):
			out.Op = "div"
			out.Mods = keep("lo")
		default: // mul.wide, mul.hi: no division of that shape
			return out, false
		}
	case "div":
		if float {
			out.Op = "mul"
			m := keep("rn", "rz", "rm", "rp", "full", "approx", t)
			out.Mods = append(append([]string{"rn"}, m...), t)
		} else {
			out.Op = "mul"
			out.Mods = append([]string{"lo"}, in.Mods...)
		}
	default:
		return out, false
	}
	return out, true
}

// immValue resolves o to an integer: an immediate, or a register whose
// only definition in fn is a mov of an immediate.
func immValue(fn *ptx.Function, o ptx.Operand) (int64, bool) {
	switch o.Kind {
	case ptx.Int:
		return o.Int, true
	case ptx.Name:
		d := defs(fn, o.Name)
		if len(d) == 1 && d[0].in.Op == "mov" && d[0].in.Guard == nil && len(d[0].in.Operands) == 2 && d[0].in.Operands[1].Kind == ptx.Int {
			return d[0].in.Operands[1].Int, true
		}
	}
	return 0, false
}

func shflModeIndex(in *ptx.Instruction) int {
	for i, m := range in.Mods {
		if shflMode[m] != "" {
			return i
		}
	}
	return -1
}

// swappable returns the two source operands of in that SwapArgs exchanges.
func swappable(in *ptx.Instruction) (i, j int, ok bool) {
	n := len(in.Operands)
	types := in.Types()
	switch in.Op {
	case "sub", "div", "rem":
		if n >= 3 {
			return 1, 2, true
		}
	case "setp":
		// eq, ne, equ, neu, num and nan are symmetric: swapping is a no-op.
		if n >= 3 && len(in.Mods) > 0 && !symmetricCmp[in.Mods[0]] {
			return 1, 2, true
		}
	case "shl", "shr":
		// The shift amount is u32; a 64-bit value cannot take its place.
		if n == 3 && len(types) == 1 && ptx.TypeSize(types[0]) == 4 {
			return 1, 2, true
		}
	case "selp":
		if n == 4 {
			return 1, 2, true
		}
	case "fma":
		if n == 4 {
			return 2, 3, true
		}
	case "mad":
		if n == 4 && in.HasMod("lo") {
			return 2, 3, true
		}
	}
	return 0, 0, false
}

func sameOperand(a, b ptx.Operand) bool {
	return a.Kind == b.Kind && a.Name == b.Name && a.Int == b.Int && a.Bits == b.Bits && a.Neg == b.Neg && len(a.Elems) == 0 && len(b.Elems) == 0
}

// perturb returns o with an immediate moved by one step in direction dir.
func perturb(o ptx.Operand, dir int) ptx.Operand {
	switch o.Kind {
	case ptx.Int:
		o.Int += int64(dir)
	case ptx.Float32:
		f := float64(math.Float32frombits(uint32(o.Bits)))
		o.Bits = uint64(math.Float32bits(float32(f * (1 + float64(dir)*0x1p-10))))
	case ptx.Float64:
		f := math.Float64frombits(o.Bits)
		o.Bits = math.Float64bits(f * (1 + float64(dir)*0x1p-10))
	}
	return o
}

// mutate applies op at site s of fn.
func mutate(fn *ptx.Function, s site, op Op, arg int) error {
	in := s.in
	switch op {
	case ArithSwap:
		out, _ := arithSwap(in)
		*in = out
	case ImmInc:
		in.Operands[arg] = perturb(in.Operands[arg], 1)
	case ImmDec:
		in.Operands[arg] = perturb(in.Operands[arg], -1)
	case CmpFlip:
		in.Mods[0] = cmpFlip[in.Mods[0]]
	case PredNeg:
		g := *in.Guard
		g.Neg = !g.Neg
		in.Guard = &g
	case ShflOffset:
		v, _ := immValue(fn, in.Operands[2])
		if v >= 2 {
			v /= 2
		} else {
			v++
		}
		in.Operands[2] = ptx.Imm(v)
	case ShflMode:
		i := shflModeIndex(in)
		in.Mods[i] = shflMode[in.Mods[i]]
	case StoreDel, BarDel:
		s.remove()
	case SwapArgs:
		i, j, _ := swappable(in)
		in.Operands[i], in.Operands[j] = in.Operands[j], in.Operands[i]
	default:
		return fmt.Errorf("unknown operator %v", op)
	}
	return nil
}
