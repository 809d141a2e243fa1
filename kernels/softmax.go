package kernels

import (
	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// SoftmaxForward runs the row-wise softmax forward (softmax_fwd,
// src/softmax.cu): one block per row, max subtracted, exp2f of the scaled
// difference, a fixed-order block sum and a division.
type SoftmaxForward struct{ K *Kernel }

// SoftmaxBackward runs the row-wise softmax backward (softmax_bwd):
// dx = y·(dy − Σ y·dy), one block per row.
type SoftmaxBackward struct{ K *Kernel }

// The softmax implementations built from the committed PTX.
var (
	SoftmaxFwd = SoftmaxForward{K: kSoftmaxFwd}
	SoftmaxBwd = SoftmaxBackward{K: kSoftmaxBwd}
)

// SoftmaxBuffers are the device-level arguments of both kernels: X and Y
// for the forward; Y, DY and DX for the backward.
type SoftmaxBuffers struct {
	Rows, Hidden int
	X, Y, DY, DX cudart.Buffer
}

// Launch runs the forward on device buffers.
func (f SoftmaxForward) Launch(dev cudart.Device, b SoftmaxBuffers) error {
	var c argCheck
	checkRowsHidden(&c, b.Rows, b.Hidden)
	if err := c.err(f.K.Name); err != nil {
		return err
	}
	return f.K.Launch(dev, op.Shape{Rows: b.Rows, Hidden: b.Hidden}, cudart.In(b.X), cudart.Out(b.Y),
		cudart.ScalarU32(uint32(b.Rows)), cudart.ScalarU32(uint32(b.Hidden)))
}

// SoftmaxForward validates a, runs the forward on dev and fills a.Y.
func (f SoftmaxForward) SoftmaxForward(dev cudart.Device, a *op.SoftmaxForwardArgs) error {
	return call(dev, op.SoftmaxForward, f.K.Name, a, func(c *argCheck) bool { return checkRowsHidden(c, a.Rows, a.Hidden) }, nil,
		func(b buffers, _ *scratch) error {
			return f.Launch(dev, SoftmaxBuffers{Rows: a.Rows, Hidden: a.Hidden, X: b["x"], Y: b["y"]})
		})
}

// Launch runs the backward on device buffers.
func (f SoftmaxBackward) Launch(dev cudart.Device, b SoftmaxBuffers) error {
	var c argCheck
	checkRowsHidden(&c, b.Rows, b.Hidden)
	if err := c.err(f.K.Name); err != nil {
		return err
	}
	return f.K.Launch(dev, op.Shape{Rows: b.Rows, Hidden: b.Hidden}, cudart.In(b.Y), cudart.In(b.DY), cudart.Out(b.DX),
		cudart.ScalarU32(uint32(b.Rows)), cudart.ScalarU32(uint32(b.Hidden)))
}

// SoftmaxBackward validates a, runs the backward on dev and fills a.DX.
func (f SoftmaxBackward) SoftmaxBackward(dev cudart.Device, a *op.SoftmaxBackwardArgs) error {
	return call(dev, op.SoftmaxBackward, f.K.Name, a, func(c *argCheck) bool { return checkRowsHidden(c, a.Rows, a.Hidden) }, nil,
		func(b buffers, _ *scratch) error {
			return f.Launch(dev, SoftmaxBuffers{Rows: a.Rows, Hidden: a.Hidden, Y: b["y"], DY: b["dy"], DX: b["dx"]})
		})
}

// Kernels returns the kernels f launches.
func (f SoftmaxForward) Kernels() []*Kernel { return []*Kernel{f.K} }

// Reductions returns the row sum of softmax_fwd.
func (f SoftmaxForward) Reductions(s op.Shape) []op.Reduction { return f.K.Reductions(s) }

// Kernels returns the kernels f launches.
func (f SoftmaxBackward) Kernels() []*Kernel { return []*Kernel{f.K} }

// Reductions returns the row sum of softmax_bwd.
func (f SoftmaxBackward) Reductions(s op.Shape) []op.Reduction { return f.K.Reductions(s) }

// softmaxRowSum is the one sum of both kernels: each of 256 threads adds
// its ceil(hidden/256) elements serially, then block_sum (depth 8).
func softmaxRowSum(name string) func(s op.Shape) []op.Reduction {
	return func(s op.Shape) []op.Reduction {
		return []op.Reduction{{Name: name, Terms: s.Hidden, Serial: ceilDiv(s.Hidden, BlockThreads), Tree: blockTree(BlockThreads)}}
	}
}
