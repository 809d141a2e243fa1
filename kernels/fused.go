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
func (f FusedResidualRMSNorm) FusedResidualRMSNorm(dev cudart.Device, a *op.FusedResidualRMSNormArgs) error {
	var alias map[string]string
	if a.Alias {
		alias = map[string]string{"residual_out": "residual"}
	}
	return call(dev, op.FusedResidualRMSNorm, f.K.Name, a, func(c *argCheck) bool { return checkRowsHidden(c, a.Rows, a.Hidden) },
		alias, func(b buffers, _ *scratch) error {
			return f.Launch(dev, FusedResidualRMSNormBuffers{Rows: a.Rows, Hidden: a.Hidden, Eps: a.Eps, Residual: b["residual"],
				X: b["x"], Gamma: b["gamma"], ResidualOut: b["residual_out"], Y: b["y"]})
		})
}
