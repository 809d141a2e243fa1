package op

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestTableNames pins the operation names: binding files refer to them.
func TestTableNames(t *testing.T) {
	var got []string
	for _, o := range All() {
		got = append(got, o.Name())
		if l, ok := Lookup(o.Name()); !ok || l != o {
			t.Errorf("Lookup(%q) = %v, %v", o.Name(), l, ok)
		}
	}
	want := []string{"rmsnorm.forward", "rmsnorm.backward", "fused_residual_rmsnorm", "layernorm.forward",
		"layernorm.backward", "per_head_rmsnorm", "rope.neox.forward", "rope.neox.backward", "softmax.forward", "softmax.backward"}
	if !slices.Equal(got, want) {
		t.Errorf("operations %v, want %v", got, want)
	}
	if _, ok := Lookup("rmsnorm"); ok {
		t.Error("Lookup found an operation that is not in the table")
	}
}

// TestTableCoversEveryField checks that each operation's tensors are
// exactly the slice fields of its argument type, each once.
func TestTableCoversEveryField(t *testing.T) {
	types := map[string]reflect.Type{}
	for _, ty := range []reflect.Type{reflect.TypeFor[RMSNormForwardArgs](), reflect.TypeFor[RMSNormBackwardArgs](),
		reflect.TypeFor[FusedResidualRMSNormArgs](), reflect.TypeFor[LayerNormForwardArgs](),
		reflect.TypeFor[LayerNormBackwardArgs](), reflect.TypeFor[PerHeadRMSNormArgs](),
		reflect.TypeFor[RoPEForwardArgs](), reflect.TypeFor[RoPEBackwardArgs](),
		reflect.TypeFor[SoftmaxForwardArgs](), reflect.TypeFor[SoftmaxBackwardArgs]()} {
		types[ty.Name()] = ty
	}
	for _, o := range All() {
		ty := types[o.Args()]
		if ty == nil {
			t.Errorf("%s: argument type %q is not one of the table's", o.Name(), o.Args())
			continue
		}
		delete(types, o.Args())
		var fields, listed []string
		for i := range ty.NumField() {
			if ty.Field(i).Type.Kind() == reflect.Slice {
				fields = append(fields, ty.Field(i).Name)
			}
		}
		outputs := false
		for _, x := range o.Tensors() {
			listed = append(listed, x.Field)
			if x.Role == In && outputs {
				t.Errorf("%s: input %s listed after an output", o.Name(), x.Name)
			}
			outputs = outputs || x.Role == Out
		}
		slices.Sort(fields)
		slices.Sort(listed)
		if !slices.Equal(fields, listed) {
			t.Errorf("%s: table lists %v, %s has slice fields %v", o.Name(), listed, o.Args(), fields)
		}
	}
	for name := range types {
		t.Errorf("%s belongs to no operation", name)
	}
}

func TestShapeAndLengths(t *testing.T) {
	a := &PerHeadRMSNormArgs{Rows: 2, Heads: 3, HeadDim: 4, X: make([]float32, 24), Gamma: make([]float32, 4), Y: make([]float32, 23)}
	if s := PerHeadRMSNorm.Shape(a); s != (Shape{Rows: 2, Hidden: 12, Heads: 3, HeadDim: 4}) {
		t.Errorf("Shape = %+v", s)
	}
	if !PerHeadRMSNorm.PerHead() || RMSNormForward.PerHead() || !RoPEBackward.PerHead() {
		t.Error("PerHead is wrong")
	}
	if got := PerHeadRMSNorm.Lengths(a); !slices.Equal(got, []string{"len(Y)=23, want 24"}) {
		t.Errorf("Lengths = %q", got)
	}
	f := &RMSNormForwardArgs{Rows: 2, Hidden: 3, X: make([]float32, 6), Gamma: make([]float32, 3), Y: make([]float32, 6)}
	if got := RMSNormForward.Lengths(f); got != nil {
		t.Errorf("Lengths with RMS nil = %q, want none", got)
	}
	f.RMS = make([]float32, 3)
	if got := RMSNormForward.Lengths(f); !slices.Equal(got, []string{"len(RMS)=3, want 2 or nil"}) {
		t.Errorf("Lengths = %q", got)
	}
}

func TestSelectRowsAndByRow(t *testing.T) {
	a := &RMSNormBackwardArgs{Rows: 3, Hidden: 2, X: []float32{0, 1, 10, 11, 20, 21}, Gamma: []float32{7, 8},
		RMS: []float32{100, 110, 120}, DY: []float32{-0, -1, -10, -11, -20, -21},
		DX: make([]float32, 6), DGamma: make([]float32, 2)}
	b := RMSNormBackward.SelectRows(a, []int{2, 0})
	if b.Rows != 2 || !slices.Equal(b.X, []float32{20, 21, 0, 1}) || !slices.Equal(b.RMS, []float32{120, 100}) ||
		!slices.Equal(b.DY, []float32{-20, -21, -0, -1}) || &b.Gamma[0] != &a.Gamma[0] || len(b.DX) != 4 || len(b.DGamma) != 2 {
		t.Fatalf("SelectRows = %+v", b)
	}
	copy(b.DX, []float32{1, 2, 3, 4})
	copy(b.DGamma, []float32{5, 6})
	out, cols := RMSNormBackward.ByRow(b)
	if cols != 2 || !slices.Equal(out, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("ByRow = %v, %d", out, cols)
	}
	f := &LayerNormForwardArgs{Rows: 2, Hidden: 2, Y: []float32{1, 2, 3, 4}, Mean: []float32{5, 6}, Rstd: []float32{7, 8}}
	if out, cols := LayerNormForward.ByRow(f); cols != 4 || !slices.Equal(out, []float32{1, 2, 5, 7, 3, 4, 6, 8}) {
		t.Errorf("ByRow = %v, %d", out, cols)
	}
	c := LayerNormForward.Fresh(f)
	if &c.Y[0] == &f.Y[0] || len(c.Mean) != 2 || c.Y[0] != 0 || f.Y[0] != 1 {
		t.Errorf("Fresh = %+v", c)
	}
	if outs := LayerNormForward.Outputs(c); len(outs) != 3 || &outs[0][0] != &c.Y[0] {
		t.Errorf("Outputs = %v", outs)
	}
}

func TestFreshKeepsIntegerInputs(t *testing.T) {
	a := &RoPEBackwardArgs{Rows: 2, Heads: 1, HeadDim: 2, Positions: []uint32{3, 4}, DY: []float32{1, 2, 3, 4},
		DX: []float32{9, 9, 9, 9}}
	b := RoPEBackward.Fresh(a)
	if &b.Positions[0] != &a.Positions[0] || &b.DY[0] != &a.DY[0] || &b.DX[0] == &a.DX[0] || b.DX[0] != 0 {
		t.Errorf("Fresh = %+v", b)
	}
	c := RoPEBackward.SelectRows(a, []int{1})
	if !slices.Equal(c.Positions, []uint32{4}) || !slices.Equal(c.DY, []float32{3, 4}) || len(c.DX) != 2 {
		t.Errorf("SelectRows = %+v", c)
	}
}

// TestScalars pins the scalar names the binding roles are derived from.
func TestScalars(t *testing.T) {
	for _, c := range []struct {
		o    Operation
		want string
	}{
		{RMSNormForward, "rows hidden eps"},
		{RMSNormBackward, "rows hidden"},
		{FusedResidualRMSNorm, "rows hidden eps"},
		{PerHeadRMSNorm, "rows heads head_dim hidden eps"},
		{RoPEForward, "rows heads head_dim hidden theta pos"},
		{RoPEBackward, "rows heads head_dim hidden theta"},
	} {
		if got := strings.Join(c.o.Scalars(), " "); got != c.want {
			t.Errorf("%s: scalars %q, want %q", c.o.Name(), got, c.want)
		}
	}
}
