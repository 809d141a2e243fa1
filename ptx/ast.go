package ptx

import (
	"fmt"
	"strings"
)

// Module is a parsed PTX file.
type Module struct {
	Version     string   // ".version" operand, e.g. "7.8"
	Target      []string // ".target" operands, e.g. ["sm_70"]
	AddressSize int      // ".address_size", 32 or 64; 0 when absent
	Items       []Item   // module-scope declarations in source order
}

// Item is a module-scope declaration: *Variable, *Function or *Raw.
type Item interface{ item() }

// Statement is one entry of a function body: *Instruction, *Label, *Block,
// *Variable (a scoped .reg/.local/.shared/.param declaration), *Pragma or
// *Raw.
type Statement interface{ stmt() }

// StateSpace names a PTX state space without its dot: "reg", "global",
// "shared", "local", "const", "param", "tex", "sreg".
type StateSpace = string

// Variable declares storage: a module-scope .global/.const/.shared array, a
// kernel parameter, or a register set (.reg .f32 %f<12> is one Variable with
// Count 12).
type Variable struct {
	Linkage string     // "", "visible", "extern", "weak", "common"
	Space   StateSpace // "reg", "global", "shared", "local", "const", "param"
	Align   int        // .align value, 0 when absent
	Vector  int        // .v2/.v4/.v8, 0 when absent
	Type    string     // "f32", "b8", "pred", …
	Ptr     []string   // parameter attributes after .ptr: ["ptr", "global"] for ".ptr .global"
	// PtrAlign is the .align among the .ptr attributes (.param .u64 .ptr
	// .global .align 16 p): the alignment of the data the pointer points
	// to, not of the parameter, which Align gives. 0 when absent.
	PtrAlign int
	Name     string
	Count    int   // register range %name<Count>; 0 for a single name
	Dims     []int // array dimensions; -1 for an unsized dimension ([])
	Init     []Operand
	Braced   bool // the initialiser was written in braces
	Line     int
}

// Size returns the size in bytes of one element of v's type (vector
// included), or 0 for an unknown type.
func (v *Variable) Size() int {
	n := TypeSize(v.Type)
	if v.Vector > 0 {
		n *= v.Vector
	}
	return n
}

// Elements returns the number of elements of an array variable (1 for a
// scalar, 0 for an unsized array).
func (v *Variable) Elements() int {
	n := 1
	for _, d := range v.Dims {
		if d < 0 {
			return 0
		}
		n *= d
	}
	return n
}

// Function is a .entry kernel or a .func device function.
type Function struct {
	Linkage    string // "", "visible", "extern", "weak"
	Entry      bool   // .entry (kernel) rather than .func
	Name       string
	Returns    []*Variable // .func return parameters
	Params     []*Variable
	Directives []Directive // performance tuning directives (.maxntid 256, 1, 1) and .noreturn
	Body       []Statement
	HasBody    bool // false for a prototype (declaration ending in ';')
	Line       int
}

// Directive is a function-level directive such as ".maxntid 256, 1, 1".
type Directive struct {
	Name string // without the dot
	Args []int64
}

// Block is a nested { … } scope inside a function body.
type Block struct {
	Body []Statement
	Line int
}

// Label marks an instruction position.
type Label struct {
	Name string
	Line int
}

// Pragma is a .pragma "text"; statement.
type Pragma struct {
	Text string // without quotes
	Line int
}

// Raw is a directive this package keeps as text without interpreting it
// (.alias, .callprototype, .branchtargets, texture declarations …). The text
// is its tokens joined by single spaces, including the final ';'.
type Raw struct {
	Text string
	Line int
}

// Guard is an instruction's guard predicate: @%p or @!%p.
type Guard struct {
	Neg  bool
	Pred string
}

// Instruction is one PTX instruction.
type Instruction struct {
	Guard    *Guard
	Op       string   // opcode: "add", "ld", "shfl"
	Mods     []string // modifiers in source order, without dots: ["sync", "bfly", "b32"]
	Operands []Operand
	Line     int
}

// OperandKind says what an Operand is.
type OperandKind uint8

// Operand kinds.
const (
	Name    OperandKind = iota + 1 // register, special register, variable, label or function
	Int                            // integer immediate (Int)
	Float32                        // 0fXXXXXXXX immediate (Bits)
	Float64                        // 0dXXXXXXXXXXXXXXXX or decimal float immediate (Bits)
	Address                        // [Name+Int], [Int], [Name, Elems…]
	Vector                         // {a, b, c, d}
	Pair                           // d|p: Elems[0], Elems[1]
	List                           // (a, b): call arguments
)

// Operand is an instruction operand or an initialiser element.
type Operand struct {
	Kind    OperandKind
	Name    string    // Name; Address base ("" for an absolute address)
	Neg     bool      // !%p (Name)
	Generic bool      // generic(name) in an initialiser
	Int     int64     // Int value; Address or Name offset (name+Int)
	Bits    uint64    // Float32/Float64 bits
	Elems   []Operand // Vector, Pair, List elements; extra Address operands
}

func (*Variable) item()    {}
func (*Function) item()    {}
func (*Raw) item()         {}
func (*Instruction) stmt() {}
func (*Label) stmt()       {}
func (*Block) stmt()       {}
func (*Variable) stmt()    {}
func (*Pragma) stmt()      {}
func (*Raw) stmt()         {}

// Reg returns a Name operand.
func Reg(name string) Operand { return Operand{Kind: Name, Name: name} }

// Imm returns an Int operand.
func Imm(v int64) Operand { return Operand{Kind: Int, Int: v} }

// Addr returns an Address operand [base+off].
func Addr(base string, off int64) Operand { return Operand{Kind: Address, Name: base, Int: off} }

// HasMod reports whether the instruction carries modifier m (without dot).
func (in *Instruction) HasMod(m string) bool {
	for _, x := range in.Mods {
		if x == m {
			return true
		}
	}
	return false
}

// Types returns the instruction's type modifiers in order (["f32", "s32"] for
// cvt.rn.f32.s32).
func (in *Instruction) Types() []string {
	var t []string
	for _, m := range in.Mods {
		if IsType(m) {
			t = append(t, m)
		}
	}
	return t
}

// Opcode returns the full dotted opcode, e.g. "shfl.sync.bfly.b32".
func (in *Instruction) Opcode() string {
	if len(in.Mods) == 0 {
		return in.Op
	}
	return in.Op + "." + strings.Join(in.Mods, ".")
}

// String formats the instruction as PTX, without indentation or newline.
func (in *Instruction) String() string {
	var b strings.Builder
	writeInstruction(&b, in)
	return b.String()
}

// String formats the operand as PTX.
func (o Operand) String() string {
	var b strings.Builder
	writeOperand(&b, o)
	return b.String()
}

var typeSizes = map[string]int{
	"b8": 1, "b16": 2, "b32": 4, "b64": 8, "b128": 16,
	"u8": 1, "u16": 2, "u32": 4, "u64": 8,
	"s8": 1, "s16": 2, "s32": 4, "s64": 8,
	"f16": 2, "f16x2": 4, "bf16": 2, "bf16x2": 4, "f32": 4, "f64": 8,
	"e4m3": 1, "e5m2": 1, "e4m3x2": 2, "e5m2x2": 2, "tf32": 4, "f32x2": 8,
	"e2m1x2": 1, "e2m3x2": 2, "e3m2x2": 2, "ue8m0x2": 2,
	"pred": 1,
}

// IsType reports whether m (without dot) is a PTX fundamental type.
func IsType(m string) bool { _, ok := typeSizes[m]; return ok }

// TypeSize returns the size in bytes of a fundamental type, 0 if unknown.
func TypeSize(t string) int { return typeSizes[t] }

// Entries returns the module's kernels (.entry functions with a body).
func (m *Module) Entries() []*Function {
	var fs []*Function
	for _, it := range m.Items {
		if f, ok := it.(*Function); ok && f.Entry && f.HasBody {
			fs = append(fs, f)
		}
	}
	return fs
}

// Function returns the function with a body named name, or nil.
func (m *Module) Function(name string) *Function {
	var decl *Function
	for _, it := range m.Items {
		if f, ok := it.(*Function); ok && f.Name == name {
			if f.HasBody {
				return f
			}
			decl = f
		}
	}
	return decl
}

// Variables returns the module-scope variables.
func (m *Module) Variables() []*Variable {
	var vs []*Variable
	for _, it := range m.Items {
		if v, ok := it.(*Variable); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// Instructions calls f for every instruction of f's body, nested blocks
// included, in source order.
func (f *Function) Instructions(fn func(*Instruction)) {
	var walk func([]Statement)
	walk = func(ss []Statement) {
		for _, s := range ss {
			switch s := s.(type) {
			case *Instruction:
				fn(s)
			case *Block:
				walk(s.Body)
			}
		}
	}
	walk(f.Body)
}

// Error is a parse error at a line.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("ptx: line %d: %s", e.Line, e.Msg) }
