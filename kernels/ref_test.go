package kernels

// References and error bounds for the device tests: package oracle's float64
// references and derived bounds, the ones the properties check, with the
// reduction orders the descriptors report.

import (
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
)

func f64(v float32) float64 { return float64(v) }

func widen(v []float32) []float64 {
	w := make([]float64, len(v))
	for i, x := range v {
		w[i] = float64(x)
	}
	return w
}

// orderOf returns the oracle's reduction shape for a descriptor's sum: Terms
// partial sums of one term each, combined with Depth additions on the
// longest path.
func orderOf(rs ...op.Reduction) oracle.Reduction {
	o := oracle.Reduction{}
	for _, r := range rs {
		o.Threads, o.Tree = max(o.Threads, r.Terms), max(o.Tree, r.Depth())
	}
	return o
}

// ref holds a reference and its bound for each output of a test.
type ref struct{ want, tol []float64 }

func newRef(n int) ref { return ref{make([]float64, n), make([]float64, n)} }

// refRMSNorm returns y and rms for the RMSNorm forward (or, with heads > 0,
// the per-head RMSNorm of [rows][heads·hidden] with γ [hidden]).
func refRMSNorm(x, gamma []float32, eps float32, rows, heads, hidden int, red op.Reduction) (y, rms ref) {
	n := max(1, heads)
	y, rms = newRef(len(x)), newRef(rows*n)
	if heads > 0 {
		oracle.PerHeadRMSNorm(y.want, rms.want, widen(x), widen(gamma), rows, heads, hidden, f64(eps))
		oracle.PerHeadRMSNormTol(y.tol, rms.tol, widen(x), widen(gamma), rows, heads, hidden, f64(eps), orderOf(red))
		return y, rms
	}
	oracle.RMSNormForwardWithTol(y.want, rms.want, y.tol, rms.tol, widen(x), widen(gamma), rows, hidden, f64(eps), orderOf(red))
	return y, rms
}

// refFused returns residual_out and y of the fused residual + RMSNorm.
func refFused(residual, x, gamma []float32, eps float32, rows, hidden int, red op.Reduction) (s, y ref) {
	s, y = newRef(len(x)), newRef(len(x))
	r, xx, g := widen(residual), widen(x), widen(gamma)
	oracle.FusedResidualRMSNorm(s.want, y.want, nil, r, xx, g, rows, hidden, f64(eps))
	oracle.FusedResidualRMSNormTol(s.tol, y.tol, nil, r, xx, g, rows, hidden, f64(eps), orderOf(red))
	return s, y
}

// refRMSNormBwd returns dx and dγ of the RMSNorm backward for inputs whose
// rms the forward computed with eps; row is the per-row sum, col the dγ sum.
func refRMSNormBwd(x, gamma, dy []float32, eps float64, rows, hidden int, row, col op.Reduction) (dx, dg ref) {
	dx, dg = newRef(len(x)), newRef(hidden)
	oracle.RMSNormBackwardWithTol(dx.want, dg.want, dx.tol, dg.tol, nil, widen(x), widen(gamma), widen(dy), rows, hidden, eps,
		orderOf(row), orderOf(col))
	return dx, dg
}

// refLayerNorm returns y, mean and rstd of the two-pass LayerNorm forward.
func refLayerNorm(x, gamma, beta []float32, eps float32, rows, hidden int, red op.Reduction) (y, mean, rstd ref) {
	y, mean, rstd = newRef(len(x)), newRef(rows), newRef(rows)
	xx, g, b := widen(x), widen(gamma), widen(beta)
	oracle.LayerNormForward(y.want, mean.want, rstd.want, xx, g, b, rows, hidden, f64(eps))
	oracle.LayerNormForwardTol(y.tol, mean.tol, rstd.tol, xx, g, b, rows, hidden, f64(eps), orderOf(red), oracle.TwoPassVariance)
	return y, mean, rstd
}

// refLayerNormBwd returns dx, dγ and dβ of the LayerNorm backward, its
// mean and rstd from the forward with eps; red lists the descriptor's sums
// (two per row, then dγ and dβ).
func refLayerNormBwd(x, gamma, dy []float32, eps float32, rows, hidden int, red []op.Reduction) (dx, dg, db ref) {
	dx, dg, db = newRef(len(x)), newRef(hidden), newRef(hidden)
	xx, g, d := widen(x), widen(gamma), widen(dy)
	oracle.LayerNormBackward(dx.want, dg.want, db.want, xx, g, d, rows, hidden, f64(eps))
	oracle.LayerNormBackwardTol(dx.tol, dg.tol, db.tol, xx, g, d, rows, hidden, f64(eps), orderOf(red[0], red[1]),
		orderOf(red[2], red[3]))
	return dx, dg, db
}

// refRoPE returns the RoPE NeoX rotation (the transpose when inverse) of
// in, row r at position pos[r].
func refRoPE(in []float32, pos []uint32, rows, heads, headDim int, theta float32, inverse bool) ref {
	out := newRef(len(in))
	p := make([]float64, len(pos))
	for i, v := range pos {
		p[i] = float64(v)
	}
	sign := 1.0
	if inverse {
		sign = -1
		oracle.RoPENeoXBackward(out.want, widen(in), p, rows, heads, headDim, f64(theta))
	} else {
		oracle.RoPENeoXForward(out.want, widen(in), p, rows, heads, headDim, f64(theta))
	}
	oracle.RoPETol(out.tol, widen(in), p, rows, heads, headDim, f64(theta), oracle.RoPENeoX, sign)
	return out
}
