package binding

import (
	"fmt"
	"math"
	"strings"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
)

// Shape is the problem size a binding is launched for. Hidden is
// Heads·HeadDim for the per-head contracts and RoPE; Heads and HeadDim are
// 0 for the others.
type Shape = op.Shape

func shapeValue(s Shape, name string) (int64, bool) {
	switch name {
	case "rows":
		return int64(s.Rows), true
	case "hidden":
		return int64(s.Hidden), true
	case "heads":
		return int64(s.Heads), true
	case "head_dim":
		return int64(s.HeadDim), true
	}
	return 0, false
}

func probeShape(o *opSpec) Shape {
	if perHead(o.contract) {
		return Shape{Rows: 1, Hidden: 2, Heads: 1, HeadDim: 2}
	}
	return Shape{Rows: 1, Hidden: 1}
}

// env returns the name lookup of expressions at s. A let is evaluated when
// it is used; stack detects a let that refers to itself.
func (b *Binding) env(s Shape, stack []string) func(string) (int64, error) {
	var look func(string) (int64, error)
	look = func(n string) (int64, error) {
		if v, ok := shapeValue(s, n); ok {
			return v, nil
		}
		if v, ok := b.consts[n]; ok {
			return v, nil
		}
		if e, ok := b.lets[n]; ok {
			for _, x := range stack {
				if x == n {
					return 0, fmt.Errorf("%s refers to itself (%s)", n, strings.Join(append(stack, n), " → "))
				}
			}
			stack = append(stack, n)
			v, err := e.eval(look)
			stack = stack[:len(stack)-1]
			return v, err
		}
		return 0, fmt.Errorf("unknown name %q", n)
	}
	return look
}

// accepts reports whether s meets every constraint of the binding; the
// error names the first one it fails, with its line.
func (b *Binding) accepts(s Shape) error {
	env := b.env(s, nil)
	for _, c := range b.constraints {
		v, err := c.e.eval(env)
		if err != nil {
			return &Error{File: b.Path, Line: c.line, Msg: fmt.Sprintf("constraint %q at %v: %v", c.src, s, err)}
		}
		if v == 0 {
			return &refusal{&Error{File: b.Path, Line: c.line, Msg: fmt.Sprintf("%v is outside the constraint %q", s, c.src)}}
		}
	}
	return nil
}

// refusal is a shape outside the constraints: an invalid binding input,
// and to a contract an invalid draw (properties.ErrShapeRefused).
type refusal struct{ err *Error }

func (r *refusal) Error() string   { return r.err.Error() }
func (r *refusal) Unwrap() []error { return []error{r.err, properties.ErrShapeRefused} }

// plan is everything a call needs that the shape fixes: each launch's
// geometry and integer parameters, each scratch buffer's length.
type plan struct {
	shape    Shape
	geometry []cudart.Geometry
	values   [][]uint64 // per launch, per param: the integer value (pValue, pStride, pScalar ints)
	scratch  []int
	stride   int // row stride of the strided tensors
	// inputs are the extra tables' [rows, cols], by name.
	inputs map[string][2]int
	// hostRows are the partial rows of each host sum.
	hostRows []int
}

func (b *Binding) evalAt(s Shape, e expr, line int, what string) (int64, error) {
	v, err := e.eval(b.env(s, nil))
	if err != nil {
		return 0, &Error{File: b.Path, Line: line, Msg: fmt.Sprintf("%s at %v: %v", what, s, err)}
	}
	return v, nil
}

// plan checks s against the constraints and evaluates the binding at s;
// every geometry is checked against the hardware limits before any launch.
func (b *Binding) plan(s Shape) (*plan, error) {
	if err := b.accepts(s); err != nil {
		return nil, err
	}
	p := &plan{shape: s, stride: s.Hidden}
	if b.rowStride != nil {
		v, err := b.evalAt(s, b.rowStride, b.rowLine, "row_stride")
		if err != nil {
			return nil, err
		}
		if v < int64(s.Hidden) || v > 1<<31-1 {
			return nil, &Error{File: b.Path, Line: b.rowLine, Msg: fmt.Sprintf("row_stride = %d at %v, want hidden..2^31-1", v, s)}
		}
		p.stride = int(v)
	}
	limit := scratchCap(s, p.stride)
	for _, sc := range b.scratch {
		n, err := b.evalAt(s, sc.size, sc.line, "scratch "+sc.name+" size")
		if err != nil {
			return nil, err
		}
		if n < 1 || n > limit {
			return nil, &Error{File: b.Path, Line: sc.line, Msg: fmt.Sprintf("scratch %s has %d elements at %v, want 1..%d (the larger of %d × the largest tensor's %d elements and %d)",
				sc.name, n, s, limit, ScratchPerTensor, int64(s.Rows)*int64(p.stride), ScratchFloor)}
		}
		p.scratch = append(p.scratch, int(n))
	}
	p.inputs = map[string][2]int{}
	for _, name := range sortedKeys(b.inputs) {
		in := b.inputs[name]
		r, err := b.evalAt(s, in.rows, in.line, "inputs "+name+" shape[0]")
		if err != nil {
			return nil, err
		}
		c, err := b.evalAt(s, in.cols, in.line, "inputs "+name+" shape[1]")
		if err != nil {
			return nil, err
		}
		if c < 1 || r*c > limit {
			return nil, &Error{File: b.Path, Line: in.line, Msg: fmt.Sprintf("inputs %s is [%d, %d] at %v, want 1..%d columns and elements", name, r, c, s, limit)}
		}
		p.inputs[name] = [2]int{int(r), int(c)}
	}
	for _, h := range b.hostSums {
		r, err := b.evalAt(s, h.rows, h.line, "host_sums "+h.into+" rows")
		if err != nil {
			return nil, err
		}
		n := int64(s.Hidden)
		if b.op.tensors[h.into].size == "head_dim" {
			n = int64(s.HeadDim)
		}
		have := 0
		for i, sc := range b.scratch {
			if sc.name == h.from {
				have = p.scratch[i]
			}
		}
		if r < 1 || r*n > int64(have) {
			return nil, &Error{File: b.Path, Line: h.line, Msg: fmt.Sprintf("host_sums %s: %d partial rows of %d at %v, but scratch %s holds %d elements", h.into, r, n, s, h.from, have)}
		}
		p.hostRows = append(p.hostRows, int(r))
	}
	for _, ln := range b.launches {
		var dims [6]int64
		for i, e := range append(ln.grid[:], ln.block[:]...) {
			what := fmt.Sprintf("%s grid[%d]", ln.entry, i)
			if i >= 3 {
				what = fmt.Sprintf("%s block[%d]", ln.entry, i-3)
			}
			v, err := b.evalAt(s, e, ln.dimLines[i], what)
			if err != nil {
				return nil, err
			}
			dims[i] = v
		}
		sh, err := b.evalAt(s, ln.shared, ln.dimLines[6], ln.entry+" shared")
		if err != nil {
			return nil, err
		}
		if err := b.checkGeometry(ln, s, dims, sh); err != nil {
			return nil, err
		}
		p.geometry = append(p.geometry, cudart.Geometry{
			Grid:        cudart.Dim3{X: uint32(dims[0]), Y: uint32(dims[1]), Z: uint32(dims[2])},
			Block:       cudart.Dim3{X: uint32(dims[3]), Y: uint32(dims[4]), Z: uint32(dims[5])},
			SharedBytes: int(sh)})
		vals := make([]uint64, len(ln.params))
		for i, pr := range ln.params {
			var v int64
			switch pr.kind {
			case pValue:
				if v, err = b.evalAt(s, pr.e, pr.line, fmt.Sprintf("%s param %d (%s)", ln.entry, pr.index, pr.ptxName)); err != nil {
					return nil, err
				}
			case pStride:
				v = int64(p.stride)
				if b.op.tensors[pr.name].size != rowsHidden {
					v = 0 // a vector's stride: it has one row
				}
			case pScalar:
				if sv, ok := shapeValue(s, pr.name); ok {
					v = sv
				} else {
					continue
				}
			default:
				continue
			}
			if pr.kindC.Size() == 4 && (v < -1<<31 || v > 1<<32-1) {
				return nil, &Error{File: b.Path, Line: pr.line, Msg: fmt.Sprintf("%s param %d (%s .%s) = %d at %v does not fit 32 bits", ln.entry, pr.index, pr.ptxName, pr.ptxType, v, s)}
			}
			vals[i] = uint64(v)
			if pr.kindC.Size() == 4 {
				vals[i] &= 1<<32 - 1
			}
		}
		p.values = append(p.values, vals)
	}
	return p, nil
}

func (b *Binding) checkGeometry(ln *launch, s Shape, d [6]int64, shared int64) error {
	// bad names the line of field i (grid 0..2, block 3..5, shared 6).
	bad := func(i int, format string, args ...any) error {
		return &Error{File: b.Path, Line: ln.dimLines[i], Msg: fmt.Sprintf("%s at %v: impossible launch: ", ln.entry, s) + fmt.Sprintf(format, args...)}
	}
	for i, v := range d {
		what := [...]string{"grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"}[i]
		if v < 1 {
			return bad(i, "%s = %d, want at least 1", what, v)
		}
	}
	threads, ok := arith("*", d[3], d[4])
	if t, ok2 := arith("*", threads, d[5]); ok && ok2 {
		threads = t
	} else {
		threads = math.MaxInt64 // more than any limit
	}
	switch {
	case d[0] > maxGridX:
		return bad(0, "grid.x = %d, more than %d", d[0], maxGridX)
	case d[1] > maxGridYZ || d[2] > maxGridYZ:
		i := 2
		if d[1] > maxGridYZ {
			i = 1
		}
		return bad(i, "grid = (%d, %d, %d): y and z are at most %d", d[0], d[1], d[2], maxGridYZ)
	case d[5] > maxBlockZ:
		return bad(5, "block.z = %d, more than %d", d[5], maxBlockZ)
	case threads > MaxBlockThreads:
		return bad(3, "block = (%d, %d, %d) is %d threads, more than %d", d[3], d[4], d[5], threads, MaxBlockThreads)
	case ln.reqntid != nil && !sameDims(ln.reqntid, d[3:]):
		return bad(3, "block = (%d, %d, %d), but the entry requires .reqntid %s", d[3], d[4], d[5], dimList(ln.reqntid))
	case ln.maxntid != nil && threads > product(ln.maxntid):
		return bad(3, "block = (%d, %d, %d) is %d threads, but the entry allows .maxntid %s", d[3], d[4], d[5], threads, dimList(ln.maxntid))
	case shared < 0:
		return bad(6, "shared = %d bytes", shared)
	case shared > MaxSharedBytes || shared+int64(ln.static) > MaxSharedBytes:
		return bad(6, "%d bytes of dynamic shared memory plus %d static are more than %d", shared, ln.static, MaxSharedBytes)
	}
	return nil
}

// Scratch buffers are capped, so that a size expression that grows faster
// than the problem (hidden·hidden·hidden) is a binding error at the shape
// where it passes the cap, found before anything is allocated: a scratch
// buffer holds at most ScratchPerTensor times the elements of the shape's
// largest tensor (rows·hidden, or rows·row_stride), or ScratchFloor
// elements where that is more. Per-block partial sums (one row of hidden
// per block, blocks ≤ rows) and lock words stay well within it.
const (
	ScratchPerTensor = 256
	ScratchFloor     = 1 << 22
)

// scratchCap is the most elements a scratch buffer may have at s.
func scratchCap(s Shape, stride int) int64 {
	return min(max(ScratchPerTensor*int64(s.Rows)*int64(stride), ScratchFloor), 1<<31-1)
}

// sameDims reports whether a directive's extents (missing ones are 1) are
// the block's.
func sameDims(dir []int64, block []int64) bool {
	for i := range 3 {
		want := int64(1)
		if i < len(dir) {
			want = dir[i]
		}
		if block[i] != want {
			return false
		}
	}
	return true
}

func product(dir []int64) int64 {
	n := int64(1)
	for _, v := range dir {
		n *= v
	}
	return n
}

func dimList(dir []int64) string {
	var s []string
	for _, v := range dir {
		s = append(s, fmt.Sprint(v))
	}
	return strings.Join(s, ", ")
}
