package binding

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties"
)

// Impl returns the implementation of the binding's contract interface:
// a properties.RMSNormForwarder for rmsnorm.forward, a
// properties.RMSNormBackwarder for rmsnorm.backward, and so on, made by
// properties.Implement from the op table's name, with no switch over the
// operations. The binding describes it: its kernels as the report names
// them, its PTX entries, its declared reduction orders (none: the serial
// worst case), the optional outputs it computes.
func (b *Binding) Impl() any {
	im, _ := properties.Implement(b.Contract, b.launch, b)
	return im
}

// launch runs the bound kernels on args, the contract's arguments (a *A
// of the operation's argument type), read through the op table: each
// tensor by its field, the shape (Rows, Hidden or Heads·HeadDim) and the
// scalars Eps, Theta and Pos. An optional output the binding does not
// compute is refused when asked for; Alias writes output NAME_out over
// input NAME (fused residual in place); per-row positions passed to a
// kernel that takes one position (pos) must all be equal, and a kernel
// bound with positions gets Pos repeated when none are passed.
func (b *Binding) launch(dev cudart.Device, args any) error {
	o, ok := op.Lookup(b.Contract)
	v := reflect.ValueOf(args)
	if !ok || v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Type().Name() != o.Args() {
		return b.errf("%s cannot take arguments %T", b.Contract, args)
	}
	v = v.Elem()
	field := func(name string) (reflect.Value, bool) {
		f := v.FieldByName(name)
		return f, f.IsValid()
	}
	c := &call{in: map[string][]float32{}, out: map[string][]float32{}}
	rows, _ := field("Rows")
	if heads, ok := field("Heads"); ok {
		headDim, _ := field("HeadDim")
		c.shape = headShape(int(rows.Int()), int(heads.Int()), int(headDim.Int()))
	} else {
		hidden, _ := field("Hidden")
		c.shape = op.Shape{Rows: int(rows.Int()), Hidden: int(hidden.Int())}
	}
	if f, ok := field("Eps"); ok {
		c.eps = float32(f.Float())
	}
	if f, ok := field("Theta"); ok {
		c.theta = float32(f.Float())
	}
	if f, ok := field("Pos"); ok {
		c.pos = uint32(f.Uint())
	}
	if f, ok := field("Offsets"); ok && b.Views {
		c.offsets = f.Interface().(op.Offsets)
		if bad := op.CheckOffsets(o, c.offsets); len(bad) > 0 {
			return fmt.Errorf("binding %s: %s: %w", b.Name, strings.Join(bad, "; "), ErrInvalid)
		}
	}
	var asked []string
	for _, t := range o.Tensors() {
		f := v.FieldByName(t.Field)
		switch {
		case t.Kind == "u32":
			c.positions = f.Interface().([]uint32)
		case t.Role == op.In:
			c.in[t.Name] = f.Interface().([]float32)
		default:
			c.out[t.Name] = f.Interface().([]float32)
			if t.Optional && !f.IsNil() && !b.Computes(t.Name) {
				asked = append(asked, t.Name)
			}
		}
	}
	if len(asked) > 0 {
		return b.errf("the contract asks for %s, but the bound kernel saves no statistics", strings.Join(asked, " and "))
	}
	if f, ok := field("Alias"); ok && f.Bool() {
		c.alias = map[string]string{}
		for name := range c.out {
			if in, ok := strings.CutSuffix(name, "_out"); ok {
				c.alias[name] = in
			}
		}
	}
	if c.positions != nil && !b.bound["positions"] {
		for _, p := range c.positions {
			if p != c.positions[0] {
				return b.errf("the bound kernel takes one position for all rows (pos), but the contract passes one per row")
			}
		}
		if len(c.positions) > 0 {
			c.pos = c.positions[0]
		}
	}
	return b.run(dev, c)
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

// TakesOffsets reports whether the contracts may pass the bound kernels
// views at an element offset (properties.OffsetTaker): only where the
// file says views: true.
func (b *Binding) TakesOffsets() bool { return b.Views }

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

// Reductions returns the declared float32 sums at s: none when the file
// declares no order (the contracts then assume the serial worst case).
func (b *Binding) Reductions(s op.Shape) []op.Reduction {
	var rs []op.Reduction
	env := b.env(s, nil)
	for i, r := range b.reductions {
		serial, err1 := b.redExprs[i][0].eval(env)
		tree, err2 := b.redExprs[i][1].eval(env)
		if err1 != nil || err2 != nil {
			continue // the serial worst case applies to this sum
		}
		red := op.Reduction{Serial: int(serial), Tree: int(tree)}
		switch r.Sum {
		case "row":
			red.Name, red.Terms = "Σ per row", s.Hidden
			if perHead(b.Contract) {
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

func headShape(rows, heads, headDim int) op.Shape {
	return op.Shape{Rows: rows, Hidden: heads * headDim, Heads: heads, HeadDim: headDim}
}
