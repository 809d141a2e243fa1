package suite

import (
	"crypto/rand"
	"encoding/binary"
	"flag"
	"runtime"
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
	rapidMu.Lock()
	defer rapidMu.Unlock()
	if r.Checks > 0 && r.Exact && short() {
		r.Checks *= 5 // rapid v1.3.0's checkTB: checks /= 5 under testing.Short()
	}
	restoreLocked := setRapidLocked(r)
	return func() {
		rapidMu.Lock()
		defer rapidMu.Unlock()
		restoreLocked()
	}
}

// rapidMu guards rapid's settings, which rapid keeps in package variables:
// SetRapid writes them, each rapid loop of a contract run sets a seed and a
// check count of its own while it starts (rapidLoops.Start), and the report
// reads them. rapid reads its seed and checks only as a rapid.Check starts.
var rapidMu sync.Mutex

// setRapidLocked sets rapid's flags to r's values (r.Checks as rapid's
// -rapid.checks) and returns the function that restores them; rapidMu is
// held.
func setRapidLocked(r Rapid) (restore func()) {
	type saved struct {
		v flag.Value
		s string
	}
	var old []saved
	set := func(name, v string) {
		f := flag.Lookup(name)
		if f == nil {
			return
		}
		old = append(old, saved{f.Value, f.Value.String()})
		// The flag's Value, not flag.Set: no write to the FlagSet's own
		// maps, which flag.Lookup may read meanwhile.
		_ = f.Value.Set(v) // values spelled by the flag's own type: cannot fail
	}
	if r.Checks > 0 {
		set("rapid.checks", strconv.Itoa(r.Checks))
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
		for i := len(old) - 1; i >= 0; i-- {
			_ = old[i].v.Set(old[i].s)
		}
	}
}

// short reports whether go test's -short is set (rapid then runs a fifth
// of -rapid.checks).
func short() bool {
	f := flag.Lookup("test.short")
	return f != nil && f.Value.String() == "true"
}

// minLoopChecks is the fewest checks the default splits a contract run's
// checks into a loop of: a loop's start and its share of the set-up are
// then small beside its checks.
const minLoopChecks = 50

// autoLoops is the default loop count of a contract run on procs cores: a
// quarter of them, at least 2. A run checks many predictions side by side
// (go test runs GOMAXPROCS tests at once, the nightly 32), so a quarter
// still gives the run several loops a core, and fewer loops cost less: on
// one H200 (16 cores), every prediction at 10 000 checks took 68.6 s
// with 4 loops a contract run against 85.6 s with 16, in one call, its CPU
// time 14m49s against 17m35s.
func autoLoops(procs int) int { return max(2, procs/4) }

// rapidLoops is the properties.RapidLoops of a run whose -ptxprop.loops is
// n (0: auto).
type rapidLoops struct{ n int }

// Plan splits the contract run's checks (rapid's -rapid.checks, a fifth
// of it under -short) over the run's loops: n, or by default autoLoops(GOMAXPROCS)
// loops of at least minLoopChecks checks, and one loop when rapid replays
// a fail file (-rapid.failfile) — never more loops than checks.
func (l rapidLoops) Plan() []properties.RapidLoop {
	rapidMu.Lock()
	defer rapidMu.Unlock()
	return planLoops(l.n, rapidIntLocked("checks"), rapidUintLocked("seed"), short(), rapidStringLocked("failfile") != "", runtime.GOMAXPROCS(0))
}

// planLoops is Plan's arithmetic: checks is -rapid.checks, seed the base
// seed.
func planLoops(n, checks int, seed uint64, short, failfile bool, procs int) []properties.RapidLoop {
	total := checks
	if short {
		total /= 5
	}
	k := n
	if k == 0 {
		k = min(autoLoops(procs), total/minLoopChecks)
		if failfile {
			k = 1
		}
	}
	k = min(k, total)
	if k <= 1 {
		return []properties.RapidLoop{{Seed: seed}} // rapid's settings as they are
	}
	loops := make([]properties.RapidLoop, k)
	for i := range loops {
		loops[i] = properties.RapidLoop{Seed: loopSeed(seed, i), Checks: total / k}
		if i < total%k {
			loops[i].Checks++
		}
	}
	return loops
}

// loopSeed is the base seed of rapid loop k of a run whose base seed is
// base: base itself for loop 0 (a single loop's reproductions replay it),
// a splitmix64 mix of (base, k) for the others, never 0 (rapid's "pick a
// random seed").
func loopSeed(base uint64, k int) uint64 {
	if k == 0 {
		return base
	}
	z := base + uint64(k)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	if z == 0 {
		z = 1
	}
	return z
}

// Start sets rapid to l's seed and checks while start's rapid.Check reads
// them, then restores them. Loops start one at a time, each holding
// rapidMu until its rapid.Check has read its settings.
func (rapidLoops) Start(l properties.RapidLoop, start func() <-chan struct{}) {
	rapidMu.Lock()
	defer rapidMu.Unlock()
	if l.Checks > 0 {
		r := Rapid{Checks: l.Checks, Seed: l.Seed}
		if short() {
			r.Checks *= 5
		}
		defer setRapidLocked(r)()
	}
	<-start()
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
// (properties.RunQuiet: failures are recorded, not a test's), its checks
// (properties.Check) as one rapid loop with r's checks and seed, set as
// that loop starts (cfg.Loops) and nowhere else: contract runs started
// meanwhile (a parallel test of a Main run) plan and run their own checks.
// cfg.Seed becomes r.Seed when r gives one (so that a failure rapid does
// not shrink gets its rerun command). r's ShrinkTime and NoFailFile, which
// rapid reads as a loop shrinks or fails rather than as it starts, are the
// process's for the run's duration; RunContracts and Runs wait for one
// another. A caller with a check budget or seed per run (package falsify's
// mutants, a test that wants no fail file) uses it rather than setting
// rapid's flags.
func RunContract(name string, cfg properties.Config, r Rapid, f func(properties.TB)) *properties.QuietTB {
	runMu.Lock()
	defer runMu.Unlock()
	initTesting()
	if r.ShrinkTime > 0 || r.NoFailFile {
		defer SetRapid(Rapid{ShrinkTime: r.ShrinkTime, NoFailFile: r.NoFailFile})()
	}
	if r.Seed != 0 {
		cfg.Seed = r.Seed
	}
	cfg.Loops = ownLoop{r}
	return properties.RunQuiet(name, cfg, f)
}

// ownLoop is the properties.RapidLoops of a RunContract: one loop with its
// Rapid's checks and seed (each 0: rapid's as they are).
type ownLoop struct{ r Rapid }

func (o ownLoop) Plan() []properties.RapidLoop {
	seed := o.r.Seed
	if seed == 0 {
		seed = rapidUint("seed")
	}
	return []properties.RapidLoop{{Seed: seed, Checks: o.r.Checks}}
}

func (o ownLoop) Start(l properties.RapidLoop, start func() <-chan struct{}) {
	rapidMu.Lock()
	defer rapidMu.Unlock()
	r := Rapid{Checks: l.Checks, Seed: o.r.Seed}
	if r.Checks > 0 && o.r.Exact && short() {
		r.Checks *= 5 // rapid v1.3.0's checkTB: checks /= 5 under testing.Short()
	}
	defer setRapidLocked(r)()
	<-start()
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
	rapidMu.Lock()
	defer rapidMu.Unlock()
	return rapidIntLocked(name)
}

func rapidUint(name string) uint64 {
	rapidMu.Lock()
	defer rapidMu.Unlock()
	return rapidUintLocked(name)
}

func rapidIntLocked(name string) int {
	n, _ := strconv.Atoi(rapidStringLocked(name))
	return n
}

func rapidUintLocked(name string) uint64 {
	n, _ := strconv.ParseUint(rapidStringLocked(name), 10, 64)
	return n
}

func rapidStringLocked(name string) string {
	if f := flag.Lookup("rapid." + name); f != nil {
		return f.Value.String()
	}
	return ""
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

// Checks returns the properties.RapidLoops of a contract run that runs n
// checks in one rapid loop whatever -rapid.checks and -short say: a test of
// a contract's own behaviour, whose cost must not grow with the suite's
// check count (10 000 on a GPU box), sets it as its Config.Loops. Its loop
// starts under the lock the suite's loops take, so contract runs started
// meanwhile keep their own settings.
func Checks(n int) properties.RapidLoops { return fixedChecks(n) }

type fixedChecks int

func (n fixedChecks) Plan() []properties.RapidLoop {
	return []properties.RapidLoop{{Seed: rapidUint("seed"), Checks: int(n)}}
}

func (fixedChecks) Start(l properties.RapidLoop, start func() <-chan struct{}) {
	rapidLoops{}.Start(l, start)
}
