package emu

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/ptx"
)

// State spaces of a memory access.
const (
	spGeneric uint8 = iota
	spGlobal
	spShared
	spLocal
	spConst
	spParam
)

var spaceNames = [...]string{"generic", "global", "shared", "local", "const", "param"}

// module is a loaded PTX module.
type module struct {
	name      string
	globals   map[string]*allocation
	constBank []byte
	consts    map[string]symbol
	shared    []*ptx.Variable // module-scope static .shared variables
	dynShared *ptx.Variable   // module-scope .extern .shared
	funcs     map[string]*ptx.Function
	kernels   map[string]*kernel
	sum       [32]byte // SHA-256 of the PTX text
}

// symbol is a variable's address in its state space.
type symbol struct {
	space uint8
	addr  uint64
	size  int
}

// generic returns the symbol's generic address.
func (s symbol) generic() uint64 {
	switch s.space {
	case spShared:
		return sharedWindow + s.addr
	case spLocal:
		return localWindow + s.addr
	case spConst:
		return constWindow + s.addr
	case spParam:
		return paramWindow + s.addr
	}
	return s.addr
}

func alignUp(n, a int) int {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

func varAlign(v *ptx.Variable) int {
	if v.Align > 0 {
		return v.Align
	}
	return max(v.Size(), 1)
}

func loadModule(mem *globalMem, name string, src []byte) (m *module, err error) {
	ast, err := ptx.Parse(src)
	if err != nil {
		return nil, cudart.Errorf(cudart.ErrInvalid, "module %s: %v", name, err)
	}
	mod := &module{name: name, globals: map[string]*allocation{}, consts: map[string]symbol{}, funcs: map[string]*ptx.Function{}, kernels: map[string]*kernel{}}
	m = mod
	defer func() {
		if err != nil {
			for _, a := range mod.globals {
				mem.free(a.base)
			}
		}
	}()
	type initJob struct {
		v    *ptx.Variable
		data []byte
	}
	var inits []initJob
	for _, it := range ast.Items {
		switch it := it.(type) {
		case *ptx.Function:
			if it.HasBody {
				m.funcs[it.Name] = it
			}
		case *ptx.Variable:
			v := it
			if v.Linkage == "extern" && v.Space != "shared" {
				return nil, cudart.Errorf(cudart.ErrInvalid, "module %s, PTX line %d: external %s variable %s is not defined in this module", name, v.Line, v.Space, v.Name)
			}
			switch v.Space {
			case "global":
				n := v.Size() * v.Elements()
				if n <= 0 {
					return nil, cudart.Errorf(cudart.ErrInvalid, "module %s, PTX line %d: global variable %s has no size", name, v.Line, v.Name)
				}
				a := mem.alloc(n, false)
				a.moduleGlobal = v.Name
				m.globals[v.Name] = a
				inits = append(inits, initJob{v, a.data})
			case "const":
				n := v.Size() * v.Elements()
				off := alignUp(len(m.constBank), varAlign(v))
				m.constBank = append(m.constBank, make([]byte, off+n-len(m.constBank))...)
				m.consts[v.Name] = symbol{spConst, uint64(off), n}
				inits = append(inits, initJob{v, m.constBank[off : off+n]})
			case "shared":
				if v.Linkage == "extern" || v.Elements() == 0 {
					m.dynShared = v
				} else {
					m.shared = append(m.shared, v)
				}
			default:
				return nil, cudart.Errorf(cudart.ErrInvalid, "module %s, PTX line %d: module-scope .%s variable %s is not supported", name, v.Line, v.Space, v.Name)
			}
		}
	}
	for _, j := range inits {
		if err := m.initVariable(j.v, j.data); err != nil {
			return nil, err
		}
	}
	for _, f := range ast.Entries() {
		if err := checkDirectives(f); err != nil {
			return nil, cudart.Errorf(cudart.ErrInvalid, "module %s, kernel %s, PTX line %d: %v", name, f.Name, f.Line, err)
		}
		k, err := decodeKernel(m, f)
		if err != nil {
			return nil, err
		}
		m.kernels[f.Name] = k
	}
	return m, nil
}

// initVariable writes a variable's initialiser into data.
func (m *module) initVariable(v *ptx.Variable, data []byte) error {
	if len(v.Init) == 0 {
		return nil
	}
	t, ok := parseType(v.Type)
	if !ok {
		return cudart.Errorf(cudart.ErrInvalid, "module %s, PTX line %d: variable %s: unsupported type .%s", m.name, v.Line, v.Name, v.Type)
	}
	es := int(t.n)
	if len(v.Init)*es > len(data) {
		return cudart.Errorf(cudart.ErrInvalid, "module %s, PTX line %d: variable %s: %d initialisers for %d bytes", m.name, v.Line, v.Name, len(v.Init), len(data))
	}
	for i, o := range v.Init {
		var bits uint64
		switch o.Kind {
		case ptx.Name:
			s, ok := m.symbolAddr(o.Name)
			if !ok {
				return cudart.Errorf(cudart.ErrInvalid, "module %s, PTX line %d: variable %s: unknown symbol %s in initialiser", m.name, v.Line, v.Name, o.Name)
			}
			bits = s.addr + uint64(o.Int)
			if o.Generic {
				bits = s.generic() + uint64(o.Int)
			}
		default:
			b, err := immBits(o, t)
			if err != nil {
				return cudart.Errorf(cudart.ErrInvalid, "module %s, PTX line %d: variable %s: %v", m.name, v.Line, v.Name, err)
			}
			bits = b
		}
		putBits(data[i*es:], es, bits)
	}
	return nil
}

// symbolAddr resolves a module-scope global or const variable.
func (m *module) symbolAddr(name string) (symbol, bool) {
	if a, ok := m.globals[name]; ok {
		return symbol{spGlobal, a.base, len(a.data)}, true
	}
	s, ok := m.consts[name]
	return s, ok
}

func putBits(b []byte, n int, v uint64) {
	switch n {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	case 8:
		binary.LittleEndian.PutUint64(b, v)
	}
}

func getBits(b []byte, n int) uint64 {
	switch n {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	case 8:
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// dtype is a PTX fundamental type: kind and size in bytes.
type dtype struct {
	k byte // 'b', 'u', 's', 'f', 'h' (f16), 'H' (bf16), 'x' (f16x2), 'X' (bf16x2), 'p' (pred)
	n uint8
}

func parseType(s string) (dtype, bool) {
	switch s {
	case "pred":
		return dtype{'p', 1}, true
	case "f16":
		return dtype{'h', 2}, true
	case "bf16":
		return dtype{'H', 2}, true
	case "f16x2":
		return dtype{'x', 4}, true
	case "bf16x2":
		return dtype{'X', 4}, true
	}
	if len(s) < 2 || ptx.TypeSize(s) == 0 || strings.Contains(s, "x") { // packed pairs other than f16x2/bf16x2
		return dtype{}, false
	}
	switch s[0] {
	case 'b', 'u', 's', 'f':
		return dtype{s[0], uint8(ptx.TypeSize(s))}, true
	}
	return dtype{}, false
}

func (t dtype) String() string {
	switch t.k {
	case 'p':
		return "pred"
	case 'h':
		return "f16"
	case 'H':
		return "bf16"
	case 'x':
		return "f16x2"
	case 'X':
		return "bf16x2"
	}
	return fmt.Sprintf("%c%d", t.k, int(t.n)*8)
}

func (t dtype) bits() uint   { return uint(t.n) * 8 }
func (t dtype) signed() bool { return t.k == 's' }
func (t dtype) isFloat() bool {
	return t.k == 'f' || t.k == 'h' || t.k == 'H' || t.k == 'x' || t.k == 'X'
}
func (t dtype) mask() uint64          { return ^uint64(0) >> (64 - t.bits()) }
func (t dtype) trunc(v uint64) uint64 { return v & t.mask() }

// ext sign- or zero-extends the low bits of v to 64 bits.
func (t dtype) ext(v uint64) uint64 {
	if t.k == 's' {
		s := 64 - t.bits()
		return uint64(int64(v<<s) >> s)
	}
	return v & t.mask()
}

// immBits converts an immediate operand to the bits of type t.
func immBits(o ptx.Operand, t dtype) (uint64, error) {
	switch o.Kind {
	case ptx.Int:
		switch t.k {
		case 'f':
			if t.n == 4 {
				return uint64(math.Float32bits(float32(o.Int))), nil
			}
			return math.Float64bits(float64(o.Int)), nil
		case 'p':
			if o.Int != 0 {
				return 1, nil
			}
			return 0, nil
		}
		return uint64(o.Int) & t.mask(), nil
	case ptx.Float32:
		f := float64(math.Float32frombits(uint32(o.Bits)))
		switch {
		case t.k == 'f' && t.n == 8:
			return math.Float64bits(f), nil
		case t.k == 'h':
			return uint64(roundF16(f, 0, rn)), nil
		case t.k == 'H':
			return uint64(roundBF16(f, 0, rn)), nil
		}
		return o.Bits & t.mask(), nil
	case ptx.Float64:
		f := math.Float64frombits(o.Bits)
		switch {
		case t.k == 'f' && t.n == 4, t.n == 4 && t.k != 'x' && t.k != 'X':
			return uint64(round32(f, 0, rn)), nil
		case t.k == 'h':
			return uint64(roundF16(f, 0, rn)), nil
		case t.k == 'H':
			return uint64(roundBF16(f, 0, rn)), nil
		}
		return o.Bits & t.mask(), nil
	}
	return 0, fmt.Errorf("operand %v is not an immediate", o)
}

// checkDirectives refuses the kernel directives whose meaning the emulator
// does not model: thread block clusters of more than one CTA.
func checkDirectives(f *ptx.Function) error {
	for _, dir := range f.Directives {
		switch dir.Name {
		case "explicitcluster":
			return fmt.Errorf(".explicitcluster: cluster launches are not supported")
		case "reqnctapercluster", "maxclusterrank":
			n := int64(1)
			for _, a := range dir.Args {
				n *= a
			}
			if n != 1 {
				return fmt.Errorf(".%s %v: clusters of more than one CTA are not supported", dir.Name, dir.Args)
			}
		}
	}
	return nil
}
