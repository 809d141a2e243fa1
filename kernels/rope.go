package kernels

import (
	"math"

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

func checkRoPE(c *argCheck, rows, heads, headDim int, theta float32) bool {
	if !checkHeads(c, rows, heads, headDim) {
		return false
	}
	if headDim%2 != 0 {
		c.addf("head_dim=%d is odd; RoPE NeoX rotates pairs (i, i+head_dim/2)", headDim)
		return false
	}
	// A RoPE base: θ ≥ 1 makes every frequency θ^(−2i/head_dim) at most 1,
	// so every angle is at most the position (below 2³²) and finite.
	if !(theta >= 1) || math.IsInf(float64(theta), 1) {
		c.addf("theta=%g, want a finite RoPE base of at least 1", theta)
		return false
	}
	return true
}

func ropeLaunch(k *Kernel, dev cudart.Device, b RoPEBuffers, batched bool) error {
	var c argCheck
	checkRoPE(&c, b.Rows, b.Heads, b.HeadDim, b.Theta)
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

// ropeCheck returns the argument check of a RoPE forward kernel: the
// batched one needs Positions, the single-position one takes Pos and no
// Positions. (The backward's table row makes Positions required.)
func ropeCheck(k *Kernel, rows, heads, headDim int, theta float32, positions []uint32, batched bool) func(c *argCheck) bool {
	return func(c *argCheck) bool {
		if !checkRoPE(c, rows, heads, headDim, theta) {
			return false
		}
		switch {
		case batched && positions == nil:
			c.length("Positions", 0, rows)
		case !batched && positions != nil:
			c.addf("Positions is set, but %s rotates every row at Pos (use the batched kernel)", k.Name)
		}
		return true
	}
}

// ropeForward is the host-level body of both forwards.
func ropeForward(k *Kernel, dev cudart.Device, a *op.RoPEForwardArgs, batched bool) error {
	pos := a.Pos
	if batched {
		pos = 0
	}
	return call(dev, op.RoPEForward, k.Name, a, ropeCheck(k, a.Rows, a.Heads, a.HeadDim, a.Theta, a.Positions, batched), nil,
		func(b buffers, _ *scratch) error {
			return ropeLaunch(k, dev, RoPEBuffers{Rows: a.Rows, Heads: a.Heads, HeadDim: a.HeadDim, Theta: a.Theta, Pos: pos,
				Positions: b["positions"], X: b["x"], Y: b["y"]}, batched)
		})
}

// Launch runs the kernel on device buffers (Positions unused).
func (f RoPEForward) Launch(dev cudart.Device, b RoPEBuffers) error {
	return ropeLaunch(f.K, dev, b, false)
}

// RoPEForward validates a, runs the kernel on dev and fills a.Y.
func (f RoPEForward) RoPEForward(dev cudart.Device, a *op.RoPEForwardArgs) error {
	return ropeForward(f.K, dev, a, false)
}

// Launch runs the kernel on device buffers (Pos unused).
func (f RoPEForwardBatched) Launch(dev cudart.Device, b RoPEBuffers) error {
	return ropeLaunch(f.K, dev, b, true)
}

// RoPEForward validates a, runs the kernel on dev and fills a.Y.
func (f RoPEForwardBatched) RoPEForward(dev cudart.Device, a *op.RoPEForwardArgs) error {
	return ropeForward(f.K, dev, a, true)
}

// Launch runs the kernel on device buffers: X holds dy, Y receives dx.
func (f RoPEBackward) Launch(dev cudart.Device, b RoPEBuffers) error {
	return ropeLaunch(f.K, dev, b, true)
}

// RoPEBackward validates a, runs the kernel on dev and fills a.DX.
func (f RoPEBackward) RoPEBackward(dev cudart.Device, a *op.RoPEBackwardArgs) error {
	return call(dev, op.RoPEBackward, f.K.Name, a, func(c *argCheck) bool { return checkRoPE(c, a.Rows, a.Heads, a.HeadDim, a.Theta) }, nil,
		func(b buffers, _ *scratch) error {
			return ropeLaunch(f.K, dev, RoPEBuffers{Rows: a.Rows, Heads: a.Heads, HeadDim: a.HeadDim, Theta: a.Theta,
				Positions: b["positions"], X: b["dy"], Y: b["dx"]}, true)
		})
}
