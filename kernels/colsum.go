package kernels

import (
	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// ColumnSum runs colsum_f32, the fixed-order column sum every backward uses
// for its weight gradients: out[c] = Σ_r partial[r][c].
type ColumnSum struct{ K *Kernel }

// ColSum is the column sum built from the committed PTX.
var ColSum = ColumnSum{K: kColSum}

// ColumnSumArgs are the host-level arguments of ColumnSum.
type ColumnSumArgs struct {
	Rows, Cols int
	Partial    []float32 // [Rows·Cols]
	Out        []float32 // output [Cols]
}

// ColumnSumBuffers are the device-level arguments.
type ColumnSumBuffers struct {
	Rows, Cols   int
	Partial, Out cudart.Buffer
}

// Launch runs the kernel on device buffers.
func (f ColumnSum) Launch(dev cudart.Device, b ColumnSumBuffers) error {
	var c argCheck
	if c.dims(names("rows", "cols"), b.Rows, b.Cols) {
		c.elements("rows·cols", b.Rows*b.Cols)
	}
	if err := c.err(f.K.Name); err != nil {
		return err
	}
	return f.K.Launch(dev, op.Shape{Rows: b.Rows, Hidden: b.Cols}, cudart.In(b.Partial), cudart.Out(b.Out),
		cudart.ScalarU32(uint32(b.Rows)), cudart.ScalarU32(uint32(b.Cols)))
}

// ColumnSum validates a, runs the kernel on dev and fills a.Out.
func (f ColumnSum) ColumnSum(dev cudart.Device, a *ColumnSumArgs) (err error) {
	op := f.K.Name
	var c argCheck
	if c.dims(names("rows", "cols"), a.Rows, a.Cols) && c.elements("rows·cols", a.Rows*a.Cols) {
		c.length("Partial", len(a.Partial), a.Rows*a.Cols)
		c.length("Out", len(a.Out), a.Cols)
	}
	if err := c.err(op); err != nil {
		return err
	}
	sc := newScratch(dev, op)
	defer func() { err = joinFree(err, sc) }()
	b := ColumnSumBuffers{Rows: a.Rows, Cols: a.Cols}
	if b.Partial, err = sc.upload("partial", a.Partial); err != nil {
		return err
	}
	if b.Out, err = sc.alloc("out", cudart.F32, a.Cols); err != nil {
		return err
	}
	if err := f.Launch(dev, b); err != nil {
		return err
	}
	return sc.download("out", a.Out, b.Out)
}
