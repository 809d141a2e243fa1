package kernels

import (
	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// PerHeadRMSNorm runs the per-head RMSNorm (QK-norm, src/per_head_rmsnorm.cu):
// every head of every row normalised on its own, γ [head_dim] shared by the
// heads, one warp per (row, head).
type PerHeadRMSNorm struct{ K *Kernel }

// PerHeadRMSNormFwd is the per-head RMSNorm built from the committed PTX.
var PerHeadRMSNormFwd = PerHeadRMSNorm{K: kPerHeadRMSNorm}

// PerHeadRMSNormBuffers are the device-level arguments.
type PerHeadRMSNormBuffers struct {
	Rows, Heads, HeadDim int
	Eps                  float32
	X, Gamma, Y          cudart.Buffer
}

func checkHeads(c *argCheck, rows, heads, headDim int) bool {
	return c.dims(names("rows", "heads", "head_dim"), rows, heads, headDim) &&
		c.elements("heads·head_dim", heads*headDim) && c.elements("rows·heads·head_dim", rows*heads*headDim)
}

func headShape(rows, heads, headDim int) op.Shape {
	return op.Shape{Rows: rows, Hidden: heads * headDim, Heads: heads, HeadDim: headDim}
}

// Launch runs the kernel on device buffers.
func (f PerHeadRMSNorm) Launch(dev cudart.Device, b PerHeadRMSNormBuffers) error {
	var c argCheck
	checkHeads(&c, b.Rows, b.Heads, b.HeadDim)
	if err := c.err(f.K.Name); err != nil {
		return err
	}
	return f.K.Launch(dev, headShape(b.Rows, b.Heads, b.HeadDim), cudart.In(b.X), cudart.In(b.Gamma), cudart.Out(b.Y),
		cudart.ScalarU32(uint32(b.Rows)), cudart.ScalarU32(uint32(b.Heads)), cudart.ScalarU32(uint32(b.HeadDim)), cudart.ScalarF32(b.Eps))
}

// PerHeadRMSNorm validates a, runs the kernel on dev and fills a.Y.
func (f PerHeadRMSNorm) PerHeadRMSNorm(dev cudart.Device, a *op.PerHeadRMSNormArgs) (err error) {
	op := f.K.Name
	var c argCheck
	if checkHeads(&c, a.Rows, a.Heads, a.HeadDim) {
		n := a.Rows * a.Heads * a.HeadDim
		c.length("X", len(a.X), n)
		c.length("Gamma", len(a.Gamma), a.HeadDim)
		c.length("Y", len(a.Y), n)
	}
	if err := c.err(op); err != nil {
		return err
	}
	sc := newScratch(dev, op)
	defer func() { err = joinFree(err, sc) }()
	in, err := sc.uploads(names("x", "gamma"), a.X, a.Gamma)
	if err != nil {
		return err
	}
	b := PerHeadRMSNormBuffers{Rows: a.Rows, Heads: a.Heads, HeadDim: a.HeadDim, Eps: a.Eps, X: in[0], Gamma: in[1]}
	if b.Y, err = sc.alloc("y", cudart.F32, len(a.Y)); err != nil {
		return err
	}
	if err := f.Launch(dev, b); err != nil {
		return err
	}
	return sc.download("y", a.Y, b.Y)
}
