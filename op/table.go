package op

import (
	"fmt"
	"reflect"
	"slices"
)

// Role says whether an operation reads or writes a tensor.
type Role uint8

// The roles.
const (
	In Role = iota + 1
	Out
)

func (r Role) String() string {
	switch r {
	case In:
		return "in"
	case Out:
		return "out"
	}
	return "?"
}

// Layout says how a tensor depends on the rows of the problem. Every
// operation here is row-wise: row r of each Row output depends on row r of
// the Row inputs and on the Shared inputs only, so a batch may be split,
// permuted or run one row at a time. A ColumnSum output is a sum over all
// rows, the one dependence across rows (the weight gradients dγ, dβ).
type Layout uint8

// The layouts.
const (
	Row       Layout = iota + 1 // [Rows][cols], one row per problem row
	Shared                      // [cols], the same for every row (γ, β)
	ColumnSum                   // output [cols]: a sum over all rows
)

func (l Layout) String() string {
	switch l {
	case Row:
		return "row"
	case Shared:
		return "shared"
	case ColumnSum:
		return "column-sum"
	}
	return "?"
}

// Cols is the extent of a tensor along its columns: per row for a Row
// tensor, in all for a Shared or ColumnSum one.
type Cols uint8

// The column extents.
const (
	Hidden  Cols = iota + 1 // Shape.Hidden (Heads·HeadDim for per-head operations)
	HeadDim                 // Shape.HeadDim
	One                     // one value (a per-row statistic or position)
)

// Of returns the extent for s.
func (c Cols) Of(s Shape) int {
	switch c {
	case Hidden:
		return s.Hidden
	case HeadDim:
		return s.HeadDim
	case One:
		return 1
	}
	return 0
}

func (c Cols) String() string {
	switch c {
	case Hidden:
		return "hidden"
	case HeadDim:
		return "head_dim"
	case One:
		return "1"
	}
	return "?"
}

// Tensor describes one slice field of an operation's arguments.
type Tensor struct {
	Name   string // role name, e.g. "x", "dgamma", "residual_out"
	Field  string // the Go field of the argument struct, e.g. "DGamma"
	Kind   string // element type: "f32" or "u32"
	Role   Role
	Layout Layout
	Cols   Cols
	// Optional tensors may be nil: an output that is then not computed, an
	// input that is then not used (RoPE's Positions with one shared Pos).
	Optional bool
}

// Len returns the number of elements the tensor has for s.
func (t Tensor) Len(s Shape) int {
	n := t.Cols.Of(s)
	if t.Layout == Row {
		n *= s.Rows
	}
	return n
}

// Op is one operation with argument type A: its name and the tensors of A
// in the order they are listed in the table.
type Op[A any] struct {
	name                         string
	tensors                      []Tensor
	field                        []int // index of each tensor's field in A
	rows, hidden, heads, headDim int   // field indices in A; -1 when absent
	offsets                      int   // index of A's Offsets field
}

// Operation is what every Op has, whatever its argument type.
type Operation interface {
	Name() string
	Tensors() []Tensor
	// Args returns the argument type's name, e.g. "RMSNormForwardArgs".
	Args() string
	// Scalars returns the names of the scalar arguments: the shape
	// ("rows", "hidden", or "heads", "head_dim" and their product
	// "hidden") and the numeric parameters ("eps", "theta", "pos").
	Scalars() []string
	// PerHead reports whether the shape is Heads·HeadDim.
	PerHead() bool
}

// Name returns the operation's name, e.g. "rmsnorm.forward".
func (o *Op[A]) Name() string { return o.name }

// Tensors returns the operation's tensors in table order.
func (o *Op[A]) Tensors() []Tensor { return append([]Tensor(nil), o.tensors...) }

// Args returns the argument type's name.
func (o *Op[A]) Args() string { return reflect.TypeFor[A]().Name() }

func (o *Op[A]) String() string { return o.name }

// Scalars returns the snake_case names of A's numeric non-slice fields in
// field order, with "hidden" after "head_dim" for a per-head operation.
func (o *Op[A]) Scalars() []string {
	var out []string
	t := reflect.TypeFor[A]()
	for i := range t.NumField() {
		switch t.Field(i).Type.Kind() {
		case reflect.Int, reflect.Uint32, reflect.Float32:
		default:
			continue
		}
		out = append(out, snake(t.Field(i).Name))
		if i == o.headDim {
			out = append(out, "hidden")
		}
	}
	return out
}

// snake returns a Go field name in snake case: HeadDim → head_dim.
func snake(name string) string {
	var b []byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			if i > 0 && !('A' <= name[i-1] && name[i-1] <= 'Z') {
				b = append(b, '_')
			}
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}

// define builds an Op from its tensors, resolving each Field in A. A table
// row that names a missing field, or one of the wrong type, is a
// programming error and panics at init.
func define[A any](name string, tensors ...Tensor) *Op[A] {
	t := reflect.TypeFor[A]()
	o := &Op[A]{name: name, tensors: tensors}
	index := func(f string) int {
		sf, ok := t.FieldByName(f)
		if !ok {
			return -1
		}
		if sf.Type.Kind() != reflect.Int {
			panic(fmt.Sprintf("op: %s: %s.%s is %v, want int", name, t.Name(), f, sf.Type))
		}
		return sf.Index[0]
	}
	o.rows, o.hidden, o.heads, o.headDim = index("Rows"), index("Hidden"), index("Heads"), index("HeadDim")
	if sf, ok := t.FieldByName("Offsets"); !ok || sf.Type != reflect.TypeFor[Offsets]() {
		panic(fmt.Sprintf("op: %s: %s needs an Offsets field of type op.Offsets", name, t.Name()))
	} else {
		o.offsets = sf.Index[0]
	}
	if o.rows < 0 || (o.hidden < 0) == (o.heads < 0 || o.headDim < 0) {
		panic(fmt.Sprintf("op: %s: %s needs Rows and either Hidden or Heads and HeadDim", name, t.Name()))
	}
	for _, x := range tensors {
		sf, ok := t.FieldByName(x.Field)
		want := map[string]reflect.Type{"f32": reflect.TypeFor[[]float32](), "u32": reflect.TypeFor[[]uint32]()}[x.Kind]
		if !ok || want == nil || sf.Type != want || (x.Role == Out && x.Kind != "f32") {
			panic(fmt.Sprintf("op: %s: tensor %q: no %s field %s.%s", name, x.Name, x.Kind, t.Name(), x.Field))
		}
		o.field = append(o.field, sf.Index[0])
	}
	return o
}

func (o *Op[A]) int(a *A, i int) int {
	if i < 0 {
		return 0
	}
	return int(reflect.ValueOf(a).Elem().Field(i).Int())
}

// Shape returns a's problem size. For per-head operations Hidden is
// Heads·HeadDim.
func (o *Op[A]) Shape(a *A) Shape {
	s := Shape{Rows: o.int(a, o.rows), Hidden: o.int(a, o.hidden), Heads: o.int(a, o.heads), HeadDim: o.int(a, o.headDim)}
	if o.hidden < 0 {
		s.Hidden = s.Heads * s.HeadDim
	}
	return s
}

// New returns arguments of shape s (Hidden is ignored for a per-head
// operation: Heads·HeadDim) with every tensor, optional ones included,
// allocated and zero, and every scalar zero.
func (o *Op[A]) New(s Shape) *A {
	a := new(A)
	v := reflect.ValueOf(a).Elem()
	v.Field(o.rows).SetInt(int64(s.Rows))
	if o.PerHead() {
		v.Field(o.heads).SetInt(int64(s.Heads))
		v.Field(o.headDim).SetInt(int64(s.HeadDim))
	} else {
		v.Field(o.hidden).SetInt(int64(s.Hidden))
	}
	s = o.Shape(a)
	for i, t := range o.tensors {
		if t.Kind == "u32" {
			*o.U32(a, i) = make([]uint32, t.Len(s))
		} else {
			*o.F32(a, i) = make([]float32, t.Len(s))
		}
	}
	return a
}

// SetScalar sets the numeric parameter called name (one of Scalars, not a
// shape dimension) to x, converted to its field's type; false when A has
// no such parameter.
func (o *Op[A]) SetScalar(a *A, name string, x float64) bool {
	t := reflect.TypeFor[A]()
	v := reflect.ValueOf(a).Elem()
	for i := range t.NumField() {
		if snake(t.Field(i).Name) != name || i == o.rows || i == o.hidden || i == o.heads || i == o.headDim {
			continue
		}
		switch t.Field(i).Type.Kind() {
		case reflect.Float32:
			v.Field(i).SetFloat(x)
			return true
		case reflect.Uint32:
			v.Field(i).SetUint(uint64(x))
			return true
		}
	}
	return false
}

// PerHead reports whether A has Heads and HeadDim (then Hidden is their
// product) rather than Hidden.
func (o *Op[A]) PerHead() bool { return o.heads >= 0 }

// F32 returns a pointer to the float32 slice of tensor i (table order).
func (o *Op[A]) F32(a *A, i int) *[]float32 {
	return reflect.ValueOf(a).Elem().Field(o.field[i]).Addr().Interface().(*[]float32)
}

// U32 returns a pointer to the uint32 slice of tensor i (table order).
func (o *Op[A]) U32(a *A, i int) *[]uint32 {
	return reflect.ValueOf(a).Elem().Field(o.field[i]).Addr().Interface().(*[]uint32)
}

// Len returns the length of tensor i's slice in a.
func (o *Op[A]) Len(a *A, i int) int {
	return reflect.ValueOf(a).Elem().Field(o.field[i]).Len()
}

// IsNil reports whether tensor i's slice in a is nil.
func (o *Op[A]) IsNil(a *A, i int) bool {
	return reflect.ValueOf(a).Elem().Field(o.field[i]).IsNil()
}

// Offsets returns a's tensor offsets (nil: all aligned).
func (o *Op[A]) Offsets(a *A) Offsets {
	return reflect.ValueOf(a).Elem().Field(o.offsets).Interface().(Offsets)
}

// SetOffsets sets a's tensor offsets.
func (o *Op[A]) SetOffsets(a *A, off Offsets) {
	reflect.ValueOf(a).Elem().Field(o.offsets).Set(reflect.ValueOf(off))
}

// Offset returns the element offset of tensor i (table order) in a.
func (o *Op[A]) Offset(a *A, i int) int { return o.Offsets(a)[o.tensors[i].Name] }

// CheckOffsets returns one line for every offset of a that names no
// tensor of the operation or lies outside 0..MaxOffset.
func (o *Op[A]) CheckOffsets(a *A) []string { return CheckOffsets(o, o.Offsets(a)) }

// CheckOffsets returns one line for every offset in off that names no
// tensor of o or lies outside 0..MaxOffset.
func CheckOffsets(o Operation, off Offsets) []string {
	var bad []string
	ts := o.Tensors()
	for _, name := range sortedNames(off) {
		switch k := off[name]; {
		case !slices.ContainsFunc(ts, func(t Tensor) bool { return t.Name == name }):
			bad = append(bad, fmt.Sprintf("offset of %q: %s has no such tensor", name, o.Name()))
		case k < 0 || k > MaxOffset:
			bad = append(bad, fmt.Sprintf("offset of %s=%d, want 0..%d", name, k, MaxOffset))
		}
	}
	return bad
}

func sortedNames(m Offsets) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Lengths returns one line for every tensor of a whose length does not
// match a's shape ("len(X)=7, want 8"; an optional one may also be nil).
func (o *Op[A]) Lengths(a *A) []string {
	s := o.Shape(a)
	var bad []string
	for i, t := range o.tensors {
		got, want := o.Len(a, i), t.Len(s)
		switch {
		case t.Optional && o.IsNil(a, i), got == want:
		case t.Optional:
			bad = append(bad, fmt.Sprintf("len(%s)=%d, want %d or nil", t.Field, got, want))
		default:
			bad = append(bad, fmt.Sprintf("len(%s)=%d, want %d", t.Field, got, want))
		}
	}
	return bad
}

// Outputs returns a's output slices in table order (nil where an optional
// output is not requested).
func (o *Op[A]) Outputs(a *A) [][]float32 {
	var out [][]float32
	for i, t := range o.tensors {
		if t.Role == Out {
			out = append(out, *o.F32(a, i))
		}
	}
	return out
}

// Fresh returns a copy of a that shares its inputs and has new zeroed
// outputs of the same lengths (nil stays nil).
func (o *Op[A]) Fresh(a *A) *A {
	b := *a
	for i, t := range o.tensors {
		if t.Role == Out && !o.IsNil(a, i) {
			*o.F32(&b, i) = make([]float32, o.Len(a, i))
		}
	}
	return &b
}

// SelectRows returns a problem of len(idx) rows: row j of every Row input
// is row idx[j] of a's, Shared inputs are a's, and every output a
// requests is new and sized for the new shape.
func (o *Op[A]) SelectRows(a *A, idx []int) *A {
	b := *a
	reflect.ValueOf(&b).Elem().Field(o.rows).SetInt(int64(len(idx)))
	s := o.Shape(&b)
	for i, t := range o.tensors {
		if o.IsNil(a, i) {
			continue
		}
		c := t.Cols.Of(s)
		switch {
		case t.Role == Out:
			*o.F32(&b, i) = make([]float32, t.Len(s))
		case t.Layout == Row && t.Kind == "u32":
			*o.U32(&b, i) = gather(*o.U32(a, i), c, idx)
		case t.Layout == Row:
			*o.F32(&b, i) = gather(*o.F32(a, i), c, idx)
		}
	}
	return &b
}

func gather[T any](data []T, cols int, idx []int) []T {
	out := make([]T, 0, len(idx)*cols)
	for _, r := range idx {
		out = append(out, data[r*cols:(r+1)*cols]...)
	}
	return out
}

// ByRow returns a's outputs as one slice: for every row, the row of each
// requested Row output in table order (cols values per row in all),
// followed by the ColumnSum outputs.
func (o *Op[A]) ByRow(a *A) (out []float32, cols int) {
	s := o.Shape(a)
	var rowOut, colOut [][]float32
	var widths []int
	for i, t := range o.tensors {
		if t.Role != Out || o.IsNil(a, i) {
			continue
		}
		if t.Layout == Row {
			rowOut, widths = append(rowOut, *o.F32(a, i)), append(widths, t.Cols.Of(s))
			cols += t.Cols.Of(s)
		} else {
			colOut = append(colOut, *o.F32(a, i))
		}
	}
	for r := 0; r < s.Rows; r++ {
		for j, d := range rowOut {
			out = append(out, d[r*widths[j]:(r+1)*widths[j]]...)
		}
	}
	for _, d := range colOut {
		out = append(out, d...)
	}
	return out, cols
}

// The table: every operation once; its tensors, inputs before outputs.
var (
	RMSNormForward = define[RMSNormForwardArgs]("rmsnorm.forward",
		Tensor{Name: "x", Field: "X", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "gamma", Field: "Gamma", Kind: "f32", Role: In, Layout: Shared, Cols: Hidden},
		Tensor{Name: "y", Field: "Y", Kind: "f32", Role: Out, Layout: Row, Cols: Hidden},
		Tensor{Name: "rms", Field: "RMS", Kind: "f32", Role: Out, Layout: Row, Cols: One, Optional: true})
	RMSNormBackward = define[RMSNormBackwardArgs]("rmsnorm.backward",
		Tensor{Name: "x", Field: "X", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "gamma", Field: "Gamma", Kind: "f32", Role: In, Layout: Shared, Cols: Hidden},
		Tensor{Name: "rms", Field: "RMS", Kind: "f32", Role: In, Layout: Row, Cols: One},
		Tensor{Name: "dy", Field: "DY", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "dx", Field: "DX", Kind: "f32", Role: Out, Layout: Row, Cols: Hidden},
		Tensor{Name: "dgamma", Field: "DGamma", Kind: "f32", Role: Out, Layout: ColumnSum, Cols: Hidden})
	FusedResidualRMSNorm = define[FusedResidualRMSNormArgs]("fused_residual_rmsnorm",
		Tensor{Name: "residual", Field: "Residual", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "x", Field: "X", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "gamma", Field: "Gamma", Kind: "f32", Role: In, Layout: Shared, Cols: Hidden},
		Tensor{Name: "y", Field: "Y", Kind: "f32", Role: Out, Layout: Row, Cols: Hidden},
		Tensor{Name: "residual_out", Field: "ResidualOut", Kind: "f32", Role: Out, Layout: Row, Cols: Hidden})
	LayerNormForward = define[LayerNormForwardArgs]("layernorm.forward",
		Tensor{Name: "x", Field: "X", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "gamma", Field: "Gamma", Kind: "f32", Role: In, Layout: Shared, Cols: Hidden},
		Tensor{Name: "beta", Field: "Beta", Kind: "f32", Role: In, Layout: Shared, Cols: Hidden},
		Tensor{Name: "y", Field: "Y", Kind: "f32", Role: Out, Layout: Row, Cols: Hidden},
		Tensor{Name: "mean", Field: "Mean", Kind: "f32", Role: Out, Layout: Row, Cols: One, Optional: true},
		Tensor{Name: "rstd", Field: "Rstd", Kind: "f32", Role: Out, Layout: Row, Cols: One, Optional: true})
	LayerNormBackward = define[LayerNormBackwardArgs]("layernorm.backward",
		Tensor{Name: "x", Field: "X", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "gamma", Field: "Gamma", Kind: "f32", Role: In, Layout: Shared, Cols: Hidden},
		Tensor{Name: "dy", Field: "DY", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "mean", Field: "Mean", Kind: "f32", Role: In, Layout: Row, Cols: One},
		Tensor{Name: "rstd", Field: "Rstd", Kind: "f32", Role: In, Layout: Row, Cols: One},
		Tensor{Name: "dx", Field: "DX", Kind: "f32", Role: Out, Layout: Row, Cols: Hidden},
		Tensor{Name: "dgamma", Field: "DGamma", Kind: "f32", Role: Out, Layout: ColumnSum, Cols: Hidden},
		Tensor{Name: "dbeta", Field: "DBeta", Kind: "f32", Role: Out, Layout: ColumnSum, Cols: Hidden})
	PerHeadRMSNorm = define[PerHeadRMSNormArgs]("per_head_rmsnorm",
		Tensor{Name: "x", Field: "X", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "gamma", Field: "Gamma", Kind: "f32", Role: In, Layout: Shared, Cols: HeadDim},
		Tensor{Name: "y", Field: "Y", Kind: "f32", Role: Out, Layout: Row, Cols: Hidden})
	RoPEForward = define[RoPEForwardArgs]("rope.neox.forward",
		Tensor{Name: "x", Field: "X", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "positions", Field: "Positions", Kind: "u32", Role: In, Layout: Row, Cols: One, Optional: true},
		Tensor{Name: "y", Field: "Y", Kind: "f32", Role: Out, Layout: Row, Cols: Hidden})
	RoPEBackward = define[RoPEBackwardArgs]("rope.neox.backward",
		Tensor{Name: "dy", Field: "DY", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "positions", Field: "Positions", Kind: "u32", Role: In, Layout: Row, Cols: One},
		Tensor{Name: "dx", Field: "DX", Kind: "f32", Role: Out, Layout: Row, Cols: Hidden})
	SoftmaxForward = define[SoftmaxForwardArgs]("softmax.forward",
		Tensor{Name: "x", Field: "X", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "y", Field: "Y", Kind: "f32", Role: Out, Layout: Row, Cols: Hidden})
	SoftmaxBackward = define[SoftmaxBackwardArgs]("softmax.backward",
		Tensor{Name: "y", Field: "Y", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "dy", Field: "DY", Kind: "f32", Role: In, Layout: Row, Cols: Hidden},
		Tensor{Name: "dx", Field: "DX", Kind: "f32", Role: Out, Layout: Row, Cols: Hidden})
)

// All lists the operations in table order.
func All() []Operation {
	return []Operation{RMSNormForward, RMSNormBackward, FusedResidualRMSNorm, LayerNormForward,
		LayerNormBackward, PerHeadRMSNorm, RoPEForward, RoPEBackward, SoftmaxForward, SoftmaxBackward}
}

// Lookup returns the operation called name.
func Lookup(name string) (Operation, bool) {
	for _, o := range All() {
		if o.Name() == name {
			return o, true
		}
	}
	return nil, false
}

// Traits are an operation's facts beyond its tensors, read by binding and
// the generators instead of naming operations.
type Traits struct {
	// PairedHeadDim: head_dim is even, the kernel rotating pairs of columns.
	PairedHeadDim bool
	// Positional: rows are rotated by their position. A binding binds the
	// per-row positions or, where positions are optional, the scalar pos
	// (one for all rows), and may declare position tables (cos/sin caches)
	// as extra inputs.
	Positional bool
	// Elementwise: each output element is a function of a fixed number of
	// inputs, so the kernel sums nothing (a binding declares no reductions).
	Elementwise bool
	// MaySave are statistics a kernel of the operation may save although
	// the operation returns none: a binding binds them, and they are
	// computed and dropped (a fused residual + RMSNorm saving rms for a
	// backward the table does not pair with it).
	MaySave []string
}

var traits = map[Operation]Traits{
	FusedResidualRMSNorm: {MaySave: []string{"rms"}},
	RoPEForward:          {PairedHeadDim: true, Positional: true, Elementwise: true},
	RoPEBackward:         {PairedHeadDim: true, Positional: true, Elementwise: true},
}

// TraitsOf returns o's traits.
func TraitsOf(o Operation) Traits { return traits[o] }
