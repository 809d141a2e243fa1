package suite_test

import (
	"flag"
	"testing"
	"time"

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
			properties.Check(tb, "ORACLE-GRAD-001", func(*rapid.T, *properties.Obs) { n++ })
		})
	if q.Failed() || n != 7 || seed != 42 {
		t.Errorf("RunContract with 7 checks, seed 42: %d checks, seed %d, failed %v (%v)", n, seed, q.Failed(), q.Logs())
	}
	if after := flag.Lookup("rapid.checks").Value.String(); after != before {
		t.Errorf("-rapid.checks %s after RunContract, %s before", after, before)
	}
}

// While a RunContract runs, rapid's checks are still the suite's: a
// contract run that plans its loops meanwhile (a parallel test beside a
// self-test) runs every check it was given, not the RunContract's budget.
func TestRunContractLeavesConcurrentRunsTheirChecks(t *testing.T) {
	before := flag.Lookup("rapid.checks").Value.String()
	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan *properties.QuietTB)
	go func() {
		done <- suite.RunContract("own", properties.Config{}, suite.Rapid{Checks: 3, Exact: true, Seed: 42},
			func(tb properties.TB) {
				first := true
				properties.Check(tb, "ORACLE-GRAD-001", func(*rapid.T, *properties.Obs) {
					if first {
						first = false
						close(inside)
						<-release
					}
				})
			})
	}()
	<-inside
	// The loop's own settings are restored once rapid has read them, just
	// after its first check begins.
	during := flag.Lookup("rapid.checks").Value.String()
	for end := time.Now().Add(5 * time.Second); during != before && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
		during = flag.Lookup("rapid.checks").Value.String()
	}
	close(release)
	if q := <-done; q.Failed() {
		t.Fatalf("RunContract failed: %v", q.Logs())
	}
	if during != before {
		t.Errorf("-rapid.checks %s while a RunContract of 3 checks runs, %s before: a contract run planned then would run 3", during, before)
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
