package binding

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The load-time feasibility search: the shapes a binding's constraints
// allow, found over a grid of each shape parameter's values. The grid is
// the generators' own (every small value, the powers of two and their
// neighbours) joined with the values the constraints name: each integer
// they contain (literals, the constants and constant lets they use) with
// its neighbours and its multiples, so that "hidden % 128 == 0",
// "rows >= 65" or "heads == 8 && head_dim == 64" are met by grid points.

// Search bounds: the largest value of each parameter tried, and the most
// elements (rows·hidden) a feasible shape may have.
const (
	searchMaxRows    = 1 << 16
	searchMaxHidden  = 1 << 16
	searchMaxHeads   = 256
	searchMaxHeadDim = 4096
	// searchElements is properties.RegimeElements: the largest tensors any
	// generator draws.
	searchElements = 1 << 20
	// feasibleCap bounds the feasible shapes kept for the generators
	// (gen.Domain.Feasible), the smallest first.
	feasibleCap = 4096
	// multiplesOf is how many multiples of a constraint's number are tried.
	multiplesOf = 64
	// searchEnough ends the search once this many feasible shapes are
	// found (the enumeration goes from small values up, and the smallest
	// feasibleCap of them are kept).
	searchEnough = 4 * feasibleCap
)

// searchParam is one shape parameter of the search: its name and the
// values tried, in increasing order.
type searchParam struct {
	name   string
	values []int
	max    int
}

func (p searchParam) String() string {
	v := p.values
	if len(v) > 12 {
		return fmt.Sprintf("%s in {%s, …, %s} (%d values in %d..%d)", p.name, joinInts(v[:8]), joinInts(v[len(v)-3:]), len(v), v[0], v[len(v)-1])
	}
	return fmt.Sprintf("%s in {%s}", p.name, joinInts(v))
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// constraintNumbers returns the integers the constraints contain: their
// literals, and the values of the constants and constant lets they name.
func (b *Binding) constraintNumbers() []int64 {
	var out []int64
	var walk func(e expr, depth int)
	walk = func(e expr, depth int) {
		switch e := e.(type) {
		case numExpr:
			out = append(out, e.v)
		case nameExpr:
			if v, ok := b.consts[e.name]; ok {
				out = append(out, v)
			} else if l, ok := b.lets[e.name]; ok && depth < 64 {
				if b.constant(l) {
					if v, err := l.eval(b.env(Shape{}, nil)); err == nil {
						out = append(out, v)
					}
				}
				walk(l, depth+1)
			}
		case unaryExpr:
			walk(e.x, depth)
		case binExpr:
			walk(e.x, depth)
			walk(e.y, depth)
		case callExpr:
			for _, a := range e.args {
				walk(a, depth)
			}
		}
	}
	for _, c := range b.constraints {
		walk(c.e, 0)
	}
	return out
}

// grid returns the values tried for a parameter up to hi: 1..small, the
// powers of two from 128 and their neighbours, the extra values, and each
// constraint number n in range with n−1, n+1 and its multiples; only the
// even ones when even is set (RoPE's head_dim).
func grid(small, hi int, nums []int64, even bool, extra ...int) []int {
	set := map[int]bool{}
	add := func(v int) {
		if v >= 1 && v <= hi && (!even || v%2 == 0) {
			set[v] = true
		}
	}
	for v := 1; v <= small; v++ {
		add(v)
	}
	for p := 128; p <= hi; p *= 2 {
		add(p - 1)
		add(p)
		add(p + 1)
	}
	for _, v := range extra {
		add(v)
	}
	for _, n := range nums {
		if n < 1 || n > int64(hi)+1 {
			continue
		}
		add(int(n) - 1)
		add(int(n) + 1)
		for m := 1; m <= multiplesOf && int64(m)*n <= int64(hi); m++ {
			add(m * int(n))
		}
	}
	v := make([]int, 0, len(set))
	for x := range set {
		v = append(v, x)
	}
	sort.Ints(v)
	return v
}

// searchSpace returns the parameters the search varies for b's contract,
// and what it holds fixed.
func (b *Binding) searchSpace() (params []searchParam, fixed string) {
	nums := b.constraintNumbers()
	rows := searchParam{name: "rows", max: searchMaxRows, values: grid(64, searchMaxRows, nums, false, 1000, 2048, 2049, 4096)}
	if !perHead(b.Contract) {
		hidden := searchParam{name: "hidden", max: searchMaxHidden, values: grid(64, searchMaxHidden, nums, false, 4097)}
		return []searchParam{rows, hidden}, fmt.Sprintf("heads = head_dim = 0 (%s is not per head)", b.Contract)
	}
	rope := pairedHeadDim(b.Contract)
	heads := searchParam{name: "heads", max: searchMaxHeads, values: grid(32, searchMaxHeads, nums, false)}
	headDim := searchParam{name: "head_dim", max: searchMaxHeadDim, values: grid(64, searchMaxHeadDim, nums, rope)}
	fixed = "hidden = heads·head_dim"
	if rope {
		fixed += "; head_dim even (" + b.Contract + " rotates pairs)"
	}
	return []searchParam{rows, heads, headDim}, fixed
}

// conjuncts returns the terms of e joined by && at its top.
func conjuncts(e expr) []expr {
	if x, ok := e.(binExpr); ok && x.op == "&&" {
		return append(conjuncts(x.x), conjuncts(x.y)...)
	}
	return []expr{e}
}

// shapeDeps returns the shape names e depends on, through lets.
func (b *Binding) shapeDeps(e expr) map[string]bool {
	deps := map[string]bool{}
	var visit func(expr, int)
	visit = func(e expr, depth int) {
		e.names(func(n string) {
			if _, shape := shapeValue(Shape{}, n); shape {
				deps[n] = true
			} else if l, let := b.lets[n]; let && depth < 64 {
				visit(l, depth+1)
			}
		})
	}
	visit(e, 0)
	return deps
}

// narrowParams drops from each parameter the values that fail a conjunct
// of the constraints depending on that parameter alone ("heads == 8",
// "hidden % 128 == 0"), so that the product searched is that of the
// values left. A conjunct that cannot be evaluated keeps the value: the
// full check decides.
func (b *Binding) narrowParams(params []searchParam) []searchParam {
	var terms []expr
	for _, c := range b.constraints {
		terms = append(terms, conjuncts(c.e)...)
	}
	out := make([]searchParam, len(params))
	for i, p := range params {
		out[i] = p
		var own []expr
		for _, t := range terms {
			if d := b.shapeDeps(t); len(d) == 1 && d[p.name] {
				own = append(own, t)
			}
		}
		if len(own) == 0 {
			continue
		}
		out[i].values = nil
		for _, v := range p.values {
			var s Shape
			switch p.name {
			case "rows":
				s.Rows = v
			case "hidden":
				s.Hidden = v
			case "heads":
				s.Heads = v
			case "head_dim":
				s.HeadDim = v
			}
			env, keep := b.env(s, nil), true
			for _, t := range own {
				if x, err := t.eval(env); err == nil && x == 0 {
					keep = false
					break
				}
			}
			if keep {
				out[i].values = append(out[i].values, v)
			}
		}
	}
	return out
}

// search returns shapes of the search space that meet the constraints and
// have at most searchElements elements, smallest first (by elements, then
// row length, then rows), at most feasibleCap of them; and the space
// searched, for an error when there are none. Each parameter's values are
// first narrowed by the constraints on it alone (narrowParams); the
// enumeration stops after searchEnough feasible shapes.
func (b *Binding) search() (feasible []Shape, params []searchParam, fixed string) {
	params, fixed = b.searchSpace()
	vals := b.narrowParams(params)
	var all []Shape
	try := func(s Shape) {
		if b.accepts(s) == nil {
			all = append(all, s)
		}
	}
	rows := vals[0].values
	if len(params) == 2 {
		for _, h := range vals[1].values {
			if len(all) >= searchEnough {
				break
			}
			for _, r := range rows {
				if r*h > searchElements {
					break
				}
				try(Shape{Rows: r, Hidden: h})
			}
		}
	} else {
		for _, hd := range vals[2].values {
			if len(all) >= searchEnough {
				break
			}
			for _, n := range vals[1].values {
				if n*hd > searchElements {
					break
				}
				for _, r := range rows {
					if r*n*hd > searchElements {
						break
					}
					try(headShape(r, n, hd))
				}
			}
		}
	}
	slices.SortFunc(all, func(x, y Shape) int {
		if c := x.Rows*x.Hidden - y.Rows*y.Hidden; c != 0 {
			return c
		}
		if c := x.Hidden - y.Hidden; c != 0 {
			return c
		}
		if c := x.Rows - y.Rows; c != 0 {
			return c
		}
		return x.Heads - y.Heads
	})
	if len(all) > feasibleCap {
		all = all[:feasibleCap]
	}
	for i, v := range vals {
		if len(v.values) == 0 {
			fixed += fmt.Sprintf("; no %s tried meets the constraints on %s alone", params[i].name, params[i].name)
		}
	}
	return all, params, fixed
}

// searchError says that no shape of the space searched meets the
// constraints, naming the space.
func (b *Binding) searchError(params []searchParam, fixed string) string {
	var ps []string
	for _, p := range params {
		ps = append(ps, p.String())
	}
	return fmt.Sprintf("no shape meets the constraints %s: searched %s; held fixed: %s; at most %d elements (rows·hidden)",
		b.constraintList(), strings.Join(ps, "; "), fixed, searchElements)
}
