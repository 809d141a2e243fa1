package kernels

import (
	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// RoPEForward runs the single-position RoPE NeoX forward (rope_neox_fwd):
// every row rotated at the one position Pos.
type RoPEForward struct{ K *Kernel }

// RoPEForwardBatched runs the batched RoPE NeoX forward
// (rope_neox_fwd_batched): row r rotated at Positions[r].
type RoPEForwardBatched struct{ K *Kernel }

// RoPEBackward runs the batched RoPE NeoX backward (rope_neox_bwd_batched):
// the transpose rotation R(angle)ᵀ = R(−angle) of the forward's.
type RoPEBackward struct{ K *Kernel }

// The RoPE implementations built from the committed PTX.
var (
	RoPEFwd        = RoPEForward{K: kRoPEFwd}
	RoPEFwdBatched = RoPEForwardBatched{K: kRoPEFwdBatched}
	RoPEBwd        = RoPEBackward{K: kRoPEBwdBatched}
)

// RoPEBuffers are the device-level arguments of all three. Positions is the
// zero Buffer for RoPEForward; for RoPEBackward X holds dy and Y receives dx.
type RoPEBuffers struct {
	Rows, Heads, HeadDim int
	Theta                float32
	Pos                  uint32
	Positions            cudart.Buffer // u32 [Rows]
	X, Y                 cudart.Buffer
}

func checkRoPE(c *argCheck, rows, heads, headDim int) bool {
	if !checkHeads(c, rows, heads, headDim) {
		return false
	}
	if headDim%2 != 0 {
		c.addf("head_dim=%d is odd; RoPE NeoX rotates pairs (i, i+head_dim/2)", headDim)
		return false
	}
	return true
}

func ropeLaunch(k *Kernel, dev cudart.Device, b RoPEBuffers, batched bool) error {
	var c argCheck
	checkRoPE(&c, b.Rows, b.Heads, b.HeadDim)
	if batched && !b.Positions.Valid() {
		c.addf("Positions buffer is required")
	}
	if err := c.err(k.Name); err != nil {
		return err
	}
	s := headShape(b.Rows, b.Heads, b.HeadDim)
	rows, heads, hd := cudart.ScalarU32(uint32(b.Rows)), cudart.ScalarU32(uint32(b.Heads)), cudart.ScalarU32(uint32(b.HeadDim))
	if batched {
		return k.Launch(dev, s, cudart.In(b.X), cudart.In(b.Positions), cudart.Out(b.Y), rows, heads, hd, cudart.ScalarF32(b.Theta))
	}
	return k.Launch(dev, s, cudart.In(b.X), cudart.Out(b.Y), rows, heads, hd, cudart.ScalarU32(b.Pos), cudart.ScalarF32(b.Theta))
}

// ropeRun is the host-level body shared by the three.
func ropeRun(k *Kernel, dev cudart.Device, rows, heads, headDim int, theta float32, pos uint32, positions []uint32, batched bool, x, y []float32, xName, yName string) (err error) {
	op := k.Name
	var c argCheck
	if checkRoPE(&c, rows, heads, headDim) {
		n := rows * heads * headDim
		c.length(xName, len(x), n)
		c.length(yName, len(y), n)
		switch {
		case batched:
			c.length("Positions", len(positions), rows)
		case positions != nil:
			c.addf("Positions is set, but %s rotates every row at Pos (use the batched kernel)", op)
		}
	}
	if err := c.err(op); err != nil {
		return err
	}
	sc := newScratch(dev, op)
	defer func() { err = joinFree(err, sc) }()
	b := RoPEBuffers{Rows: rows, Heads: heads, HeadDim: headDim, Theta: theta, Pos: pos}
	if b.X, err = sc.upload("x", x); err != nil {
		return err
	}
	if batched {
		if b.Positions, err = sc.upload("positions", positions); err != nil {
			return err
		}
	}
	if b.Y, err = sc.alloc("y", cudart.F32, len(y)); err != nil {
		return err
	}
	if err := ropeLaunch(k, dev, b, batched); err != nil {
		return err
	}
	return sc.download("y", y, b.Y)
}

// Launch runs the kernel on device buffers (Positions unused).
func (f RoPEForward) Launch(dev cudart.Device, b RoPEBuffers) error {
	return ropeLaunch(f.K, dev, b, false)
}

// RoPEForward validates a, runs the kernel on dev and fills a.Y.
func (f RoPEForward) RoPEForward(dev cudart.Device, a *op.RoPEForwardArgs) error {
	return ropeRun(f.K, dev, a.Rows, a.Heads, a.HeadDim, a.Theta, a.Pos, a.Positions, false, a.X, a.Y, "X", "Y")
}

// Launch runs the kernel on device buffers (Pos unused).
func (f RoPEForwardBatched) Launch(dev cudart.Device, b RoPEBuffers) error {
	return ropeLaunch(f.K, dev, b, true)
}

// RoPEForward validates a, runs the kernel on dev and fills a.Y.
func (f RoPEForwardBatched) RoPEForward(dev cudart.Device, a *op.RoPEForwardArgs) error {
	return ropeRun(f.K, dev, a.Rows, a.Heads, a.HeadDim, a.Theta, 0, a.Positions, true, a.X, a.Y, "X", "Y")
}

// Launch runs the kernel on device buffers: X holds dy, Y receives dx.
func (f RoPEBackward) Launch(dev cudart.Device, b RoPEBuffers) error {
	return ropeLaunch(f.K, dev, b, true)
}

// RoPEBackward validates a, runs the kernel on dev and fills a.DX.
func (f RoPEBackward) RoPEBackward(dev cudart.Device, a *op.RoPEBackwardArgs) error {
	return ropeRun(f.K, dev, a.Rows, a.Heads, a.HeadDim, a.Theta, 0, a.Positions, true, a.DY, a.DX, "DY", "DX")
}
