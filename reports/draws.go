package reports

import "strings"

// ParseDraws extracts the labelled draws from rapid's test output: the lines
// "[rapid] draw LABEL: VALUE" (rapid logs them as "[rapid] draw %v: %#v",
// possibly after a "file.go:64: " prefix from testing). When the output holds
// rapid's "Failed test output:" marker, only draws after its last occurrence
// count: those of the minimal counterexample. A label containing ": " is cut
// at its first one.
func ParseDraws(output string) []Draw {
	const marker, prefix = "Failed test output:", "[rapid] draw "
	if i := strings.LastIndex(output, marker); i >= 0 {
		output = output[i+len(marker):]
	}
	var draws []Draw
	for line := range strings.Lines(output) {
		_, rest, ok := strings.Cut(line, prefix)
		if !ok {
			continue
		}
		label, value, ok := strings.Cut(strings.TrimRight(rest, "\r\n"), ": ")
		if !ok {
			continue
		}
		draws = append(draws, Draw{Label: label, Value: value})
	}
	return draws
}
