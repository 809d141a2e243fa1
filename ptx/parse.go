package ptx

import (
	"fmt"
	"strconv"
	"strings"
)

// opcodes is every PTX instruction opcode (the part before the first dot).
var opcodes = map[string]bool{}

func init() {
	for _, op := range strings.Fields(`abs activemask add addc alloca and applypriority atom bar barrier
		bfe bfi bfind bmsk bra brev brkpt brx call clusterlaunchcontrol clz cnot copysign cos cp
		createpolicy cvt cvta discard div dp2a dp4a elect ex2 exit fence fma fns getctarank
		griddepcontrol isspacep istypep ld ldmatrix ldu lg2 lop3 mad mad24 madc mapa match max
		mbarrier membar min mma mov movmatrix mul mul24 multimem nanosleep neg not or pmevent popc
		prefetch prefetchu prmt rcp red redux rem ret rsqrt sad selp set setmaxnreg setp shf shfl
		shl shr sin slct sqrt st stackrestore stacksave stmatrix sub subc suld suq sured sust szext
		tanh tcgen05 tensormap testp tex tld4 trap txq vabsdiff vabsdiff2 vabsdiff4 vadd vadd2 vadd4
		vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2 vmin4 vote vset vset2 vset4 vshl vshr vsub
		vsub2 vsub4 wgmma wmma xor`) {
		opcodes[op] = true
	}
}

// IsOpcode reports whether op is a PTX instruction opcode ("add", "shfl").
func IsOpcode(op string) bool { return opcodes[op] }

type parser struct {
	toks []token
	pos  int
}

// Parse parses PTX source text.
func Parse(src []byte) (*Module, error) {
	toks, err := lex(string(src))
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	return p.module()
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) peekN(n int) token {
	if p.pos+n < len(p.toks) {
		return p.toks[p.pos+n]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) errf(t token, format string, args ...any) error {
	return &Error{t.line, fmt.Sprintf(format, args...)}
}

func (p *parser) isPunct(s string) bool {
	t := p.peek()
	return t.kind == tPunct && t.text == s
}

func (p *parser) isDir(s string) bool {
	t := p.peek()
	return t.kind == tDir && t.text == s
}

func (p *parser) expect(s string) (token, error) {
	t := p.next()
	if t.kind != tPunct || t.text != s {
		return t, p.errf(t, "expected %q, found %s", s, describe(t))
	}
	return t, nil
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tDir:
		return fmt.Sprintf("%q", "."+t.text)
	case tStr:
		return fmt.Sprintf("string %q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// skipLine skips tokens up to the next one that starts a line.
func (p *parser) skipLine() {
	p.next()
	for !p.peek().nl {
		p.next()
	}
}

// skipSection skips a .section directive with its braced contents.
func (p *parser) skipSection() error {
	start := p.next()
	for !p.isPunct("{") {
		if p.peek().kind == tEOF || p.isPunct(";") {
			if p.isPunct(";") {
				p.next()
			}
			return nil
		}
		p.next()
	}
	depth := 0
	for {
		t := p.next()
		if t.kind == tEOF {
			return p.errf(start, "unterminated .section")
		}
		if t.kind == tPunct && t.text == "{" {
			depth++
		} else if t.kind == tPunct && t.text == "}" {
			depth--
			if depth == 0 {
				return nil
			}
		}
	}
}

// raw collects tokens up to and including the next ';' into a Raw.
func (p *parser) raw() (*Raw, error) {
	start := p.peek()
	var parts []string
	for {
		t := p.next()
		if t.kind == tEOF {
			return nil, p.errf(start, "unterminated directive")
		}
		parts = append(parts, tokText(t))
		if t.kind == tPunct && t.text == ";" {
			return &Raw{Text: strings.Join(parts, " "), Line: start.line}, nil
		}
	}
}

func tokText(t token) string {
	switch t.kind {
	case tDir:
		return "." + t.text
	case tStr:
		return strconv.Quote(t.text)
	}
	return t.text
}

var linkages = map[string]bool{"visible": true, "extern": true, "weak": true, "common": true}
var spaces = map[string]bool{"reg": true, "global": true, "shared": true, "local": true, "const": true, "param": true, "tex": true, "sreg": true}

func (p *parser) module() (*Module, error) {
	m := &Module{}
	for {
		t := p.peek()
		switch t.kind {
		case tEOF:
			return m, nil
		case tDir:
		default:
			return nil, p.errf(t, "unexpected %s at module scope", describe(t))
		}
		switch t.text {
		case "version":
			p.next()
			v := p.next()
			if v.kind != tF64 && v.kind != tInt {
				return nil, p.errf(v, "bad .version %s", describe(v))
			}
			m.Version = v.text
		case "target":
			p.next()
			for {
				v := p.next()
				if v.kind != tIdent {
					return nil, p.errf(v, "bad .target %s", describe(v))
				}
				m.Target = append(m.Target, v.text)
				if !p.isPunct(",") {
					break
				}
				p.next()
			}
		case "address_size":
			p.next()
			v := p.next()
			if v.kind != tInt {
				return nil, p.errf(v, "bad .address_size %s", describe(v))
			}
			m.AddressSize = int(v.ival)
		case "file", "loc":
			p.skipLine()
		case "section":
			if err := p.skipSection(); err != nil {
				return nil, err
			}
		case "pragma":
			r, err := p.raw()
			if err != nil {
				return nil, err
			}
			m.Items = append(m.Items, r)
		case "alias":
			r, err := p.raw()
			if err != nil {
				return nil, err
			}
			m.Items = append(m.Items, r)
		default:
			link := ""
			if linkages[t.text] {
				link = t.text
				p.next()
				t = p.peek()
			}
			switch {
			case t.kind == tDir && (t.text == "entry" || t.text == "func"):
				f, err := p.function(link)
				if err != nil {
					return nil, err
				}
				m.Items = append(m.Items, f)
			case t.kind == tDir && spaces[t.text]:
				vs, err := p.variables(link, true)
				if err != nil {
					return nil, err
				}
				if vs == nil {
					r, err := p.raw()
					if err != nil {
						return nil, err
					}
					m.Items = append(m.Items, r)
				}
				for _, v := range vs {
					m.Items = append(m.Items, v)
				}
			default:
				return nil, p.errf(t, "unknown module directive %s", describe(t))
			}
		}
	}
}

// variables parses a declaration "space attrs type name…" up to and
// including ';' (stmt) or up to ',' / ')' (a parameter). It returns nil
// without consuming anything for declarations it keeps raw (textures).
func (p *parser) variables(link string, stmt bool) ([]*Variable, error) {
	start := p.peek()
	save := p.pos
	proto := Variable{Linkage: link, Space: p.next().text, Line: start.line}
	for {
		t := p.peek()
		if t.kind != tDir {
			return nil, p.errf(t, "expected a type in declaration, found %s", describe(t))
		}
		p.next()
		switch {
		case t.text == "align":
			v := p.next()
			if v.kind != tInt {
				return nil, p.errf(v, "bad .align %s", describe(v))
			}
			if len(proto.Ptr) > 0 {
				proto.PtrAlign = int(v.ival)
			} else {
				proto.Align = int(v.ival)
			}
			continue
		case t.text == "v2" || t.text == "v4" || t.text == "v8":
			proto.Vector = int(t.text[1] - '0')
			continue
		case t.text == "ptr" || len(proto.Ptr) > 0 && spaces[t.text]:
			proto.Ptr = append(proto.Ptr, t.text)
			continue
		case IsType(t.text):
			proto.Type = t.text
		case t.text == "texref" || t.text == "surfref" || t.text == "samplerref":
			p.pos = save
			return nil, nil
		default:
			return nil, p.errf(t, "unexpected %s in declaration", describe(t))
		}
		break
	}
	// Parameter attributes may follow the type: .u64 .ptr .global .align 16,
	// where the .align is the pointed-to data's (PtrAlign).
	for p.isDir("ptr") || len(proto.Ptr) > 0 && p.peek().kind == tDir && (spaces[p.peek().text] || p.peek().text == "align") {
		t := p.next()
		if t.text == "align" {
			v := p.next()
			if v.kind != tInt {
				return nil, p.errf(v, "bad .align %s", describe(v))
			}
			proto.PtrAlign = int(v.ival)
			continue
		}
		proto.Ptr = append(proto.Ptr, t.text)
	}
	var out []*Variable
	for {
		v := proto
		nt := p.next()
		if nt.kind != tIdent {
			return nil, p.errf(nt, "expected a name in declaration, found %s", describe(nt))
		}
		v.Name, v.Line = nt.text, nt.line
		if p.isPunct("<") {
			p.next()
			n := p.next()
			if n.kind != tInt {
				return nil, p.errf(n, "bad register count %s", describe(n))
			}
			v.Count = int(n.ival)
			if _, err := p.expect(">"); err != nil {
				return nil, err
			}
		}
		for p.isPunct("[") {
			p.next()
			if p.isPunct("]") {
				p.next()
				v.Dims = append(v.Dims, -1)
				continue
			}
			n := p.next()
			if n.kind != tInt {
				return nil, p.errf(n, "bad array size %s", describe(n))
			}
			v.Dims = append(v.Dims, int(n.ival))
			if _, err := p.expect("]"); err != nil {
				return nil, err
			}
		}
		if p.isPunct("=") {
			p.next()
			if err := p.initializer(&v); err != nil {
				return nil, err
			}
		}
		vv := v
		out = append(out, &vv)
		if !stmt {
			return out, nil
		}
		if p.isPunct(",") {
			p.next()
			continue
		}
		if _, err := p.expect(";"); err != nil {
			return nil, err
		}
		return out, nil
	}
}

func (p *parser) initializer(v *Variable) error {
	if !p.isPunct("{") {
		o, err := p.initElem()
		if err != nil {
			return err
		}
		v.Init = []Operand{o}
		return nil
	}
	v.Braced = true
	var list func() error
	list = func() error {
		if _, err := p.expect("{"); err != nil {
			return err
		}
		for !p.isPunct("}") {
			if p.isPunct("{") {
				if err := list(); err != nil {
					return err
				}
			} else {
				o, err := p.initElem()
				if err != nil {
					return err
				}
				v.Init = append(v.Init, o)
			}
			if p.isPunct(",") {
				p.next()
			} else if !p.isPunct("}") {
				return p.errf(p.peek(), "expected ',' or '}' in initializer, found %s", describe(p.peek()))
			}
		}
		p.next()
		return nil
	}
	return list()
}

func (p *parser) initElem() (Operand, error) {
	t := p.peek()
	if t.kind == tIdent && t.text == "generic" && p.peekN(1).kind == tPunct && p.peekN(1).text == "(" {
		p.next()
		p.next()
		n := p.next()
		if n.kind != tIdent {
			return Operand{}, p.errf(n, "bad generic() argument %s", describe(n))
		}
		o := Operand{Kind: Name, Name: n.text, Generic: true}
		if _, err := p.expect(")"); err != nil {
			return o, err
		}
		return p.nameOffset(o)
	}
	return p.operand()
}

// nameOffset parses an optional "+N" after a name.
func (p *parser) nameOffset(o Operand) (Operand, error) {
	if p.isPunct("+") && (p.peekN(1).kind == tInt || p.peekN(1).kind == tPunct && p.peekN(1).text == "-") {
		p.next()
		n, err := p.signedInt()
		if err != nil {
			return o, err
		}
		o.Int = n
	}
	return o, nil
}

func (p *parser) signedInt() (int64, error) {
	neg := false
	if p.isPunct("-") {
		p.next()
		neg = true
	}
	t := p.next()
	if t.kind != tInt {
		return 0, p.errf(t, "expected an integer, found %s", describe(t))
	}
	if neg {
		return -t.ival, nil
	}
	return t.ival, nil
}

func (p *parser) function(link string) (*Function, error) {
	kw := p.next()
	f := &Function{Linkage: link, Entry: kw.text == "entry", Line: kw.line}
	if p.isPunct("(") {
		rets, err := p.params()
		if err != nil {
			return nil, err
		}
		f.Returns = rets
	}
	nt := p.next()
	if nt.kind != tIdent {
		return nil, p.errf(nt, "expected a function name, found %s", describe(nt))
	}
	f.Name = nt.text
	if p.isPunct("(") {
		ps, err := p.params()
		if err != nil {
			return nil, err
		}
		f.Params = ps
	}
	for p.peek().kind == tDir {
		d := p.next()
		if d.text == "loc" || d.text == "file" {
			p.pos--
			p.skipLine()
			continue
		}
		dir := Directive{Name: d.text}
		for p.peek().kind == tInt {
			dir.Args = append(dir.Args, p.next().ival)
			if p.isPunct(",") {
				p.next()
			}
		}
		f.Directives = append(f.Directives, dir)
	}
	if p.isPunct(";") {
		p.next()
		return f, nil
	}
	if _, err := p.expect("{"); err != nil {
		return nil, err
	}
	f.HasBody = true
	body, err := p.body()
	if err != nil {
		return nil, err
	}
	f.Body = body
	return f, nil
}

func (p *parser) params() ([]*Variable, error) {
	p.next() // (
	var ps []*Variable
	for !p.isPunct(")") {
		t := p.peek()
		if t.kind != tDir || !spaces[t.text] {
			return nil, p.errf(t, "expected a parameter, found %s", describe(t))
		}
		vs, err := p.variables("", false)
		if err != nil {
			return nil, err
		}
		if vs == nil {
			return nil, p.errf(t, "unsupported parameter type")
		}
		ps = append(ps, vs...)
		if p.isPunct(",") {
			p.next()
		} else if !p.isPunct(")") {
			return nil, p.errf(p.peek(), "expected ',' or ')' in parameter list, found %s", describe(p.peek()))
		}
	}
	p.next()
	return ps, nil
}

// body parses statements up to and including the closing '}'.
func (p *parser) body() ([]Statement, error) {
	var out []Statement
	for {
		t := p.peek()
		switch {
		case t.kind == tEOF:
			return nil, p.errf(t, "unexpected end of file in function body")
		case t.kind == tPunct && t.text == "}":
			p.next()
			return out, nil
		case t.kind == tPunct && t.text == "{":
			p.next()
			b, err := p.body()
			if err != nil {
				return nil, err
			}
			out = append(out, &Block{Body: b, Line: t.line})
		case t.kind == tDir:
			switch {
			case t.text == "loc" || t.text == "file":
				p.skipLine()
			case t.text == "pragma":
				p.next()
				s := p.next()
				if s.kind != tStr {
					return nil, p.errf(s, "expected a string after .pragma, found %s", describe(s))
				}
				if _, err := p.expect(";"); err != nil {
					return nil, err
				}
				out = append(out, &Pragma{Text: s.text, Line: t.line})
			case spaces[t.text]:
				vs, err := p.variables("", true)
				if err != nil {
					return nil, err
				}
				if vs == nil {
					r, err := p.raw()
					if err != nil {
						return nil, err
					}
					out = append(out, r)
				}
				for _, v := range vs {
					out = append(out, v)
				}
			default:
				return nil, p.errf(t, "unknown directive %s in function body", describe(t))
			}
		case t.kind == tIdent && p.peekN(1).kind == tPunct && p.peekN(1).text == ":":
			if d := p.peekN(2); d.kind == tDir && (d.text == "branchtargets" || d.text == "callprototype" || d.text == "calltargets") {
				r, err := p.raw()
				if err != nil {
					return nil, err
				}
				out = append(out, r)
				continue
			}
			p.next()
			p.next()
			out = append(out, &Label{Name: t.text, Line: t.line})
		case t.kind == tIdent || t.kind == tPunct && t.text == "@":
			in, err := p.instruction()
			if err != nil {
				return nil, err
			}
			out = append(out, in)
		default:
			return nil, p.errf(t, "unexpected %s in function body", describe(t))
		}
	}
}

func (p *parser) instruction() (*Instruction, error) {
	in := &Instruction{Line: p.peek().line}
	if p.isPunct("@") {
		p.next()
		g := &Guard{}
		if p.isPunct("!") {
			p.next()
			g.Neg = true
		}
		n := p.next()
		if n.kind != tIdent {
			return nil, p.errf(n, "expected a guard predicate, found %s", describe(n))
		}
		g.Pred = n.text
		in.Guard = g
	}
	op := p.next()
	if op.kind != tIdent {
		return nil, p.errf(op, "expected an instruction, found %s", describe(op))
	}
	if !opcodes[op.text] {
		return nil, p.errf(op, "unknown instruction %q", op.text)
	}
	in.Op, in.Line = op.text, op.line
	for p.peek().kind == tDir {
		in.Mods = append(in.Mods, p.next().text)
	}
	for !p.isPunct(";") {
		o, err := p.operand()
		if err != nil {
			return nil, err
		}
		in.Operands = append(in.Operands, o)
		if p.isPunct(",") {
			p.next()
			continue
		}
		if !p.isPunct(";") {
			return nil, p.errf(p.peek(), "expected ',' or ';' after operand of %s, found %s", in.Opcode(), describe(p.peek()))
		}
	}
	p.next()
	return in, nil
}

func (p *parser) operand() (Operand, error) {
	t := p.peek()
	switch t.kind {
	case tInt:
		p.next()
		return Operand{Kind: Int, Int: t.ival}, nil
	case tF32:
		p.next()
		return Operand{Kind: Float32, Bits: t.bits}, nil
	case tF64:
		p.next()
		return Operand{Kind: Float64, Bits: t.bits}, nil
	case tIdent:
		p.next()
		o := Operand{Kind: Name, Name: t.text}
		if p.isPunct("|") {
			p.next()
			q, err := p.operand()
			if err != nil {
				return o, err
			}
			return Operand{Kind: Pair, Elems: []Operand{o, q}}, nil
		}
		return p.nameOffset(o)
	case tPunct:
		switch t.text {
		case "-":
			p.next()
			n := p.next()
			switch n.kind {
			case tInt:
				return Operand{Kind: Int, Int: -n.ival}, nil
			case tF64:
				return Operand{Kind: Float64, Bits: n.bits ^ 1<<63}, nil
			case tF32:
				return Operand{Kind: Float32, Bits: n.bits ^ 1<<31}, nil
			}
			return Operand{}, p.errf(n, "expected a number after '-', found %s", describe(n))
		case "!":
			p.next()
			n := p.next()
			if n.kind != tIdent {
				return Operand{}, p.errf(n, "expected a predicate after '!', found %s", describe(n))
			}
			return Operand{Kind: Name, Name: n.text, Neg: true}, nil
		case "{", "(":
			p.next()
			closer, kind := "}", Vector
			if t.text == "(" {
				closer, kind = ")", List
			}
			o := Operand{Kind: kind}
			for !p.isPunct(closer) {
				e, err := p.operand()
				if err != nil {
					return o, err
				}
				o.Elems = append(o.Elems, e)
				if p.isPunct(",") {
					p.next()
				} else if !p.isPunct(closer) {
					return o, p.errf(p.peek(), "expected ',' or %q, found %s", closer, describe(p.peek()))
				}
			}
			p.next()
			if kind == Vector && len(o.Elems) == 0 {
				return o, p.errf(t, "empty vector operand")
			}
			return o, nil
		case "[":
			p.next()
			o := Operand{Kind: Address}
			b := p.peek()
			switch b.kind {
			case tIdent:
				p.next()
				o.Name = b.text
			case tInt:
				p.next()
				o.Int = b.ival
			default:
				return o, p.errf(b, "bad address %s", describe(b))
			}
			if p.isPunct("+") || p.isPunct("-") && o.Name != "" {
				neg := p.next().text == "-"
				n, err := p.signedInt()
				if err != nil {
					return o, err
				}
				if neg {
					n = -n
				}
				o.Int += n
			}
			for p.isPunct(",") {
				p.next()
				e, err := p.operand()
				if err != nil {
					return o, err
				}
				o.Elems = append(o.Elems, e)
			}
			if _, err := p.expect("]"); err != nil {
				return o, err
			}
			return o, nil
		}
	}
	return Operand{}, p.errf(t, "unexpected %s in operand", describe(t))
}
