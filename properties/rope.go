package properties

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties/gen"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

// Positions says how a RoPE forward takes its positions.
type Positions int

// Position modes: one position for every row (op.RoPEForwardArgs.Pos), or one per row
// (op.RoPEForwardArgs.Positions).
const (
	SharedPosition Positions = iota
	PerRowPositions
)

// ropeCase is one drawn RoPE problem.
type ropeCase struct {
	rows, heads, headDim int
	theta                float32
	pos                  []uint32
	x                    gen.Tensor
}

func (c ropeCase) String() string {
	p := fmt.Sprint(c.pos)
	if len(p) > 60 {
		p = p[:60] + "…]"
	}
	return fmt.Sprintf("rows=%d heads=%d head_dim=%d theta=%g pos=%s x=%v", c.rows, c.heads, c.headDim, c.theta, p, c.x)
}

// drawRoPECase draws a RoPE problem; minDim and minPos let a property ask for
// inputs where rotations differ (head_dim ≥ 4, position ≥ 1).
func drawRoPECase(rt *rapid.T, lim gen.Limits, mode Positions, minDim, minPos int, dists ...gen.Dist) ropeCase {
	headDim := 2 * rapid.OneOf(rapid.SampledFrom([]int{1, 2, 16, 32, 64}), rapid.IntRange(1, 128)).
		Filter(func(h int) bool { return 2*h >= minDim }).Draw(rt, "head_dim/2")
	heads := rapid.IntRange(1, max(1, min(16, lim.MaxHidden/headDim))).Draw(rt, "heads")
	rows := lim.DrawRows(rt, "rows", heads*headDim)
	s := lim.Conform(rt, op.Shape{Rows: rows, Hidden: heads * headDim, Heads: heads, HeadDim: headDim},
		func(s op.Shape) bool { return s.HeadDim >= minDim })
	rows, heads, headDim = s.Rows, s.Heads, s.HeadDim
	c := ropeCase{rows: rows, heads: heads, headDim: headDim, theta: lim.DrawTheta(rt, "theta"), pos: make([]uint32, rows)}
	if mode == SharedPosition {
		p := max(minPos, lim.DrawPosition(rt, "pos"))
		if lim.MaxPosition > 0 {
			p = min(p, lim.MaxPosition-1)
		}
		for i := range c.pos {
			c.pos[i] = uint32(p)
		}
	} else {
		base := lim.DrawPosition(rt, "pos0")
		step := rapid.IntRange(0, 4096).Draw(rt, "pos.step")
		span := 131073 // positions 0..131072, as gen.Position draws them
		if lim.MaxPosition > 0 {
			span = lim.MaxPosition
		}
		for i := range c.pos {
			c.pos[i] = uint32(min(span-1, max(minPos, (base+i*step)%span)))
		}
	}
	c.x = values(rt, lim, "x", rows, heads*headDim, dists...)
	return c
}

func (c ropeCase) posF64() []float64 {
	p := make([]float64, len(c.pos))
	for i, v := range c.pos {
		p[i] = float64(v)
	}
	return p
}

// runRoPE runs impl on c (positions per mode) and returns y.
func runRoPE(o *Obs, dev cudart.Device, impl RoPEForwarder, mode Positions, c ropeCase, theta float32) []float32 {
	o.rt.Helper()
	a := &op.RoPEForwardArgs{Rows: c.rows, Heads: c.heads, HeadDim: c.headDim, Theta: theta, X: c.x.Data,
		Y: make([]float32, len(c.x.Data))}
	if mode == SharedPosition {
		a.Pos = c.pos[0]
	} else {
		a.Positions = c.pos
	}
	a.Offsets = o.offsets(impl, op.RoPEForward)
	o.Check(fmt.Sprintf("rope forward θ=%g", theta), impl.RoPEForward(dev, a))
	return a.Y
}

// ropeOracle returns the NeoX (or GPT-J) oracle output and bound at theta.
func ropeOracle(c ropeCase, theta float32, style oracle.RoPEStyle) (want, tol []float64) {
	x := gen.F64(c.x.Data)
	want, tol = make([]float64, len(x)), make([]float64, len(x))
	th := float64(theta)
	if style == oracle.RoPENeoX {
		oracle.RoPENeoXForward(want, x, c.posF64(), c.rows, c.heads, c.headDim, th)
		oracle.RoPENeoXForwardTol(tol, x, c.posF64(), c.rows, c.heads, c.headDim, th)
	} else {
		oracle.RoPEGPTJForward(want, x, c.posF64(), c.rows, c.heads, c.headDim, th)
		oracle.RoPEGPTJForwardTol(tol, x, c.posF64(), c.rows, c.heads, c.headDim, th)
	}
	return want, tol
}

// refutedBy reports the largest |got − want|/tol over elements with tol > 0:
// above 1 means the bound refutes want as an explanation of got.
func refutedBy[T float32 | float64](got []T, want, tol []float64) float64 {
	worst := 0.0
	for i := range want {
		if tol[i] > 0 {
			worst = math.Max(worst, math.Abs(float64(got[i])-want[i])/tol[i])
		}
	}
	return worst
}

// RoPEThetaCacheContract checks FALSIFY-CUDA-ROPE-THETA-CACHE-KEY-001.
func RoPEThetaCacheContract(t TB, impl RoPEForwarder, mode Positions) {
	t.Helper()
	dev, lim := onDevice(t, RoPEThetaCache)
	lim = lim.Cap(1 << 16)       // seven launches and oracles a check
	var inseparable atomic.Int64 // over every rapid loop of the run
	check(t, RoPEThetaCache, ImplKernels(impl), func(rt *rapid.T, o *Obs) {
		c := drawRoPECase(rt, lim, mode, 4, 1, gen.Normal, gen.MixedScale)
		thetas := []float32{1e4, 5e5, 1e6, 1e4, gen.Theta().Draw(rt, "theta.random"), 1e6, 5e5}
		start := rapid.IntRange(0, len(thetas)-1).Draw(rt, "theta.start")
		thetas = append(thetas[start:], thetas[:start]...)
		o.Context(c.heads*c.headDim, "%v thetas=%v", c, thetas)
		// The thetas repeat: each distinct one's oracle and bound are
		// computed once (Within widens the bound it is given in place, so it
		// gets a copy).
		type wantTol struct{ want, tol []float64 }
		oracles := map[float32]wantTol{}
		at := func(th float32) wantTol {
			w, ok := oracles[th]
			if !ok {
				w.want, w.tol = ropeOracle(c, th, oracle.RoPENeoX)
				oracles[th] = w
			}
			return w
		}
		for k, th := range thetas {
			y := runRoPE(o, dev, impl, mode, c, th)
			w := at(th)
			want, tol := w.want, slices.Clone(w.tol)
			o.Within(fmt.Sprintf("y (call %d, θ=%g)", k, th), y, want, tol)
			// A stale module computes the oracle at the θ of the call before
			// it. Where that oracle and this call's are more than 2·tol apart
			// somewhere, no output is within the bound of both, so Within
			// above refutes the stale θ. Where they are not, this input cannot
			// tell the two θ apart (e.g. head_dim 4 at position 129531:
			// 129531/100 and 129531/707 rad are 0.012 rad apart mod 2π), and
			// no kernel is to blame: such calls are counted, not failed.
			if prev := thetas[(k+len(thetas)-1)%len(thetas)]; prev != th {
				if refutedBy(want, at(prev).want, tol) <= 2 { // the two oracles are within 2·tol
					inseparable.Add(1)
				}
			}
		}
	})
	if n := inseparable.Load(); n > 0 {
		t.Config().Recorder.Record(outcome.Outcome{ID: RoPEThetaCache, Notes: []string{fmt.Sprintf("%d call(s) whose input could not tell their θ from the previous call's (the two oracles within 2·tol of each other)", n)}})
	}
}

// RoPEBasisContract checks FALSIFY-CUDA-NF4-TRAIN-LOSS-PARITY-001 with a
// batched forward and the backward.
func RoPEBasisContract(t TB, fwd RoPEForwarder, mode Positions, bwd RoPEBackwarder) {
	t.Helper()
	dev, lim := onDevice(t, RoPEBasis)
	lim = lim.Cap(1 << 16) // four launches and oracles a check
	check(t, RoPEBasis, ImplKernels(fwd, bwd), func(rt *rapid.T, o *Obs) {
		c := drawRoPECase(rt, lim, mode, 4, 1, gen.Normal, gen.MixedScale)
		o.Context(c.heads*c.headDim, "%v", c)
		y := runRoPE(o, dev, fwd, mode, c, c.theta)
		want, tol := ropeOracle(c, c.theta, oracle.RoPENeoX)
		o.Within("y (NeoX oracle)", y, want, tol)
		gptj, tolJ := ropeOracle(c, c.theta, oracle.RoPEGPTJ)
		if r := refutedBy(y, gptj, tolJ); r <= 1 {
			o.Fatalf("output is also within the bound of the GPT-J oracle (ratio %.3g): NeoX and GPT-J not told apart", r)
		}
		// Each pair keeps its norm: |‖ŷ_pair‖ − ‖x_pair‖| ≤ ‖ŷ − y‖ ≤ sqrt(tol_p² + tol_q²).
		half, d := c.headDim/2, c.headDim
		for base := 0; base < len(y); base += d {
			for i := 0; i < half; i++ {
				p, q := base+i, base+i+half
				nx := math.Hypot(float64(c.x.Data[p]), float64(c.x.Data[q]))
				ny := math.Hypot(float64(y[p]), float64(y[q]))
				bound := math.Hypot(tol[p], tol[q]) + 4*oracle.Eps64*nx
				o.Ratiof(math.Abs(ny-nx), bound, "pair norm at element %d", p)
			}
		}
		// Position 0 is the identity.
		zero := c
		zero.pos = make([]uint32, c.rows)
		y0 := runRoPE(o, dev, fwd, mode, zero, c.theta)
		o.Within("y at position 0 (identity)", y0, gen.F64(c.x.Data), make([]float64, len(y0)))
		// The backward is the adjoint of the forward as computed: ⟨ŷ, w⟩ =
		// ⟨x, d̂x⟩ up to the rounding of the rotation itself. A gradient must
		// be the transpose of the function the forward actually evaluated,
		// so both must turn each pair by the same float32 angle (ĉ, ŝ). Then
		// the exact parts cancel and what remains is the rounding of the two
		// products and the sum of every output (γ₂ of |x_p·ĉ| + |x_q·ŝ|,
		// |ĉ|, |ŝ| ≤ 1, counted for the forward and for the backward):
		//   |⟨ŷ, w⟩ − ⟨x, d̂x⟩| ≤ 2γ₂·Σ_pairs (|x_p| + |x_q|)·(|w_p| + |w_q|)
		// plus the float64 dot products' own error. The float32 angle error,
		// which dominates the oracle bound at large positions, does not enter.
		w := gen.Values(rt, "w", c.rows, c.heads*c.headDim, gen.Normal)
		lim.Round("dy", w.Data) // the backward's dy
		dx := runRoPEBackward(o, dev, bwd, c, w.Data)
		lhs, rhs, dotErr := 0.0, 0.0, 0.0
		for i := range y {
			wi, xi := float64(w.Data[i]), float64(c.x.Data[i])
			lhs += float64(y[i]) * wi
			rhs += xi * float64(dx[i])
			dotErr += 2 * float64(len(y)) * oracle.Eps64 * (math.Abs(float64(y[i])*wi) + math.Abs(xi*float64(dx[i])))
		}
		rot := 0.0
		for base := 0; base < len(y); base += d {
			for i := 0; i < half; i++ {
				p, q := base+i, base+i+half
				rot += (math.Abs(float64(c.x.Data[p])) + math.Abs(float64(c.x.Data[q]))) *
					(math.Abs(float64(w.Data[p])) + math.Abs(float64(w.Data[q])))
			}
		}
		bound := 2*oracle.Gamma(2)*rot + dotErr + 8*oracle.Eta32*float64(len(y))
		o.Ratio("adjoint ⟨R̂ x, w⟩ − ⟨x, R̂ᵀ w⟩ (same float32 angles)", math.Abs(lhs-rhs), bound)
		// Element by element: R̂ᵀ(R̂ x) = x. With ĉ = c(1+ε₁), ŝ = s(1+ε₂),
		// |ε| ≤ 5u (sincosf, 2 ulp), ĉ² + ŝ² = 1 + 2(c²ε₁ + s²ε₂) + O(u²), so
		// |ĉ² + ŝ² − 1| ≤ 10u·(1+u); the forward's output carries γ₂·(|x_p| +
		// |x_q|)·(1+5u), the backward adds γ₂·(|ŷ_p| + |ŷ_q|) ≤ 2γ₂·(|x_p| +
		// |x_q|)·(1+12u) and turns the forward's error by at most |ĉ| + |ŝ| ≤ 2(1+5u):
		//   |z_p − x_p| ≤ (|x_p| + |x_q|)·(10u + 4γ₂)·(1 + 16u) + 4η.
		z := runRoPEBackward(o, dev, bwd, c, y)
		tolZ := make([]float64, len(z))
		for base := 0; base < len(y); base += d {
			for i := 0; i < half; i++ {
				p, q := base+i, base+i+half
				m := math.Abs(float64(c.x.Data[p])) + math.Abs(float64(c.x.Data[q]))
				tolZ[p] = m*(10*oracle.U32+4*oracle.Gamma(2))*(1+16*oracle.U32) + 4*oracle.Eta32
				tolZ[q] = tolZ[p]
			}
		}
		o.Within("R̂ᵀ(R̂ x) vs x", z, gen.F64(c.x.Data), tolZ)
	})
}

func runRoPEBackward(o *Obs, dev cudart.Device, bwd RoPEBackwarder, c ropeCase, dy []float32) []float32 {
	o.rt.Helper()
	a := &op.RoPEBackwardArgs{Rows: c.rows, Heads: c.heads, HeadDim: c.headDim, Theta: c.theta, Positions: c.pos,
		DY: dy, DX: make([]float32, len(dy))}
	a.Offsets = o.offsets(bwd, op.RoPEBackward)
	o.Check("rope backward", bwd.RoPEBackward(dev, a))
	return a.DX
}

func ropeBackwardOracle(c ropeCase, dy []float32) (want, tol []float64) {
	d := gen.F64(dy)
	want, tol = make([]float64, len(d)), make([]float64, len(d))
	oracle.RoPENeoXBackward(want, d, c.posF64(), c.rows, c.heads, c.headDim, float64(c.theta))
	oracle.RoPENeoXBackwardTol(tol, d, c.posF64(), c.rows, c.heads, c.headDim, float64(c.theta))
	return want, tol
}

// RoPEBackwardContract checks ROPE-BWD-001.
func RoPEBackwardContract(t TB, bwd RoPEBackwarder) {
	t.Helper()
	dev, lim := onDevice(t, RoPEBackward)
	check(t, RoPEBackward, ImplKernels(bwd), func(rt *rapid.T, o *Obs) {
		c := drawRoPECase(rt, lim, PerRowPositions, 2, 0)
		o.Context(c.heads*c.headDim, "%v", c)
		dx := runRoPEBackward(o, dev, bwd, c, c.x.Data)
		want, tol := ropeBackwardOracle(c, c.x.Data)
		o.Within("dx", dx, want, tol)
	})
}

// The operations of this file: their interfaces, adapters and draws.
type (
	// RoPEForwarder runs rope.neox.forward (one position or one per row).
	RoPEForwarder interface {
		RoPEForward(dev cudart.Device, a *op.RoPEForwardArgs) error
	}
	// RoPEBackwarder runs rope.neox.backward.
	RoPEBackwarder interface {
		RoPEBackward(dev cudart.Device, a *op.RoPEBackwardArgs) error
	}

	ropeFwdFn struct{ fn[op.RoPEForwardArgs] }
	ropeBwdFn struct{ fn[op.RoPEBackwardArgs] }
)

func (f ropeFwdFn) RoPEForward(d cudart.Device, a *op.RoPEForwardArgs) error   { return f.run(d, a) }
func (f ropeBwdFn) RoPEBackward(d cudart.Device, a *op.RoPEBackwardArgs) error { return f.run(d, a) }

// The Operations: head_dim is even and the rotation's PTX approximate, so
// both draw their own problems, with the parity bound.
var (
	RoPEForwardOp = define(op.RoPEForward, RoPEForwarder.RoPEForward,
		func(f fn[op.RoPEForwardArgs]) RoPEForwarder { return ropeFwdFn{f} }, drawRoPEForwardFamily)
	RoPEBackwardOp = define(op.RoPEBackward, RoPEBackwarder.RoPEBackward,
		func(f fn[op.RoPEBackwardArgs]) RoPEBackwarder { return ropeBwdFn{f} }, drawRoPEBackwardFamily)
)

func drawRoPEForwardFamily(rt *rapid.T, lim gen.Limits) drawn[op.RoPEForwardArgs] {
	c := drawRoPECase(rt, lim, PerRowPositions, 2, 0)
	return drawn[op.RoPEForwardArgs]{desc: c.String(), args: &op.RoPEForwardArgs{Rows: c.rows, Heads: c.heads,
		HeadDim: c.headDim, Theta: c.theta, Positions: c.pos, X: c.x.Data, Y: make([]float32, len(c.x.Data))},
		approxTol: func(a *op.RoPEForwardArgs) []float64 { return ropeParityTol(a.X, a.Positions, c, 1) }}
}

func drawRoPEBackwardFamily(rt *rapid.T, lim gen.Limits) drawn[op.RoPEBackwardArgs] {
	c := drawRoPECase(rt, lim, PerRowPositions, 2, 0)
	return drawn[op.RoPEBackwardArgs]{desc: c.String(), args: &op.RoPEBackwardArgs{Rows: c.rows, Heads: c.heads,
		HeadDim: c.headDim, Theta: c.theta, Positions: c.pos, DY: c.x.Data, DX: make([]float32, len(c.x.Data))},
		approxTol: func(a *op.RoPEBackwardArgs) []float64 { return ropeParityTol(a.DY, a.Positions, c, -1) }}
}

// ropeParityTol returns 2·RoPETol for input x at positions pos (sign +1
// forward, −1 backward); c gives the heads, head_dim and θ.
func ropeParityTol(x []float32, pos []uint32, c ropeCase, sign float64) []float64 {
	p := make([]float64, len(pos))
	for i, v := range pos {
		p[i] = float64(v)
	}
	tol := make([]float64, len(x))
	oracle.RoPETol(tol, gen.F64(x), p, len(pos), c.heads, c.headDim, float64(c.theta), oracle.RoPENeoX, sign)
	for i := range tol {
		tol[i] *= 2
	}
	return tol
}
