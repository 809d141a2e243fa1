package emu

import (
	"math"
)

func intCmp(op string, t dtype) func(a, b uint64) bool {
	s := t.signed()
	lt := func(a, b uint64) bool {
		if s {
			return int64(t.ext(a)) < int64(t.ext(b))
		}
		return t.trunc(a) < t.trunc(b)
	}
	eq := func(a, b uint64) bool { return t.trunc(a) == t.trunc(b) }
	ult := func(a, b uint64) bool { return t.trunc(a) < t.trunc(b) }
	switch op {
	case "eq":
		return eq
	case "ne":
		return func(a, b uint64) bool { return !eq(a, b) }
	case "lt", "le", "gt", "ge":
		return ordered(lt, op[0] == 'g', op[1] == 'e')
	case "lo", "ls", "hi", "hs":
		return ordered(ult, op[0] == 'h', op[1] == 's')
	}
	return nil
}

// ordered derives a comparison from the strict order less: a < b, a <= b,
// a > b or a >= b as greater and orEqual say.
func ordered(less func(a, b uint64) bool, greater, orEqual bool) func(a, b uint64) bool {
	switch {
	case !greater && !orEqual:
		return less
	case !greater:
		return func(a, b uint64) bool { return !less(b, a) }
	case !orEqual:
		return func(a, b uint64) bool { return less(b, a) }
	}
	return func(a, b uint64) bool { return !less(a, b) }
}

func floatCmp(op string, t dtype, ftz bool) func(a, b uint64) bool {
	var c func(x, y float64) bool
	unordered := false
	base := op
	if len(op) == 3 && op[2] == 'u' {
		unordered, base = true, op[:2]
	}
	switch base {
	case "eq":
		c = func(x, y float64) bool { return x == y }
	case "ne":
		c = func(x, y float64) bool { return x != y }
	case "lt":
		c = func(x, y float64) bool { return x < y }
	case "le":
		c = func(x, y float64) bool { return x <= y }
	case "gt":
		c = func(x, y float64) bool { return x > y }
	case "ge":
		c = func(x, y float64) bool { return x >= y }
	case "num":
		return func(a, b uint64) bool { return !math.IsNaN(fval(t, a)) && !math.IsNaN(fval(t, b)) }
	case "nan":
		return func(a, b uint64) bool { return math.IsNaN(fval(t, a)) || math.IsNaN(fval(t, b)) }
	default:
		return nil
	}
	flush := ftz && t.k == 'f' && t.n == 4
	return func(a, b uint64) bool {
		x, y := fval(t, a), fval(t, b)
		if flush {
			x, y = float64(ftz32(float32(x))), float64(ftz32(float32(y)))
		}
		if math.IsNaN(x) || math.IsNaN(y) {
			return unordered
		}
		return c(x, y)
	}
}

// execSetp: p = cmp(a, b) BOP c; the optional second destination gets
// !cmp(a, b) BOP c.
func execSetp(w *warp, in *inst, m uint32) {
	a, b := w.r(in.a), w.r(in.b)
	var r uint32
	cmp := in.cmp
	forLanes(m, func(l int) {
		if cmp(a[l], b[l]) {
			r |= 1 << l
		}
	})
	q := ^r
	if in.bop != 0 {
		c := w.preds[in.c]
		if in.cneg {
			c = ^c
		}
		r, q = combine(in.bop, r, c), combine(in.bop, q, c)
	}
	w.preds[in.d] = w.preds[in.d]&^m | r&m
	if in.d2 >= 0 {
		w.preds[in.d2] = w.preds[in.d2]&^m | q&m
	}
}

func combine(op uint8, a, b uint32) uint32 {
	switch op {
	case 1:
		return a & b
	case 2:
		return a | b
	}
	return a ^ b
}

// execSet: d = cmp(a, b) BOP c ? (f32: 1.0, int: all ones) : 0.
func execSet(w *warp, in *inst, m uint32) {
	a, b, d := w.r(in.a), w.r(in.b), w.r(in.d)
	c := uint32(fullMask)
	if in.bop != 0 {
		c = w.preds[in.c]
		if in.cneg {
			c = ^c
		}
	}
	one := uint64(0xFFFFFFFF)
	if in.t.k == 'f' {
		one = uint64(math.Float32bits(1))
	}
	forLanes(m, func(l int) {
		v := in.cmp(a[l], b[l])
		cb := c>>l&1 != 0
		switch in.bop {
		case 1:
			v = v && cb
		case 2:
			v = v || cb
		case 3:
			v = v != cb
		}
		if v {
			d[l] = one
		} else {
			d[l] = 0
		}
	})
}

func execSelp(w *warp, in *inst, m uint32) {
	d, a, b := w.r(in.d), w.r(in.a), w.r(in.b)
	p := w.preds[in.c]
	if in.cneg {
		p = ^p
	}
	forLanes(m, func(l int) {
		if p>>l&1 != 0 {
			d[l] = a[l]
		} else {
			d[l] = b[l]
		}
	})
}

func execPredMov(w *warp, in *inst, m uint32) {
	p := w.preds[in.a]
	if in.aneg {
		p = ^p
	}
	w.preds[in.d] = w.preds[in.d]&^m | p&m
}

func execPredLogic(w *warp, in *inst, m uint32) {
	a, b := w.preds[in.a], w.preds[in.b]
	if in.aneg {
		a = ^a
	}
	if in.cneg {
		b = ^b
	}
	var r uint32
	switch in.bop {
	case 1:
		r = a & b
	case 2:
		r = a | b
	default:
		r = a ^ b
	}
	w.preds[in.d] = w.preds[in.d]&^m | r&m
}

// execPredTest sets predicate d to cmp(a) (testp, isspacep).
func execPredTest(w *warp, in *inst, m uint32) {
	a := w.r(in.a)
	var r uint32
	forLanes(m, func(l int) {
		if in.cmp(a[l], 0) {
			r |= 1 << l
		}
	})
	w.preds[in.d] = w.preds[in.d]&^m | r
}
