package kernels

import (
	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// FusedResidualRMSNorm runs the fused residual add + RMSNorm forward
// (src/fused_residual_rmsnorm.cu): residual_out = residual + x,
// y = RMSNorm(residual_out)·γ, one block per row.
type FusedResidualRMSNorm struct{ K *Kernel }

// FusedResidualRMSNormFwd is the fused residual + RMSNorm built from the
// committed PTX.
var FusedResidualRMSNormFwd = FusedResidualRMSNorm{K: kFusedResidualRMSNorm}

// FusedResidualRMSNormBuffers are the device-level arguments.
// ResidualOut may be the same Buffer as Residual (aliased, in place).
type FusedResidualRMSNormBuffers struct {
	Rows, Hidden   int
	Eps            float32
	Residual, X    cudart.Buffer
	Gamma          cudart.Buffer
	ResidualOut, Y cudart.Buffer
}

// Launch runs the kernel on device buffers.
func (f FusedResidualRMSNorm) Launch(dev cudart.Device, b FusedResidualRMSNormBuffers) error {
	var c argCheck
	checkRowsHidden(&c, b.Rows, b.Hidden)
	if err := c.err(f.K.Name); err != nil {
		return err
	}
	return f.K.Launch(dev, op.Shape{Rows: b.Rows, Hidden: b.Hidden},
		cudart.In(b.Residual), cudart.In(b.X), cudart.In(b.Gamma), cudart.Out(b.ResidualOut), cudart.Out(b.Y),
		cudart.ScalarU32(uint32(b.Rows)), cudart.ScalarU32(uint32(b.Hidden)), cudart.ScalarF32(b.Eps))
}

// FusedResidualRMSNorm validates a, runs the kernel on dev and fills
// a.ResidualOut and a.Y.
func (f FusedResidualRMSNorm) FusedResidualRMSNorm(dev cudart.Device, a *op.FusedResidualRMSNormArgs) (err error) {
	op := f.K.Name
	var c argCheck
	if checkRowsHidden(&c, a.Rows, a.Hidden) {
		n := a.Rows * a.Hidden
		c.length("Residual", len(a.Residual), n)
		c.length("X", len(a.X), n)
		c.length("Gamma", len(a.Gamma), a.Hidden)
		c.length("ResidualOut", len(a.ResidualOut), n)
		c.length("Y", len(a.Y), n)
	}
	if err := c.err(op); err != nil {
		return err
	}
	sc := newScratch(dev, op)
	defer func() { err = joinFree(err, sc) }()
	in, err := sc.uploads(names("residual", "x", "gamma"), a.Residual, a.X, a.Gamma)
	if err != nil {
		return err
	}
	b := FusedResidualRMSNormBuffers{Rows: a.Rows, Hidden: a.Hidden, Eps: a.Eps, Residual: in[0], X: in[1], Gamma: in[2]}
	if a.Alias {
		b.ResidualOut = b.Residual
	} else if b.ResidualOut, err = sc.alloc("residual_out", cudart.F32, len(a.ResidualOut)); err != nil {
		return err
	}
	if b.Y, err = sc.alloc("y", cudart.F32, len(a.Y)); err != nil {
		return err
	}
	if err := f.Launch(dev, b); err != nil {
		return err
	}
	if err := sc.download("residual_out", a.ResidualOut, b.ResidualOut); err != nil {
		return err
	}
	return sc.download("y", a.Y, b.Y)
}
