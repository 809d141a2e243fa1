package ptx

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// Print returns m as PTX text.
func Print(m *Module) []byte {
	var b bytes.Buffer
	Fprint(&b, m)
	return b.Bytes()
}

// Fprint writes m as PTX text to w.
func Fprint(w io.Writer, m *Module) error {
	var b strings.Builder
	if m.Version != "" {
		fmt.Fprintf(&b, ".version %s\n", m.Version)
	}
	if len(m.Target) > 0 {
		fmt.Fprintf(&b, ".target %s\n", strings.Join(m.Target, ", "))
	}
	if m.AddressSize != 0 {
		fmt.Fprintf(&b, ".address_size %d\n", m.AddressSize)
	}
	for _, it := range m.Items {
		b.WriteByte('\n')
		switch it := it.(type) {
		case *Variable:
			writeVariable(&b, it)
			b.WriteString(";\n")
		case *Function:
			writeFunction(&b, it)
		case *Raw:
			b.WriteString(it.Text)
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeVariable(b *strings.Builder, v *Variable) {
	if v.Linkage != "" {
		b.WriteString("." + v.Linkage + " ")
	}
	b.WriteString("." + v.Space)
	if v.Align != 0 {
		fmt.Fprintf(b, " .align %d", v.Align)
	}
	if len(v.Ptr) > 0 { // .param .u64 .ptr .global .align 16 name
		b.WriteString(" ." + v.Type)
		for _, p := range v.Ptr {
			b.WriteString(" ." + p)
		}
		if v.PtrAlign != 0 {
			fmt.Fprintf(b, " .align %d", v.PtrAlign)
		}
	}
	if v.Vector != 0 {
		fmt.Fprintf(b, " .v%d", v.Vector)
	}
	if len(v.Ptr) == 0 {
		b.WriteString(" ." + v.Type)
	}
	b.WriteString(" " + v.Name)
	if v.Count != 0 {
		fmt.Fprintf(b, "<%d>", v.Count)
	}
	for _, d := range v.Dims {
		if d < 0 {
			b.WriteString("[]")
		} else {
			fmt.Fprintf(b, "[%d]", d)
		}
	}
	if len(v.Init) == 0 && !v.Braced {
		return
	}
	b.WriteString(" = ")
	if !v.Braced {
		writeOperand(b, v.Init[0])
		return
	}
	// Re-nest by the inner dimensions when the initialiser is complete.
	inner := 1
	for _, d := range v.Dims[min(1, len(v.Dims)):] {
		inner *= max(d, 1)
	}
	nested := len(v.Dims) > 1 && inner > 1 && len(v.Init)%inner == 0
	b.WriteString("{")
	for i, o := range v.Init {
		if i > 0 {
			b.WriteString(", ")
		}
		if nested && i%inner == 0 {
			b.WriteString("{")
		}
		writeOperand(b, o)
		if nested && i%inner == inner-1 {
			b.WriteString("}")
		}
	}
	b.WriteString("}")
}

func writeFunction(b *strings.Builder, f *Function) {
	if f.Linkage != "" {
		b.WriteString("." + f.Linkage + " ")
	}
	if f.Entry {
		b.WriteString(".entry ")
	} else {
		b.WriteString(".func ")
	}
	writeParams := func(ps []*Variable) {
		b.WriteString("(")
		for i, p := range ps {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n\t")
			writeVariable(b, p)
		}
		if len(ps) > 0 {
			b.WriteString("\n")
		}
		b.WriteString(")")
	}
	if len(f.Returns) > 0 {
		writeParams(f.Returns)
		b.WriteString(" ")
	}
	b.WriteString(f.Name)
	writeParams(f.Params)
	b.WriteString("\n")
	for _, d := range f.Directives {
		b.WriteString("." + d.Name)
		for i, a := range d.Args {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(b, " %d", a)
		}
		b.WriteString("\n")
	}
	if !f.HasBody {
		b.WriteString(";\n")
		return
	}
	b.WriteString("{\n")
	writeBody(b, f.Body, 1)
	b.WriteString("}\n")
}

func writeBody(b *strings.Builder, ss []Statement, depth int) {
	ind := strings.Repeat("\t", depth)
	for _, s := range ss {
		switch s := s.(type) {
		case *Instruction:
			b.WriteString(ind)
			writeInstruction(b, s)
			b.WriteString("\n")
		case *Label:
			fmt.Fprintf(b, "%s:\n", s.Name)
		case *Block:
			b.WriteString(ind + "{\n")
			writeBody(b, s.Body, depth+1)
			b.WriteString(ind + "}\n")
		case *Variable:
			b.WriteString(ind)
			writeVariable(b, s)
			b.WriteString(";\n")
		case *Pragma:
			fmt.Fprintf(b, "%s.pragma %s;\n", ind, strconv.Quote(s.Text))
		case *Raw:
			b.WriteString(ind + s.Text + "\n")
		}
	}
}

func writeInstruction(b *strings.Builder, in *Instruction) {
	if in.Guard != nil {
		b.WriteString("@")
		if in.Guard.Neg {
			b.WriteString("!")
		}
		b.WriteString(in.Guard.Pred + " ")
	}
	b.WriteString(in.Opcode())
	for i, o := range in.Operands {
		if i == 0 {
			b.WriteString("\t")
		} else {
			b.WriteString(", ")
		}
		writeOperand(b, o)
	}
	b.WriteString(";")
}

func writeOperand(b *strings.Builder, o Operand) {
	switch o.Kind {
	case Name:
		if o.Neg {
			b.WriteString("!")
		}
		if o.Generic {
			b.WriteString("generic(" + o.Name + ")")
		} else {
			b.WriteString(o.Name)
		}
		if o.Int != 0 {
			fmt.Fprintf(b, "+%d", o.Int)
		}
	case Int:
		fmt.Fprintf(b, "%d", o.Int)
	case Float32:
		fmt.Fprintf(b, "0f%08X", uint32(o.Bits))
	case Float64:
		fmt.Fprintf(b, "0d%016X", o.Bits)
	case Address:
		b.WriteString("[")
		if o.Name != "" {
			b.WriteString(o.Name)
			if o.Int != 0 {
				fmt.Fprintf(b, "+%d", o.Int)
			}
		} else {
			fmt.Fprintf(b, "%d", o.Int)
		}
		for _, e := range o.Elems {
			b.WriteString(", ")
			writeOperand(b, e)
		}
		b.WriteString("]")
	case Vector, List:
		open, close := "{", "}"
		if o.Kind == List {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i, e := range o.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			writeOperand(b, e)
		}
		b.WriteString(close)
	case Pair:
		writeOperand(b, o.Elems[0])
		b.WriteString("|")
		writeOperand(b, o.Elems[1])
	}
}

// Equal reports whether a and b are the same program: equal ASTs apart
// from source line numbers.
func Equal(a, b *Module) bool {
	return reflect.DeepEqual(withoutLines(a), withoutLines(b))
}

// withoutLines returns a deep copy of m with every Line zeroed.
func withoutLines(m *Module) *Module {
	c := *m
	c.Items = make([]Item, len(m.Items))
	for i, it := range m.Items {
		switch it := it.(type) {
		case *Variable:
			c.Items[i] = lineless(it)
		case *Raw:
			c.Items[i] = lineless(it)
		case *Function:
			f := lineless(it)
			f.Params = varsWithoutLines(f.Params)
			f.Returns = varsWithoutLines(f.Returns)
			f.Body = stmtsWithoutLines(f.Body)
			c.Items[i] = f
		}
	}
	return &c
}

// lineless returns a copy of the node p points to with its Line zeroed.
func lineless[T any](p *T) *T {
	c := *p
	reflect.ValueOf(&c).Elem().FieldByName("Line").SetInt(0)
	return &c
}

func varsWithoutLines(vs []*Variable) []*Variable {
	if vs == nil {
		return nil
	}
	out := make([]*Variable, len(vs))
	for i, v := range vs {
		out[i] = lineless(v)
	}
	return out
}

func stmtsWithoutLines(ss []Statement) []Statement {
	if ss == nil {
		return nil
	}
	out := make([]Statement, len(ss))
	for i, s := range ss {
		switch s := s.(type) {
		case *Instruction:
			out[i] = lineless(s)
		case *Label:
			out[i] = lineless(s)
		case *Block:
			out[i] = &Block{Body: stmtsWithoutLines(s.Body)}
		case *Variable:
			out[i] = lineless(s)
		case *Pragma:
			out[i] = lineless(s)
		case *Raw:
			out[i] = lineless(s)
		}
	}
	return out
}
