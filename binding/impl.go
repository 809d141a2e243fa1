package binding

import (
	"fmt"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
)

// Impl returns the implementation of the binding's contract interface:
// a properties.RMSNormForwarder for rmsnorm.forward, a
// properties.RMSNormBackwarder for rmsnorm.backward, and so on. It also
// implements AcceptShape and MaxShape (the constraints), InputStorage
// (the dtype), and Reductions when the file declares reduction orders.
func (b *Binding) Impl() any {
	var im any
	switch b.Contract {
	case "rmsnorm.forward":
		im = rmsForward{b}
	case "rmsnorm.backward":
		im = rmsBackward{b}
	case "fused_residual_rmsnorm":
		im = fusedResidual{b}
	case "layernorm.forward":
		im = lnForward{b}
	case "layernorm.backward":
		im = lnBackward{b}
	case "per_head_rmsnorm":
		im = perHeadRMS{b}
	case "rope.neox.forward":
		im = ropeForward{b}
	case "rope.neox.backward":
		im = ropeBackward{b}
	case "softmax.forward":
		im = softmaxForward{b}
	case "softmax.backward":
		im = softmaxBackward{b}
	}
	if len(b.reductions) == 0 {
		return im
	}
	switch x := im.(type) {
	case rmsForward:
		return struct {
			rmsForward
			describer
		}{x, describer{b}}
	case rmsBackward:
		return struct {
			rmsBackward
			describer
		}{x, describer{b}}
	case fusedResidual:
		return struct {
			fusedResidual
			describer
		}{x, describer{b}}
	case lnForward:
		return struct {
			lnForward
			describer
		}{x, describer{b}}
	case lnBackward:
		return struct {
			lnBackward
			describer
		}{x, describer{b}}
	case perHeadRMS:
		return struct {
			perHeadRMS
			describer
		}{x, describer{b}}
	case softmaxForward:
		return struct {
			softmaxForward
			describer
		}{x, describer{b}}
	case softmaxBackward:
		return struct {
			softmaxBackward
			describer
		}{x, describer{b}}
	}
	return im // RoPE has no reductions (the loader refuses them)
}

// Computes reports whether the bound kernels write the contract's optional
// output called name (properties.OptionalOutputs): a saved statistic is
// written when the saved form binds it or its reciprocal (rstd for rms).
// A forward that saves no statistics (an inference kernel) computes none,
// and the contracts ask it for none.
func (b *Binding) Computes(name string) bool {
	if b.bound[name] {
		return true
	}
	for _, r := range b.op.forms[b.Saved] {
		if cr, _ := b.contractRole(r); cr == name && b.bound[r] {
			return true
		}
	}
	return false
}

// AcceptShape reports whether the binding handles s (its constraints); the
// error names the constraint s fails and its line. Generators that honour
// it draw only such shapes.
func (b *Binding) AcceptShape(s op.Shape) error { return b.accepts(s) }

// InputStorage returns the storage format of the binding's data tensors.
// A contract's oracle must see the inputs as the kernel does: rounded to
// this format (oracle.Storage.Round) before the oracle evaluates them; its
// outputs' tolerances then grow by oracle.StorageTol.
func (b *Binding) InputStorage() oracle.Storage { return b.Storage }

// MaxShape returns the largest rows and hidden (or head_dim for the
// per-head contracts) the constraints allow, read from constraints of the
// forms "rows <= N", "rows < N", "hidden <= N", "hidden < N" (and
// head_dim); 0 where no such constraint bounds it. Other constraints
// ("hidden % 8 == 0") are left to AcceptShape.
func (b *Binding) MaxShape() (rows, hidden int) {
	for _, c := range b.constraints {
		e, ok := c.e.(binExpr)
		if !ok {
			continue
		}
		n, okName := e.x.(nameExpr)
		if !okName || !b.constant(e.y) {
			continue
		}
		lim, err := e.y.eval(b.env(op.Shape{}, nil))
		if err != nil {
			continue
		}
		switch e.op {
		case "<":
			lim--
		case "<=":
		default:
			continue
		}
		set := func(p *int) {
			if *p == 0 || int(lim) < *p {
				*p = int(lim)
			}
		}
		switch n.name {
		case "rows":
			set(&rows)
		case "hidden", "head_dim":
			set(&hidden)
		}
	}
	return rows, hidden
}

// HiddenMultiple returns the number every row length must be a multiple
// of, from constraints of the form "hidden % N == 0" (N an expression of
// the constants; several combine to their least common multiple); 1 when
// there is none.
func (b *Binding) HiddenMultiple() int {
	m := 1
	for _, c := range b.constraints {
		e, ok := c.e.(binExpr)
		if !ok || e.op != "==" {
			continue
		}
		mod, ok := e.x.(binExpr)
		zero, okZero := e.y.(numExpr)
		if !ok || mod.op != "%" || !okZero || zero.v != 0 {
			continue
		}
		if n, ok := mod.x.(nameExpr); !ok || n.name != "hidden" || !b.constant(mod.y) {
			continue
		}
		v, err := mod.y.eval(b.env(op.Shape{}, nil))
		if err != nil || v < 1 || v > 1<<20 {
			continue
		}
		m = lcm(m, int(v))
	}
	return m
}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// constant reports whether e depends on no shape name (through lets too).
func (b *Binding) constant(e expr) bool {
	ok := true
	var visit func(expr, int)
	visit = func(e expr, depth int) {
		e.names(func(n string) {
			if _, shape := shapeValue(op.Shape{}, n); shape {
				ok = false
			} else if l, let := b.lets[n]; let && depth < 64 {
				visit(l, depth+1)
			}
		})
	}
	visit(e, 0)
	return ok
}

// describer gives the declared reduction orders in the form
// properties.ReductionDescriber reads.
type describer struct{ b *Binding }

// Reductions returns the declared float32 sums at s.
func (d describer) Reductions(s op.Shape) []op.Reduction {
	var rs []op.Reduction
	env := d.b.env(s, nil)
	for i, r := range d.b.reductions {
		serial, err1 := d.b.redExprs[i][0].eval(env)
		tree, err2 := d.b.redExprs[i][1].eval(env)
		if err1 != nil || err2 != nil {
			continue // the serial worst case applies to this sum
		}
		red := op.Reduction{Serial: int(serial), Tree: int(tree)}
		switch r.Sum {
		case "row":
			red.Name, red.Terms = "Σ per row", s.Hidden
			if perHead(d.b.Contract) {
				red.Terms = s.HeadDim
			}
		case "dgamma":
			red.Name, red.Terms = "dγ: Σ over rows", s.Rows
		case "dbeta":
			red.Name, red.Terms = "dβ: Σ over rows", s.Rows
		}
		rs = append(rs, red)
	}
	return rs
}

// errf returns a binding error (wrapping ErrInvalid) and records it for
// Verify.
func (b *Binding) errf(format string, args ...any) error {
	err := fmt.Errorf("binding %s: "+format+": %w", append(append([]any{b.Name}, args...), ErrInvalid)...)
	b.fault(err)
	return err
}

type rmsForward struct{ *Binding }

// RMSNormForward runs the bound kernels and fills a.Y (and a.RMS when set;
// a kernel that saves rstd has it converted to rms = 1/rstd).
func (f rmsForward) RMSNormForward(dev cudart.Device, a *op.RMSNormForwardArgs) error {
	if a.RMS != nil && f.Saved == "" {
		return f.errf("the contract asks for rms, but the bound kernel saves no statistics")
	}
	return f.run(dev, &call{shape: op.Shape{Rows: a.Rows, Hidden: a.Hidden}, eps: a.Eps,
		in:  map[string][]float32{"x": a.X, "gamma": a.Gamma},
		out: map[string][]float32{"y": a.Y, "rms": a.RMS}})
}

type rmsBackward struct{ *Binding }

// RMSNormBackward runs the bound kernels and fills a.DX and a.DGamma.
func (f rmsBackward) RMSNormBackward(dev cudart.Device, a *op.RMSNormBackwardArgs) error {
	return f.run(dev, &call{shape: op.Shape{Rows: a.Rows, Hidden: a.Hidden},
		in:  map[string][]float32{"x": a.X, "gamma": a.Gamma, "rms": a.RMS, "dy": a.DY},
		out: map[string][]float32{"dx": a.DX, "dgamma": a.DGamma}})
}

type fusedResidual struct{ *Binding }

// FusedResidualRMSNorm runs the bound kernels and fills a.ResidualOut and
// a.Y; with a.Alias, residual_out is written over residual's buffer.
func (f fusedResidual) FusedResidualRMSNorm(dev cudart.Device, a *op.FusedResidualRMSNormArgs) error {
	c := &call{shape: op.Shape{Rows: a.Rows, Hidden: a.Hidden}, eps: a.Eps,
		in:  map[string][]float32{"residual": a.Residual, "x": a.X, "gamma": a.Gamma},
		out: map[string][]float32{"residual_out": a.ResidualOut, "y": a.Y}}
	if a.Alias {
		c.alias = map[string]string{"residual_out": "residual"}
	}
	return f.run(dev, c)
}

type lnForward struct{ *Binding }

// LayerNormForward runs the bound kernels and fills a.Y (and a.Mean,
// a.Rstd when set; a kernel that saves std has it converted to 1/std).
func (f lnForward) LayerNormForward(dev cudart.Device, a *op.LayerNormForwardArgs) error {
	if (a.Mean != nil || a.Rstd != nil) && f.Saved == "" {
		return f.errf("the contract asks for mean and rstd, but the bound kernel saves no statistics")
	}
	return f.run(dev, &call{shape: op.Shape{Rows: a.Rows, Hidden: a.Hidden}, eps: a.Eps,
		in:  map[string][]float32{"x": a.X, "gamma": a.Gamma, "beta": a.Beta},
		out: map[string][]float32{"y": a.Y, "mean": a.Mean, "rstd": a.Rstd}})
}

type lnBackward struct{ *Binding }

// LayerNormBackward runs the bound kernels and fills a.DX, a.DGamma, a.DBeta.
func (f lnBackward) LayerNormBackward(dev cudart.Device, a *op.LayerNormBackwardArgs) error {
	return f.run(dev, &call{shape: op.Shape{Rows: a.Rows, Hidden: a.Hidden},
		in:  map[string][]float32{"x": a.X, "gamma": a.Gamma, "dy": a.DY, "mean": a.Mean, "rstd": a.Rstd},
		out: map[string][]float32{"dx": a.DX, "dgamma": a.DGamma, "dbeta": a.DBeta}})
}

type perHeadRMS struct{ *Binding }

// PerHeadRMSNorm runs the bound kernels and fills a.Y.
func (f perHeadRMS) PerHeadRMSNorm(dev cudart.Device, a *op.PerHeadRMSNormArgs) error {
	return f.run(dev, &call{shape: headShape(a.Rows, a.Heads, a.HeadDim), eps: a.Eps,
		in:  map[string][]float32{"x": a.X, "gamma": a.Gamma},
		out: map[string][]float32{"y": a.Y}})
}

func headShape(rows, heads, headDim int) op.Shape {
	return op.Shape{Rows: rows, Hidden: heads * headDim, Heads: heads, HeadDim: headDim}
}

type ropeForward struct{ *Binding }

// RoPEForward runs the bound kernels and fills a.Y. A kernel bound with
// positions gets Pos repeated when a.Positions is nil; one bound with pos
// only refuses per-row positions that differ.
func (f ropeForward) RoPEForward(dev cudart.Device, a *op.RoPEForwardArgs) error {
	c := &call{shape: headShape(a.Rows, a.Heads, a.HeadDim), theta: a.Theta, pos: a.Pos, positions: a.Positions,
		in:  map[string][]float32{"x": a.X},
		out: map[string][]float32{"y": a.Y}}
	if a.Positions != nil && !f.bound["positions"] {
		for _, p := range a.Positions {
			if p != a.Positions[0] {
				return f.errf("the bound kernel takes one position for all rows (pos), but the contract passes one per row")
			}
		}
		if len(a.Positions) > 0 {
			c.pos = a.Positions[0]
		}
	}
	return f.run(dev, c)
}

type ropeBackward struct{ *Binding }

// RoPEBackward runs the bound kernels and fills a.DX.
func (f ropeBackward) RoPEBackward(dev cudart.Device, a *op.RoPEBackwardArgs) error {
	return f.run(dev, &call{shape: headShape(a.Rows, a.Heads, a.HeadDim), theta: a.Theta, positions: a.Positions,
		in:  map[string][]float32{"dy": a.DY},
		out: map[string][]float32{"dx": a.DX}})
}

type softmaxForward struct{ *Binding }

// SoftmaxForward runs the bound kernels and fills a.Y.
func (f softmaxForward) SoftmaxForward(dev cudart.Device, a *op.SoftmaxForwardArgs) error {
	return f.run(dev, &call{shape: op.Shape{Rows: a.Rows, Hidden: a.Hidden},
		in:  map[string][]float32{"x": a.X},
		out: map[string][]float32{"y": a.Y}})
}

type softmaxBackward struct{ *Binding }

// SoftmaxBackward runs the bound kernels and fills a.DX.
func (f softmaxBackward) SoftmaxBackward(dev cudart.Device, a *op.SoftmaxBackwardArgs) error {
	return f.run(dev, &call{shape: op.Shape{Rows: a.Rows, Hidden: a.Hidden},
		in:  map[string][]float32{"y": a.Y, "dy": a.DY},
		out: map[string][]float32{"dx": a.DX}})
}
