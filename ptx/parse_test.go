package ptx

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

func mustParse(t *testing.T, src string) *Module {
	t.Helper()
	m, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseSyntaxFeatures(t *testing.T) {
	src, err := os.ReadFile("testdata/syntax.ptx")
	if err != nil {
		t.Fatal(err)
	}
	m := mustParse(t, string(src))
	if m.Version != "8.0" || strings.Join(m.Target, ",") != "sm_80,debug" || m.AddressSize != 64 {
		t.Errorf("header = %q %q %d", m.Version, m.Target, m.AddressSize)
	}
	vars := map[string]*Variable{}
	for _, v := range m.Variables() {
		vars[v.Name] = v
	}
	if v := vars["dyn"]; v == nil || v.Linkage != "extern" || v.Space != "shared" || v.Align != 16 || len(v.Dims) != 1 || v.Dims[0] != -1 {
		t.Errorf("dyn = %+v", v)
	}
	if v := vars["table"]; v == nil || len(v.Init) != 8 || v.Init[4].Int != 16 || v.Init[5].Int != 3 || v.Init[7].Int != 255 {
		t.Errorf("table = %+v", v)
	}
	if v := vars["ptrs"]; v == nil || !v.Init[0].Generic || v.Init[1].Name != "table" || v.Init[1].Int != 4 {
		t.Errorf("ptrs = %+v", v)
	}
	if v := vars["coeffs"]; v == nil || len(v.Init) != 4 || v.Init[0].Kind != Float32 || v.Init[0].Bits != 0x3F800000 ||
		v.Init[3].Kind != Float64 || math.Float64frombits(v.Init[3].Bits) != -2 {
		t.Errorf("coeffs = %+v", v)
	}
	if v := vars["signed_init"]; v == nil || v.Init[0].Int != -7 || v.Braced {
		t.Errorf("signed_init = %+v", v)
	}
	f := m.Function("syntax")
	if f == nil || !f.Entry || f.Linkage != "visible" || len(f.Params) != 3 {
		t.Fatalf("entry = %+v", f)
	}
	if p := f.Params[0]; strings.Join(p.Ptr, " ") != "ptr global" || p.PtrAlign != 16 || p.Align != 0 || p.Type != "u64" {
		t.Errorf("param 0 = %+v", p)
	}
	if p := f.Params[1]; p.Type != "b8" || p.Dims[0] != 16 || p.Align != 8 {
		t.Errorf("param 1 = %+v", p)
	}
	if len(f.Directives) != 2 || f.Directives[0].Name != "maxntid" || len(f.Directives[0].Args) != 3 {
		t.Errorf("directives = %+v", f.Directives)
	}
	if tw := m.Function("twice"); tw == nil || len(tw.Returns) != 1 || tw.Directives[0].Name != "noreturn" {
		t.Errorf("twice = %+v", tw)
	}
	if ext := m.Function("ext_fn"); ext == nil || ext.HasBody || ext.Linkage != "extern" {
		t.Errorf("ext_fn = %+v", ext)
	}
	if got := len(m.Entries()); got != 1 {
		t.Errorf("%d entries", got)
	}
	var ins []*Instruction
	f.Instructions(func(in *Instruction) { ins = append(ins, in) })
	byOp := func(opcode string) *Instruction {
		for _, in := range ins {
			if in.Opcode() == opcode {
				return in
			}
		}
		t.Fatalf("no %s", opcode)
		return nil
	}
	if in := byOp("mov.u32"); in.Operands[1].Name != "%tid.x" {
		t.Errorf("special register: %v", in)
	}
	if in := byOp("ld.global.nc.L1::no_allocate.v4.f32"); in.Operands[0].Kind != Vector || in.Operands[0].Elems[3].Name != "_" ||
		in.Operands[1].Kind != Address || in.Operands[1].Name != "%rd2" || in.Operands[1].Int != -16 {
		t.Errorf("vector load: %v", in)
	}
	if in := byOp("setp.gtu.f32"); in.Operands[0].Kind != Pair || in.Operands[0].Elems[1].Name != "%p2" || in.Operands[2].Bits != 0x7F800000 {
		t.Errorf("setp pair: %v", in)
	}
	if in := byOp("setp.lt.and.s32"); !in.Operands[3].Neg || in.Operands[3].Name != "%p1" {
		t.Errorf("negated predicate operand: %v", in)
	}
	if in := byOp("bra.uni"); in.Guard == nil || !in.Guard.Neg || in.Guard.Pred != "%p3" {
		t.Errorf("guard: %v", in)
	}
	if in := byOp("ld.param.v2.u32"); in.Operands[1].Name != "blob" || in.Operands[1].Int != 8 {
		t.Errorf("param address: %v", in)
	}
	if in := byOp("mul.wide.s32"); in.Operands[2].Int != -4 {
		t.Errorf("negative immediate: %v", in)
	}
	if in := byOp("call.uni"); in.Operands[0].Kind != List || in.Operands[1].Name != "twice" || len(in.Operands[2].Elems) != 1 {
		t.Errorf("call: %v", in)
	}
	if in := byOp("atom.global.add.f32"); in.Operands[2].Kind != Float64 || math.Float64frombits(in.Operands[2].Bits) != 1 {
		t.Errorf("decimal float: %v", in)
	}
	if in := byOp("mov.b32"); in.Operands[1].Int != 0xFFFFFFFF {
		t.Errorf("hex immediate: %v", in)
	}
	var blocks, pragmas, labels int
	for _, s := range f.Body {
		switch s.(type) {
		case *Block:
			blocks++
		case *Pragma:
			pragmas++
		case *Label:
			labels++
		}
	}
	if blocks != 2 || pragmas != 1 || labels != 1 {
		t.Errorf("blocks=%d pragmas=%d labels=%d", blocks, pragmas, labels)
	}
	if in := byOp("fma.rn.ftz.f32"); !in.HasMod("ftz") || strings.Join(in.Types(), ",") != "f32" {
		t.Errorf("mods: %v", in)
	}
	if got := byOp("shfl.sync.bfly.b32").String(); got != "shfl.sync.bfly.b32\t%r6|%p1, %r1, 16, 31, -1;" {
		t.Errorf("String() = %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{".version 7.8\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tfrobnicate.b32 %r1, %r2;\n}\n", `line 6: unknown instruction "frobnicate"`},
		{".entry k()\n{\n\tadd.s32 %r1, %r2 %r3;\n}\n", "line 3: expected ',' or ';'"},
		{".entry k()\n{\n\tadd.s32 %r1, %r2, %r3;\n", "end of file"},
		{".entry k()\n{\n\tld.global.f32 %f1, [%rd1+];\n}\n", "line 3"},
		{".global .f32 x = 0f3F80;\n", "bad float literal"},
		{".bogus 1\n", `unknown module directive ".bogus"`},
		{".entry k()\n{\n\t.reg .b32 %r<3;\n}\n", "line 3"},
		{".entry k()\n{\n\t/* unterminated\n}\n", "unterminated comment"},
	} {
		_, err := Parse([]byte(tc.src))
		var pe *Error
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want error containing %q", tc.src, err, tc.want)
		}
	}
}

func TestSkipsDebugDirectives(t *testing.T) {
	a := mustParse(t, ".version 7.8\n.target sm_70\n.file 1 \"a.cu\"\n.entry k()\n{\n.loc 1 2 3\n\tret;\n}\n.section .debug_info\n{\n.b8 1\n}\n")
	b := mustParse(t, ".version 7.8\n.target sm_70\n.entry k()\n{\n\tret;\n}\n")
	if !Equal(a, b) {
		t.Errorf("debug directives changed the program:\n%s\nvs\n%s", Print(a), Print(b))
	}
	c := mustParse(t, ".version 7.8\n.target sm_70\n.entry k()\n{\n\texit;\n}\n")
	if Equal(b, c) {
		t.Errorf("Equal ignores the opcode")
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, name := range []string{"testdata/syntax.ptx", "testdata/mixed.ptx"} {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := Parse(src)
		if err != nil {
			return
		}
		m2, err := Parse(Print(m))
		if err != nil {
			t.Fatalf("printed program does not parse: %v\n%s", err, Print(m))
		}
		if !Equal(m, m2) {
			t.Fatalf("round trip changed the program:\n%s\n----\n%s", Print(m), Print(m2))
		}
	})
}
