package suite

import (
	"crypto/rand"
	"encoding/binary"
	"flag"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptxprop/ptxprop/properties"
)

// Rapid is what a run sets of rapid's own configuration. rapid v1.3.0 keeps
// it in package variables bound to the flags it defines on the process's
// command line (-rapid.checks, …), with no per-call API; this file is the
// one place that sets them.
type Rapid struct {
	Checks     int           // 0: leave as it is
	Seed       uint64        // 0: leave as it is
	ShrinkTime time.Duration // 0: leave as it is
	NoFailFile bool          // write no fail files
	// Exact makes Checks the number of checks run under go test -short
	// too, where rapid runs a fifth of -rapid.checks: a budget that a
	// verdict depends on (a mutant's expected kill) is not cut.
	Exact bool
}

// SetRapid sets rapid's configuration to r for every rapid.Check in the
// process until the returned function restores it. Contracts run under one
// setting at a time: callers that need different settings run one after
// the other. A contract run with settings of its own is RunContract's, a
// Run's are Config.Rapid and Config.Checks: SetRapid is left for Main and
// for benchmarks that set rapid's checks around their own loop.
func SetRapid(r Rapid) (restore func()) {
	userRapid()
	saved := map[string]string{}
	set := func(name, v string) {
		f := flag.Lookup(name)
		if f == nil {
			return
		}
		if _, ok := saved[name]; !ok {
			saved[name] = f.Value.String()
		}
		flag.Set(name, v)
	}
	if r.Checks > 0 {
		n := r.Checks
		if f := flag.Lookup("test.short"); r.Exact && f != nil && f.Value.String() == "true" {
			n *= 5 // rapid v1.3.0's checkTB: checks /= 5 under testing.Short()
		}
		set("rapid.checks", strconv.Itoa(n))
	}
	if r.Seed != 0 {
		set("rapid.seed", strconv.FormatUint(r.Seed, 10))
	}
	if r.ShrinkTime > 0 {
		set("rapid.shrinktime", r.ShrinkTime.String())
	}
	if r.NoFailFile {
		set("rapid.nofailfile", "true")
	}
	return func() {
		for name, v := range saved {
			flag.Set(name, v)
		}
	}
}

// with returns r with o's ShrinkTime where r leaves it as it is, and
// NoFailFile where either says so: a run's Config.Rapid (its Checks and
// Seed are the run's Config.Checks and Config.Seed, as rapidForRun takes
// them).
func (r Rapid) with(o Rapid) Rapid {
	if r.ShrinkTime == 0 {
		r.ShrinkTime = o.ShrinkTime
	}
	r.NoFailFile = r.NoFailFile || o.NoFailFile
	return r
}

// RunContract runs f as one contract run named name on cfg, quietly
// (properties.RunQuiet: failures are recorded, not a test's), with rapid's
// configuration r for this run alone: it is set when the run starts and
// restored when it ends, and cfg.Seed becomes r.Seed when r gives one (so
// that a failure rapid does not shrink gets its rerun command). Runs and
// RunContracts wait for one another, each under its own settings. A caller
// with a check budget or seed per run (package falsify's mutants, a test
// that wants no fail file) uses it rather than setting rapid's flags. rapid
// v1.3.0 keeps its settings in package variables, so contract runs
// started meanwhile outside Run and RunContract (a parallel test of a
// Main run) see r too.
func RunContract(name string, cfg properties.Config, r Rapid, f func(properties.TB)) *properties.QuietTB {
	runMu.Lock()
	defer runMu.Unlock()
	initTesting()
	defer SetRapid(r)()
	if r.Seed != 0 {
		cfg.Seed = r.Seed
	}
	return properties.RunQuiet(name, cfg, f)
}

// userRapid is the set of rapid's flags the user gave on the command line,
// noted before this package sets any (flag.Visit cannot tell them apart
// afterwards).
var userRapid = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { m[f.Name] = true })
	return m
})

// rapidGiven reports whether rapid's setting name (e.g. "checks") was given
// on the command line (-rapid.checks) or in the environment (RAPID_CHECKS).
func rapidGiven(name string, lookup func(string) (string, bool)) bool {
	_, env := lookup("RAPID_" + strings.ToUpper(name))
	return userRapid()["rapid."+name] || env
}

// rapidInt and rapidUint read rapid's current setting.
func rapidInt(name string) int {
	if f := flag.Lookup("rapid." + name); f != nil {
		n, _ := strconv.Atoi(f.Value.String())
		return n
	}
	return 0
}

func rapidUint(name string) uint64 {
	if f := flag.Lookup("rapid." + name); f != nil {
		n, _ := strconv.ParseUint(f.Value.String(), 10, 64)
		return n
	}
	return 0
}

// rapidForRun returns the rapid settings a run of c uses: c.Checks unless
// rapid's checks were given, and c.Seed — or, when neither it nor rapid's
// seed was given, a fresh random seed, so that the report records the seed
// actually used; c.Rapid's Checks and Seed, when set, win over all of them.
func rapidForRun(c Config, lookup func(string) (string, bool)) Rapid {
	var r Rapid
	if c.Checks > 0 && !rapidGiven("checks", lookup) {
		r.Checks = c.Checks
	}
	if !rapidGiven("seed", lookup) || rapidUint("seed") == 0 {
		r.Seed = c.Seed
		if r.Seed == 0 {
			r.Seed = randomSeed()
		}
	}
	// rapid's own flags on a command line that is not go test's win over
	// everything, RAPID_CHECKS and RAPID_SEED included, as in a test binary.
	if c.Rapid.Checks > 0 {
		r.Checks = c.Rapid.Checks
	}
	if c.Rapid.Seed != 0 {
		r.Seed = c.Rapid.Seed
	}
	return r
}

func randomSeed() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) | 1
}
