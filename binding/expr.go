package binding

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// An expression is integer arithmetic over the shape and the binding's
// constants: numbers, names, + - * / % (truncating division, as in C),
// unary minus, parentheses, the functions cdiv(a, b), min(a, b, …),
// max(a, b, …) and if(cond, a, b), and — in constraints and as if's first
// argument only — comparisons (== != < <= > >=) joined by &&.
type expr interface {
	eval(env func(string) (int64, error)) (int64, error)
	names(add func(string))
}

type (
	numExpr  struct{ v int64 }
	nameExpr struct {
		name string
		pos  int
	}
	unaryExpr struct {
		x   expr
		pos int
	}
	binExpr struct {
		op   string
		x, y expr
		pos  int
	}
	callExpr struct {
		fn   string
		args []expr
		pos  int
	}
)

func (e numExpr) eval(func(string) (int64, error)) (int64, error) { return e.v, nil }
func (e nameExpr) eval(env func(string) (int64, error)) (int64, error) {
	return env(e.name)
}
func (e unaryExpr) eval(env func(string) (int64, error)) (int64, error) {
	v, err := e.x.eval(env)
	if err == nil && v == math.MinInt64 {
		return 0, errOverflow(e.pos)
	}
	return -v, err
}

// errOverflow is an arithmetic result outside int64: the shape makes the
// expression meaningless, and wrapping would hand the kernel a wrong size.
func errOverflow(pos int) error {
	return fmt.Errorf("integer overflow at column %d", pos+1)
}

func (e binExpr) eval(env func(string) (int64, error)) (int64, error) {
	a, err := e.x.eval(env)
	if err != nil {
		return 0, err
	}
	if e.op == "&&" && a == 0 {
		return 0, nil
	}
	b, err := e.y.eval(env)
	if err != nil {
		return 0, err
	}
	switch e.op {
	case "+", "-", "*":
		if r, ok := arith(e.op, a, b); ok {
			return r, nil
		}
		return 0, errOverflow(e.pos)
	case "/", "%":
		if b == 0 {
			return 0, fmt.Errorf("division by zero at column %d", e.pos+1)
		}
		if a == math.MinInt64 && b == -1 {
			return 0, errOverflow(e.pos)
		}
		if e.op == "/" {
			return a / b, nil
		}
		return a % b, nil
	}
	return bool64(compare(e.op, a, b)), nil
}

// arith returns a op b for + - *, and false when the result does not fit
// int64.
func arith(op string, a, b int64) (int64, bool) {
	switch op {
	case "+":
		r := a + b
		return r, (r > a) == (b > 0)
	case "-":
		r := a - b
		return r, (r < a) == (b > 0)
	}
	if a == 0 || b == 0 {
		return 0, true
	}
	r := a * b
	return r, r/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)
}

func compare(op string, a, b int64) bool {
	switch op {
	case "==":
		return a == b
	case "!=":
		return a != b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "&&":
		return a != 0 && b != 0
	}
	panic("binding: unknown operator " + op)
}

func bool64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (e callExpr) eval(env func(string) (int64, error)) (int64, error) {
	vs := make([]int64, len(e.args))
	for i, a := range e.args {
		v, err := a.eval(env)
		if err != nil {
			return 0, err
		}
		vs[i] = v
	}
	switch e.fn {
	case "cdiv":
		if vs[1] == 0 {
			return 0, fmt.Errorf("cdiv by zero at column %d", e.pos+1)
		}
		// Ceiling division for the non-negative operands shapes have.
		n, ok := arith("+", vs[0], vs[1])
		if n, ok2 := arith("-", n, 1); ok && ok2 && !(n == math.MinInt64 && vs[1] == -1) {
			return n / vs[1], nil
		}
		return 0, errOverflow(e.pos)
	case "min":
		m := vs[0]
		for _, v := range vs[1:] {
			m = min(m, v)
		}
		return m, nil
	case "if":
		if vs[0] != 0 {
			return vs[1], nil
		}
		return vs[2], nil
	case "max":
		m := vs[0]
		for _, v := range vs[1:] {
			m = max(m, v)
		}
		return m, nil
	}
	panic("binding: unknown function " + e.fn)
}

func (numExpr) names(func(string))         {}
func (e nameExpr) names(add func(string))  { add(e.name) }
func (e unaryExpr) names(add func(string)) { e.x.names(add) }
func (e binExpr) names(add func(string))   { e.x.names(add); e.y.names(add) }
func (e callExpr) names(add func(string)) {
	for _, a := range e.args {
		a.names(add)
	}
}

// ExprError is an expression that does not parse: the text and the column
// (1-based) where parsing stopped.
type ExprError struct {
	Expr   string
	Column int
	Msg    string
}

func (e *ExprError) Error() string {
	return fmt.Sprintf("expression %q: column %d: %s\n\t%s\n\t%s^", e.Expr, e.Column, e.Msg, e.Expr, strings.Repeat(" ", e.Column-1))
}

// parseExpr parses an arithmetic expression; cond allows comparisons and &&.
func parseExpr(src string, cond bool) (expr, error) {
	p := &exprParser{src: src}
	p.next()
	var e expr
	var err error
	if cond {
		e, err = p.condition()
	} else {
		e, err = p.sum()
	}
	if err != nil {
		return nil, err
	}
	if p.tok != "" {
		if !cond && isComparison(p.tok) {
			return nil, p.errf("comparison %q is allowed in constraints only", p.tok)
		}
		return nil, p.errf("unexpected %q", p.tok)
	}
	return e, nil
}

func isComparison(t string) bool {
	switch t {
	case "==", "!=", "<", "<=", ">", ">=", "&&":
		return true
	}
	return false
}

type exprParser struct {
	src      string
	off      int    // offset after tok
	tok      string // current token; "" at the end
	tokPos   int    // offset of tok
	isNum    bool
	isName   bool
	numValue int64
	lexErr   *ExprError
}

func (p *exprParser) errf(format string, args ...any) *ExprError {
	if p.lexErr != nil {
		return p.lexErr
	}
	return &ExprError{Expr: p.src, Column: p.tokPos + 1, Msg: fmt.Sprintf(format, args...)}
}

func (p *exprParser) next() {
	for p.off < len(p.src) && (p.src[p.off] == ' ' || p.src[p.off] == '\t') {
		p.off++
	}
	p.tokPos, p.isNum, p.isName = p.off, false, false
	if p.off >= len(p.src) {
		p.tok = ""
		return
	}
	c := p.src[p.off]
	switch {
	case c >= '0' && c <= '9':
		end := p.off
		for end < len(p.src) && (isIdent(p.src[end])) {
			end++
		}
		p.tok = p.src[p.off:end]
		v, err := strconv.ParseInt(strings.ReplaceAll(p.tok, "_", ""), 0, 64)
		if err != nil && p.lexErr == nil {
			p.lexErr = &ExprError{Expr: p.src, Column: p.off + 1, Msg: fmt.Sprintf("bad number %q", p.tok)}
		}
		p.isNum, p.numValue, p.off = true, v, end
		return
	case isIdent(c):
		end := p.off
		for end < len(p.src) && isIdent(p.src[end]) {
			end++
		}
		p.tok, p.isName, p.off = p.src[p.off:end], true, end
		return
	}
	for _, op := range []string{"==", "!=", "<=", ">=", "&&", "+", "-", "*", "/", "%", "(", ")", ",", "<", ">"} {
		if strings.HasPrefix(p.src[p.off:], op) {
			p.tok = op
			p.off += len(op)
			return
		}
	}
	p.tok = p.src[p.off : p.off+1]
	if p.lexErr == nil {
		p.lexErr = &ExprError{Expr: p.src, Column: p.off + 1, Msg: fmt.Sprintf("unexpected character %q", p.tok)}
	}
	p.off++
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *exprParser) condition() (expr, error) {
	x, err := p.comparison()
	if err != nil {
		return nil, err
	}
	for p.tok == "&&" {
		pos := p.tokPos
		p.next()
		y, err := p.comparison()
		if err != nil {
			return nil, err
		}
		x = binExpr{op: "&&", x: x, y: y, pos: pos}
	}
	return x, nil
}

func (p *exprParser) comparison() (expr, error) {
	x, err := p.sum()
	if err != nil {
		return nil, err
	}
	switch p.tok {
	case "==", "!=", "<", "<=", ">", ">=":
	default:
		return nil, p.errf("want a comparison (==, !=, <, <=, >, >=)")
	}
	op, pos := p.tok, p.tokPos
	p.next()
	y, err := p.sum()
	if err != nil {
		return nil, err
	}
	return binExpr{op: op, x: x, y: y, pos: pos}, nil
}

func (p *exprParser) sum() (expr, error) {
	x, err := p.product()
	if err != nil {
		return nil, err
	}
	for p.tok == "+" || p.tok == "-" {
		op, pos := p.tok, p.tokPos
		p.next()
		y, err := p.product()
		if err != nil {
			return nil, err
		}
		x = binExpr{op: op, x: x, y: y, pos: pos}
	}
	return x, nil
}

func (p *exprParser) product() (expr, error) {
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.tok == "*" || p.tok == "/" || p.tok == "%" {
		op, pos := p.tok, p.tokPos
		p.next()
		y, err := p.unary()
		if err != nil {
			return nil, err
		}
		x = binExpr{op: op, x: x, y: y, pos: pos}
	}
	return x, nil
}

func (p *exprParser) unary() (expr, error) {
	if p.tok == "-" {
		pos := p.tokPos
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return unaryExpr{x: x, pos: pos}, nil
	}
	return p.primary()
}

var functions = map[string][2]int{"cdiv": {2, 2}, "min": {2, 1 << 30}, "max": {2, 1 << 30}, "if": {3, 3}}

func (p *exprParser) primary() (expr, error) {
	if p.lexErr != nil {
		return nil, p.lexErr
	}
	switch {
	case p.tok == "":
		return nil, p.errf("unexpected end of expression")
	case p.isNum:
		v := p.numValue
		p.next()
		return numExpr{v}, nil
	case p.isName:
		name, pos := p.tok, p.tokPos
		p.next()
		if p.tok != "(" {
			return nameExpr{name: name, pos: pos}, nil
		}
		arity, ok := functions[name]
		if !ok {
			p.tokPos = pos
			return nil, p.errf("unknown function %q (cdiv, min, max, if)", name)
		}
		p.next()
		var args []expr
		for {
			parse := p.sum
			if name == "if" && len(args) == 0 {
				parse = p.condition
			}
			a, err := parse()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			if p.tok == "," {
				p.next()
				continue
			}
			if p.tok != ")" {
				return nil, p.errf("want ',' or ')' in the arguments of %s", name)
			}
			p.next()
			break
		}
		if len(args) < arity[0] || len(args) > arity[1] {
			p.tokPos = pos
			if arity[0] == arity[1] {
				return nil, p.errf("%s takes %d arguments, got %d", name, arity[0], len(args))
			}
			return nil, p.errf("%s takes at least %d arguments, got %d", name, arity[0], len(args))
		}
		return callExpr{fn: name, args: args, pos: pos}, nil
	case p.tok == "(":
		p.next()
		x, err := p.sum()
		if err != nil {
			return nil, err
		}
		if p.tok != ")" {
			return nil, p.errf("want ')'")
		}
		p.next()
		return x, nil
	}
	return nil, p.errf("unexpected %q", p.tok)
}
