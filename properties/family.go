package properties

import (
	"fmt"
	"math"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
)

// Impls gathers one implementation of each operation; properties that hold
// for every row-wise kernel (batch independence, row permutation, GPU/emulator
// parity) draw a family from it. A nil field leaves that family out.
type Impls struct {
	RMSNorm     RMSNormForwarder
	Fused       FusedResidualRMSNormer
	LayerNorm   LayerNormForwarder
	PerHead     PerHeadRMSNormer
	RoPE        RoPEForwarder // batched (per-row positions)
	RMSBackward RMSNormBackwarder
	LNBackward  LayerNormBackwarder
	RoPEBack    RoPEBackwarder
}

// problem is one drawn launch of one family, with its per-row inputs split
// out so that rows can be selected and permuted. run returns the row-wise
// output ([rows][outCols]) followed by any non-row-wise output (weight
// gradients).
type problem struct {
	family  string
	rows    int
	f32     [][]float32 // per-row tensors, [rows][f32Cols[i]]
	f32Cols []int
	u32     [][]uint32
	u32Cols []int
	outCols int
	// approxTol is set when the family's PTX uses approximate instructions:
	// two conforming devices may then differ by up to twice the oracle
	// bound, which approxTol returns for p's inputs, not bit for bit.
	approxTol func(p problem) []float64
	desc      string
	run       func(dev cudart.Device, p problem) ([]float32, error)
}

func (p problem) String() string { return p.family + " " + p.desc }

// selectRows returns the problem restricted to rows idx (in that order).
func (p problem) selectRows(idx []int) problem {
	q := p
	q.rows = len(idx)
	q.f32, q.u32 = make([][]float32, len(p.f32)), make([][]uint32, len(p.u32))
	for t, data := range p.f32 {
		c := p.f32Cols[t]
		for _, r := range idx {
			q.f32[t] = append(q.f32[t], data[r*c:(r+1)*c]...)
		}
	}
	for t, data := range p.u32 {
		c := p.u32Cols[t]
		for _, r := range idx {
			q.u32[t] = append(q.u32[t], data[r*c:(r+1)*c]...)
		}
	}
	return q
}

// families lists the families present in im, each as a generator of problems.
func (im Impls) families(lim Limits) []func(rt *rapid.T) problem {
	var fs []func(rt *rapid.T) problem
	if im.RMSNorm != nil {
		fs = append(fs, func(rt *rapid.T) problem {
			c := drawRMSCase(rt, lim)
			return problem{family: "rmsnorm_fwd", rows: c.rows, f32: [][]float32{c.x.Data}, f32Cols: []int{c.hidden},
				outCols: c.hidden + 1, desc: c.String(),
				run: func(dev cudart.Device, p problem) ([]float32, error) {
					a := &op.RMSNormForwardArgs{Rows: p.rows, Hidden: c.hidden, Eps: c.eps, X: p.f32[0], Gamma: c.gamma,
						Y: make([]float32, p.rows*c.hidden), RMS: make([]float32, p.rows)}
					err := im.RMSNorm.RMSNormForward(dev, a)
					return interleave(a.Y, c.hidden, a.RMS, 1, p.rows), err
				}}
		})
	}
	if im.Fused != nil {
		fs = append(fs, func(rt *rapid.T) problem {
			c := drawRMSCase(rt, lim)
			res := Values(rt, "residual", c.rows, c.hidden)
			alias := rapid.Bool().Draw(rt, "alias")
			return problem{family: "fused_residual_rmsnorm", rows: c.rows, f32: [][]float32{res.Data, c.x.Data},
				f32Cols: []int{c.hidden, c.hidden}, outCols: 2 * c.hidden, desc: fmt.Sprintf("%v alias=%v", c, alias),
				run: func(dev cudart.Device, p problem) ([]float32, error) {
					a := &op.FusedResidualRMSNormArgs{Rows: p.rows, Hidden: c.hidden, Eps: c.eps, Residual: p.f32[0],
						X: p.f32[1], Gamma: c.gamma, Alias: alias, ResidualOut: make([]float32, p.rows*c.hidden),
						Y: make([]float32, p.rows*c.hidden)}
					err := im.Fused.FusedResidualRMSNorm(dev, a)
					return interleave(a.Y, c.hidden, a.ResidualOut, c.hidden, p.rows), err
				}}
		})
	}
	if im.LayerNorm != nil {
		fs = append(fs, func(rt *rapid.T) problem {
			c := drawLNCase(rt, lim)
			return problem{family: "layernorm_fwd", rows: c.rows, f32: [][]float32{c.x.Data}, f32Cols: []int{c.hidden},
				outCols: c.hidden + 2, desc: c.rmsCase.String(),
				run: func(dev cudart.Device, p problem) ([]float32, error) {
					a := &op.LayerNormForwardArgs{Rows: p.rows, Hidden: c.hidden, Eps: c.eps, X: p.f32[0], Gamma: c.gamma,
						Beta: c.beta, Y: make([]float32, p.rows*c.hidden), Mean: make([]float32, p.rows), Rstd: make([]float32, p.rows)}
					err := im.LayerNorm.LayerNormForward(dev, a)
					return interleave(interleave(a.Y, c.hidden, a.Mean, 1, p.rows), c.hidden+1, a.Rstd, 1, p.rows), err
				}}
		})
	}
	if im.PerHead != nil {
		fs = append(fs, func(rt *rapid.T) problem {
			c := drawQKN(rt, lim)
			w := c.heads * c.headDim
			return problem{family: "per_head_rmsnorm", rows: c.rows, f32: [][]float32{c.x.Data}, f32Cols: []int{w},
				outCols: w, desc: c.String(),
				run: func(dev cudart.Device, p problem) ([]float32, error) {
					a := &op.PerHeadRMSNormArgs{Rows: p.rows, Heads: c.heads, HeadDim: c.headDim, Eps: c.eps, X: p.f32[0],
						Gamma: c.gamma, Y: make([]float32, p.rows*w)}
					return a.Y, im.PerHead.PerHeadRMSNorm(dev, a)
				}}
		})
	}
	if im.RoPE != nil {
		fs = append(fs, func(rt *rapid.T) problem {
			c := drawRoPECase(rt, lim, PerRowPositions, 2, 0)
			w := c.heads * c.headDim
			return problem{family: "rope_neox_fwd_batched", rows: c.rows, f32: [][]float32{c.x.Data}, f32Cols: []int{w},
				u32: [][]uint32{c.pos}, u32Cols: []int{1}, outCols: w, approxTol: ropeParityTol(c, 1), desc: c.String(),
				run: func(dev cudart.Device, p problem) ([]float32, error) {
					a := &op.RoPEForwardArgs{Rows: p.rows, Heads: c.heads, HeadDim: c.headDim, Theta: c.theta, Positions: p.u32[0],
						X: p.f32[0], Y: make([]float32, p.rows*w)}
					return a.Y, im.RoPE.RoPEForward(dev, a)
				}}
		})
	}
	if im.RoPEBack != nil {
		fs = append(fs, func(rt *rapid.T) problem {
			c := drawRoPECase(rt, lim, PerRowPositions, 2, 0)
			w := c.heads * c.headDim
			return problem{family: "rope_neox_bwd_batched", rows: c.rows, f32: [][]float32{c.x.Data}, f32Cols: []int{w},
				u32: [][]uint32{c.pos}, u32Cols: []int{1}, outCols: w, approxTol: ropeParityTol(c, -1), desc: c.String(),
				run: func(dev cudart.Device, p problem) ([]float32, error) {
					a := &op.RoPEBackwardArgs{Rows: p.rows, Heads: c.heads, HeadDim: c.headDim, Theta: c.theta,
						Positions: p.u32[0], DY: p.f32[0], DX: make([]float32, p.rows*w)}
					return a.DX, im.RoPEBack.RoPEBackward(dev, a)
				}}
		})
	}
	if im.RMSBackward != nil {
		fs = append(fs, func(rt *rapid.T) problem {
			c := drawBwdCase(rt, lim)
			rms := make([]float32, len(c.rms32))
			copy(rms, c.rms32)
			return problem{family: "rmsnorm_bwd", rows: c.rows, f32: [][]float32{c.x.Data, c.dy.Data, rms},
				f32Cols: []int{c.hidden, c.hidden, 1}, outCols: c.hidden, desc: fmt.Sprintf("%v dy=%v", c.rmsCase, c.dy),
				run: func(dev cudart.Device, p problem) ([]float32, error) {
					a := &op.RMSNormBackwardArgs{Rows: p.rows, Hidden: c.hidden, X: p.f32[0], Gamma: c.gamma, RMS: p.f32[2],
						DY: p.f32[1], DX: make([]float32, p.rows*c.hidden), DGamma: make([]float32, c.hidden)}
					err := im.RMSBackward.RMSNormBackward(dev, a)
					return append(a.DX, a.DGamma...), err
				}}
		})
	}
	if im.LNBackward != nil {
		fs = append(fs, func(rt *rapid.T) problem {
			c := drawRMSCase(rt, lim)
			dy := Values(rt, "dy", c.rows, c.hidden, Normal, MixedScale)
			mean, rstd := make([]float32, c.rows), make([]float32, c.rows)
			for r := 0; r < c.rows; r++ {
				m, v := 0.0, 0.0
				row := F64(c.x.Data[r*c.hidden : (r+1)*c.hidden])
				for _, x := range row {
					m += x
				}
				m /= float64(c.hidden)
				for _, x := range row {
					v += (x - m) * (x - m)
				}
				mean[r], rstd[r] = float32(m), float32(1/math.Sqrt(v/float64(c.hidden)+float64(c.eps)))
			}
			return problem{family: "layernorm_bwd", rows: c.rows, f32: [][]float32{c.x.Data, dy.Data, mean, rstd},
				f32Cols: []int{c.hidden, c.hidden, 1, 1}, outCols: c.hidden, desc: fmt.Sprintf("%v dy=%v", c, dy),
				run: func(dev cudart.Device, p problem) ([]float32, error) {
					a := &op.LayerNormBackwardArgs{Rows: p.rows, Hidden: c.hidden, X: p.f32[0], Gamma: c.gamma, DY: p.f32[1],
						Mean: p.f32[2], Rstd: p.f32[3], DX: make([]float32, p.rows*c.hidden), DGamma: make([]float32, c.hidden),
						DBeta: make([]float32, c.hidden)}
					err := im.LNBackward.LayerNormBackward(dev, a)
					return append(append(a.DX, a.DGamma...), a.DBeta...), err
				}}
		})
	}
	return fs
}

// interleave joins a [rows][ca] and b [rows][cb] into [rows][ca+cb].
func interleave(a []float32, ca int, b []float32, cb, rows int) []float32 {
	out := make([]float32, 0, rows*(ca+cb))
	for r := 0; r < rows; r++ {
		out = append(out, a[r*ca:(r+1)*ca]...)
		out = append(out, b[r*cb:(r+1)*cb]...)
	}
	return out
}

// drawProblem draws a family of im and a problem from it.
func drawProblem(rt *rapid.T, im Impls, lim Limits) problem {
	fs := im.families(lim)
	if len(fs) == 0 {
		rt.Fatalf("no implementation given")
	}
	i := rapid.IntRange(0, len(fs)-1).Draw(rt, "family")
	return fs[i](rt)
}

// ropeParityTol returns 2·RoPETol for the problem's rows (sign +1 forward,
// −1 backward).
func ropeParityTol(c ropeCase, sign float64) func(p problem) []float64 {
	return func(p problem) []float64 {
		pos := make([]float64, p.rows)
		for i, v := range p.u32[0] {
			pos[i] = float64(v)
		}
		tol := make([]float64, len(p.f32[0]))
		oracle.RoPETol(tol, F64(p.f32[0]), pos, p.rows, c.heads, c.headDim, float64(c.theta), oracle.RoPENeoX, sign)
		for i := range tol {
			tol[i] *= 2
		}
		return tol
	}
}
