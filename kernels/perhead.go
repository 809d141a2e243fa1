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
func (f PerHeadRMSNorm) PerHeadRMSNorm(dev cudart.Device, a *op.PerHeadRMSNormArgs) error {
	return call(dev, op.PerHeadRMSNorm, f.K.Name, a, func(c *argCheck) bool { return checkHeads(c, a.Rows, a.Heads, a.HeadDim) }, nil,
		func(b buffers, _ *scratch) error {
			return f.Launch(dev, PerHeadRMSNormBuffers{Rows: a.Rows, Heads: a.Heads, HeadDim: a.HeadDim, Eps: a.Eps, X: b["x"],
				Gamma: b["gamma"], Y: b["y"]})
		})
}
