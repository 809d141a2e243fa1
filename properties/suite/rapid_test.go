package suite_test

import (
	"flag"
	"testing"

	"github.com/ptxprop/ptxprop/properties/suite"
	"pgregory.net/rapid"
)

// Under go test -short rapid v1.3.0 runs a fifth of -rapid.checks; with
// Exact, SetRapid's Checks is the number run all the same.
func TestSetRapidExactUnderShort(t *testing.T) {
	old := flag.Lookup("test.short").Value.String()
	flag.Set("test.short", "true")
	defer flag.Set("test.short", old)
	for _, c := range []struct {
		exact bool
		want  int
	}{{true, 10}, {false, 2}} {
		n := 0
		restore := suite.SetRapid(suite.Rapid{Checks: 10, Exact: c.exact, NoFailFile: true})
		rapid.Check(t, func(*rapid.T) { n++ })
		restore()
		if n != c.want {
			t.Errorf("Exact %v under -short: %d checks run, want %d", c.exact, n, c.want)
		}
	}
}
