package suite_test

import (
	"flag"
	"testing"

	"github.com/ptxprop/ptxprop/properties"
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

// RunContract gives one contract run its own checks and seed and leaves
// rapid's settings as they were: the checks after it are those before.
func TestRunContractOwnSettings(t *testing.T) {
	before := flag.Lookup("rapid.checks").Value.String()
	n, seed := 0, uint64(0)
	q := suite.RunContract("own", properties.Config{}, suite.Rapid{Checks: 7, Exact: true, Seed: 42, NoFailFile: true},
		func(tb properties.TB) {
			seed = tb.Config().Seed
			rapid.Check(tb, func(*rapid.T) { n++ })
		})
	if q.Failed() || n != 7 || seed != 42 {
		t.Errorf("RunContract with 7 checks, seed 42: %d checks, seed %d, failed %v (%v)", n, seed, q.Failed(), q.Logs())
	}
	if after := flag.Lookup("rapid.checks").Value.String(); after != before {
		t.Errorf("-rapid.checks %s after RunContract, %s before", after, before)
	}
}

// WithChecks is the run's default: PTXPROP_CHECKS (read before the
// options) and -ptxprop.checks (parsed after them) win over it.
func TestWithChecksIsADefault(t *testing.T) {
	for _, c := range []struct{ given, want int }{{0, 25}, {7, 7}} {
		cfg := suite.Default()
		cfg.Checks = c.given
		suite.WithChecks(25)(&cfg)
		if cfg.Checks != c.want {
			t.Errorf("WithChecks(25) over checks %d: %d, want %d", c.given, cfg.Checks, c.want)
		}
	}
}
