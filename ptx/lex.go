package ptx

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tDir   // .name (text without the dot)
	tInt   // integer literal (ival)
	tF32   // 0f literal (bits)
	tF64   // 0d or decimal float literal (bits)
	tStr   // string literal (text without quotes)
	tPunct // one character
)

type token struct {
	kind tokKind
	text string
	ival int64
	bits uint64
	line int
	nl   bool // first token on its line
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c == '%' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentChar(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// lex splits src into tokens, dropping comments.
func lex(src string) ([]token, error) {
	var toks []token
	line := 1
	nl := true
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line++
			nl = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, &Error{line, "unterminated comment"}
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += end + 4
			continue
		}
		t := token{line: line, nl: nl}
		nl = false
		start := i
		switch {
		case isIdentStart(c):
			i++
			for i < len(src) {
				if isIdentChar(src[i]) {
					i++
				} else if c == '%' && src[i] == '.' && i+1 < len(src) && isIdentChar(src[i+1]) {
					i++ // %tid.x
				} else {
					break
				}
			}
			t.kind, t.text = tIdent, src[start:i]
		case c == '.' && i+1 < len(src) && (isIdentChar(src[i+1])):
			i++
			for i < len(src) {
				if isIdentChar(src[i]) {
					i++
				} else if src[i] == ':' && i+2 < len(src) && src[i+1] == ':' && isIdentChar(src[i+2]) {
					i += 2 // .L1::no_allocate, .shared::cta
				} else {
					break
				}
			}
			t.kind, t.text = tDir, src[start+1:i]
		case c >= '0' && c <= '9':
			var err error
			i, err = lexNumber(src, i, &t)
			if err != nil {
				return nil, &Error{line, err.Error()}
			}
		case c == '"':
			i++
			var b strings.Builder
			for i < len(src) && src[i] != '"' {
				if src[i] == '\\' && i+1 < len(src) {
					i++
				}
				if src[i] == '\n' {
					return nil, &Error{line, "newline in string"}
				}
				b.WriteByte(src[i])
				i++
			}
			if i >= len(src) {
				return nil, &Error{line, "unterminated string"}
			}
			i++
			t.kind, t.text = tStr, b.String()
		case strings.IndexByte(",;:{}[]()<>+-|!@=*", c) >= 0:
			i++
			t.kind, t.text = tPunct, src[start:i]
		default:
			return nil, &Error{line, fmt.Sprintf("unexpected character %q", c)}
		}
		toks = append(toks, t)
	}
	toks = append(toks, token{kind: tEOF, line: line, nl: true})
	return toks, nil
}

// hexEnd returns the index past the run of hex digits at src[j:].
func hexEnd(src string, j int) int {
	for j < len(src) && isHex(src[j]) {
		j++
	}
	return j
}

func lexNumber(src string, i int, t *token) (int, error) {
	start := i
	if src[i] == '0' && i+1 < len(src) {
		switch src[i+1] {
		case 'f', 'F', 'd', 'D':
			n := 8
			if src[i+1] == 'd' || src[i+1] == 'D' {
				n = 16
			}
			j := hexEnd(src, i+2)
			if j-(i+2) != n {
				return j, fmt.Errorf("bad float literal %q", src[start:j])
			}
			v, err := strconv.ParseUint(src[i+2:j], 16, 64)
			if err != nil {
				return j, err
			}
			t.bits, t.text = v, src[start:j]
			t.kind = tF64
			if n == 8 {
				t.kind = tF32
			}
			return j, nil
		case 'x', 'X', 'b', 'B':
			base := 16
			if src[i+1] == 'b' || src[i+1] == 'B' {
				base = 2
			}
			j := hexEnd(src, i+2)
			v, err := strconv.ParseUint(src[i+2:j], base, 64)
			if err != nil {
				return j, fmt.Errorf("bad integer literal %q", src[start:j])
			}
			if j < len(src) && src[j] == 'U' {
				j++
			}
			t.kind, t.ival, t.text = tInt, int64(v), src[start:j]
			return j, nil
		}
	}
	j := i
	for j < len(src) && src[j] >= '0' && src[j] <= '9' {
		j++
	}
	if j < len(src) && (src[j] == '.' && j+1 < len(src) && src[j+1] >= '0' && src[j+1] <= '9' || src[j] == 'e' || src[j] == 'E') {
		j++
		for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == 'e' || src[j] == 'E' || (src[j] == '-' || src[j] == '+') && (src[j-1] == 'e' || src[j-1] == 'E')) {
			j++
		}
		f, err := strconv.ParseFloat(src[i:j], 64)
		if err != nil {
			return j, fmt.Errorf("bad float literal %q", src[i:j])
		}
		t.kind, t.bits, t.text = tF64, math.Float64bits(f), src[i:j]
		return j, nil
	}
	digits := src[i:j]
	base := 10
	if len(digits) > 1 && digits[0] == '0' {
		base = 8
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return j, fmt.Errorf("bad integer literal %q", digits)
	}
	if j < len(src) && src[j] == 'U' {
		j++
	}
	t.kind, t.ival, t.text = tInt, int64(v), src[i:j]
	return j, nil
}
