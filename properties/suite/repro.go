package suite

import (
	"fmt"
	"regexp"
	"strings"
)

// runPattern is the -run pattern that selects exactly the test named name
// (subtests included): each element anchored, as go test splits on '/'.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// reproArgs returns the go test arguments that replay a failing run: the
// anchored -run pattern and the fail file (the minimal case) or, without
// one, the failing check's seed.
func reproArgs(name string, seed uint64, failfile string) string {
	args := "-run " + shellQuote(runPattern(name))
	if failfile != "" {
		return args + " -rapid.failfile=" + shellQuote(failfile)
	}
	return args + fmt.Sprintf(" -rapid.seed=%d", seed)
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
