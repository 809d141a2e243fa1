package suite

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/reports"
)

// Config holds every setting of a run. Load fills it from the environment
// and Main from the flags as well; Run takes it as a value.
type Config struct {
	Backend        string        // gpu, emu, emu-checked or auto
	Devices        Devices       // the devices the run spreads its contract runs over (zero: every visible GPU)
	Contexts       int           // contexts opened on each GPU, each a device of the run (0 or 1: one)
	Report         string        // report path; "" is DefaultReportPath(), "off" writes none
	Merge          bool          // merge into the report already at Report instead of replacing it
	Deadline       time.Duration // end the run after this long (0: none)
	MaxElements    int           // cap on the elements of one generated tensor (0: the backend's limits)
	Progress       time.Duration // progress interval (0: none; Auto: 5s when Output is a terminal, 1m otherwise)
	EmuAdversarial int64         // emulator: adversarial approximate instructions with this seed (0: off)
	EmuSchedule    int64         // emulator: threads and blocks run in an order drawn from this seed (0: the canonical order)
	Checks         int           // rapid checks per contract unless -rapid.checks or RAPID_CHECKS is given (0: rapid's default)
	Seed           uint64        // rapid's base seed unless -rapid.seed or RAPID_SEED is given (0: a random one, recorded)
	Loops          int           // parallel rapid loops a contract run's checks are split over (0: auto, rapidLoops.Plan)
	Targeted       float64       // share of each contract run's checks that climb toward a larger error/tolerance (0: none; properties.Targeting)
	Guided         float64       // emulator: share of each contract run's checks that mutate inputs that reached new branches (0: none; properties.Guidance)
	Watchdog       time.Duration // bound on one launch and one launcher call (0: the defaults)
	Summary        bool          // print the report's summary at the end of the run
	FailDB         string        // failure database directory: replayed first, counterexamples stored ("": none)
	Shard          string        // this process's shard i/n ("": from the job engine's environment, else none)
	ShardCount     int           // shard count beside an index the engine gives alone (JOB_COMPLETION_INDEX)
	ShardSplit     int           // seed ranges per contract run (0: one)
	ShardRun       string        // the identity the shards of one run share ("": the engine's job ID, else from the seed)
	Coverage       bool          // emulator: record the branch directions and blocks each kernel executed, into the report

	// Command is the command that reruns the jobs of Run, in the report's
	// reproductions: its flags follow it, then CommandArgs (e.g. "ptxprop
	// verify" and the binding files: ptxprop verify -ptxprop.seed=N
	// kernel.yaml); empty: the go test arguments alone. Main derives it from
	// the test binary's package. Not a setting: no flag or environment twin.
	Command     string
	CommandArgs []string
	// Output receives Run's notices, progress lines and summary (nil: none
	// are printed). Main prints to os.Stdout. Not a setting.
	Output io.Writer
	// Kernels fills the report's kernels section beside the implementations
	// the contract runs checked: the kernels the run's predictions are about
	// (WithKernels, for Main). Not a setting.
	Kernels []reports.Kernel
	// Predictions are the predictions the run's tests check: the report
	// lists each one no contract run recorded as not run (filtered out by
	// -run), beside those that ran (WithPredictions, for Main). Without
	// them the report lists only what ran. Not a setting.
	Predictions []string
	// Rapid is the rest of rapid's configuration for the run's contract
	// runs, set for the run and restored after it: its ShrinkTime and
	// NoFailFile, and its Checks and Seed where a command that is not go
	// test takes rapid's own -rapid.checks and -rapid.seed (ptxprop
	// verify): those win over Checks and Seed above and over RAPID_CHECKS
	// and RAPID_SEED, as they do in a test binary. Exact is not read. Not a
	// setting.
	Rapid Rapid

	// What Main's options add: test binaries' own settings, code run after
	// the tests, and no report of Main's own.
	extra    []extraSettings
	cleanups []func()
	noReport bool
	// coverageCheck fails a complete run on an unexplained uncovered
	// branch of our kernels (WithCoverageCheck); cov collects the run's
	// coverage (set by the runner when Coverage is).
	coverageCheck bool
	cov           *emu.Coverage
}

// extraSettings is a settings table of a test binary's own (WithSettings).
type extraSettings struct {
	load     func(lookup func(string) (string, bool)) error
	register func(fs *flag.FlagSet)
	parsed   func(Config) error
}

// Option adjusts what Main runs with beyond the settings.
type Option func(*Config)

// WithKernels lists ks in the report's kernels section.
func WithKernels(ks ...reports.Kernel) Option {
	return func(c *Config) { c.Kernels = append(c.Kernels, ks...) }
}

// WithPredictions says that the binary's tests check the predictions ids:
// a run in which some did not run (go test -run chose other tests) lists
// them as not run, and is partial. ptxprop's own properties package passes
// every prediction it registers; a user's module, its own.
func WithPredictions(ids ...string) Option {
	return func(c *Config) { c.Predictions = append(c.Predictions, ids...) }
}

// WithSettings adds a test binary's own settings, the table t read into
// *c, to the run's: Main reads their environment twins beside its own and
// parses their -ptxprop.X flags with its own (a bad value of either is a
// usage error, ExitUsage); then, before any test runs, it calls parsed (if
// not nil) with the run's settings, Seed being the base seed the run's
// contracts use (given, or the random one drawn). An error from parsed is a
// usage error too. Package falsify's tests pass theirs this way, so that
// Main alone reads the command line.
func WithSettings[C any](t Table[C], c *C, parsed func(Config) error) Option {
	return func(rc *Config) {
		rc.extra = append(rc.extra, extraSettings{
			load: func(lookup func(string) (string, bool)) (err error) {
				*c, err = t.Load(lookup)
				return err
			},
			register: func(fs *flag.FlagSet) { t.RegisterFlags(fs, c) },
			parsed:   parsed,
		})
	}
}

// WithCoverageCheck makes a complete run on the emulator (every
// prediction run, not sharded, -ptxprop.coverage on) fail when a branch
// direction of one of ptxprop's own kernels is left uncovered and its
// descriptor (kernels.Kernel.Unreachable) does not explain it, or when an
// explanation names a direction the run took: ptxprop's properties
// package runs with it.
func WithCoverageCheck() Option {
	return func(c *Config) { c.coverageCheck = true }
}

// WithChecks makes n the run's rapid checks per contract where neither
// -ptxprop.checks, PTXPROP_CHECKS, -rapid.checks nor RAPID_CHECKS gives
// one: a package whose tests run many contracts (binding's) keeps its
// default run short.
func WithChecks(n int) Option {
	return func(c *Config) {
		if c.Checks == 0 {
			c.Checks = n
		}
	}
}

// WithoutReport makes Main write no contract report, whatever
// -ptxprop.report says, not even a partial one when the run is interrupted:
// the binary's tests check what their contracts found themselves, and
// package falsify writes its kill matrix at the report path.
func WithoutReport() Option {
	return func(c *Config) { c.noReport = true }
}

// WithCleanup runs f when the tests have ended, before Main closes the
// run's devices (package falsify closes its mutants' session there).
func WithCleanup(f func()) Option {
	return func(c *Config) { c.cleanups = append(c.cleanups, f) }
}

// Auto is the Progress value that picks the interval from the run's
// output: a line every 5 seconds when it is a terminal, every minute
// otherwise.
const Auto time.Duration = -1

// Field is one row of a settings table over the configuration type C:
// the name after "-ptxprop." (the environment twin is EnvName(Name)), its
// default, what it means, how a value sets it and how a C spells it.
type Field[C any] struct {
	Name, Default, Usage string
	Set                  func(c *C, v string) error
	// Get spells c's value as Set takes it.
	Get func(c *C) string
	// NoReplay says why a failure's reproduction leaves the setting out.
	// "" (what a new setting gets unless it says otherwise) means the
	// setting may change a contract run's outcome: a reproduction carries
	// it whenever it is not the default, set by a flag or the environment.
	NoReplay string
}

// Table is a settings table over C. The runner's (Settings) is one; a
// test binary with settings of its own (package falsify's) declares
// another, and both get their defaults, environment twins, flags and
// documented rows from the same code.
type Table[C any] []Field[C]

// settings is the one table of the runner's configuration; the package
// documentation lists it (TestDocListsSettings keeps the two equal).
var settings = Table[Config]{
	{"backend", "auto", "device backend: gpu, emu, emu-checked (the emulator checked like a GPU) or auto (the GPU when built with -tags cuda and present, else emu)",
		func(c *Config, v string) error {
			switch v {
			case "gpu", "emu", "emu-checked", "auto":
				c.Backend = v
				return nil
			}
			return fmt.Errorf("want gpu, emu, emu-checked or auto")
		},
		func(c *Config) string { return c.Backend }, ""},
	{"devices", "all", "devices to spread the contract runs over, one context each: all (every visible GPU; CUDA_VISIBLE_DEVICES masks them), a count N (the first N; on the emulator N emulator devices), or ordinals 0,2 or 1-3",
		func(c *Config, v string) (err error) { c.Devices, err = ParseDevices(v); return },
		func(c *Config) string { return c.Devices.String() }, ""},
	{"contexts", "1", "contexts to open on each GPU, each a device the contract runs spread over: a GPU takes turns between contexts, so more are rarely faster (the emulator: one)",
		func(c *Config, v string) (err error) {
			if c.Contexts, err = strconv.Atoi(v); err == nil && (c.Contexts < 1 || c.Contexts > 64) {
				err = fmt.Errorf("want 1 to 64")
			}
			return
		},
		func(c *Config) string { return strconv.Itoa(max(c.Contexts, 1)) }, ""},
	{"report", "", "contract report path (default out/contract-report.json at the module root; off: none)",
		func(c *Config, v string) error { c.Report = v; return nil },
		func(c *Config) string { return c.Report }, "where the report goes"},
	{"merge", "false", "merge into the report at the report path (same commit and backend only) instead of replacing it",
		func(c *Config, v string) (err error) { c.Merge, err = strconv.ParseBool(v); return },
		func(c *Config) string { return strconv.FormatBool(c.Merge) }, "where the report goes"},
	{"deadline", "0", "end the run after this long, as Ctrl-C does: finished predictions as they ended, running ones inconclusive (0: none)",
		func(c *Config, v string) (err error) { c.Deadline, err = NonNegDuration(v); return },
		func(c *Config) string { return c.Deadline.String() }, "it ends a run inconclusive, never with a finding"},
	{"max-elements", "0", "cap on the elements of one generated tensor (0: the backend's limits)",
		func(c *Config, v string) (err error) { c.MaxElements, err = NonNegInt(v); return },
		func(c *Config) string { return strconv.Itoa(c.MaxElements) }, ""},
	{"progress", "auto", "progress interval: what runs, checks done, elapsed (auto: 5s on a terminal, 1m otherwise; 0: none)",
		func(c *Config, v string) (err error) {
			if v == "auto" {
				c.Progress = Auto
				return nil
			}
			c.Progress, err = NonNegDuration(v)
			return
		},
		func(c *Config) string { return progressString(c.Progress) }, "what is printed"},
	{"emu-adversarial", "0", "emulator: approximate instructions return any value within the PTX ISA's bound, chosen from this seed (0: off)",
		func(c *Config, v string) (err error) { c.EmuAdversarial, err = strconv.ParseInt(v, 0, 64); return },
		func(c *Config) string { return strconv.FormatInt(c.EmuAdversarial, 10) }, ""},
	{"emu-schedule", "0", "emulator: run threads and blocks in an order drawn from this seed, to expose races a fixed order hides (0: the canonical order)",
		func(c *Config, v string) (err error) { c.EmuSchedule, err = strconv.ParseInt(v, 0, 64); return },
		func(c *Config) string { return strconv.FormatInt(c.EmuSchedule, 10) }, ""},
	{"checks", "0", "rapid checks per contract unless -rapid.checks or RAPID_CHECKS is given (0: rapid's default, 100)",
		func(c *Config, v string) (err error) { c.Checks, err = NonNegInt(v); return },
		func(c *Config) string { return strconv.Itoa(c.Checks) }, "a reproduction replays the failing case itself (its fail file, or its seed as the first check)"},
	{"seed", "0", "rapid's base seed unless -rapid.seed or RAPID_SEED is given (0: a random one; the report records it)",
		func(c *Config, v string) (err error) { c.Seed, err = strconv.ParseUint(v, 0, 64); return },
		func(c *Config) string { return strconv.FormatUint(c.Seed, 10) }, "a reproduction gives the failing case's own fail file or seed"},
	{"loops", "auto", "parallel rapid loops each contract run's checks are split over, each from its own seed with its own shrinking and reproduction (auto: a quarter of GOMAXPROCS, at least 2, at most one per 50 checks; 1 when replaying a -rapid.failfile)",
		func(c *Config, v string) (err error) {
			if v == "auto" {
				c.Loops = 0
				return nil
			}
			if c.Loops, err = NonNegInt(v); err == nil && c.Loops == 0 {
				err = fmt.Errorf("want auto or a count of at least 1")
			}
			return
		},
		func(c *Config) string { return loopsString(c.Loops) }, "a reproduction replays the failing loop alone (-ptxprop.loops=1)"},
	{"targeted", "0.2", "share of each contract run's checks, in [0, 1), that climb toward a larger error/tolerance from the worst input so far instead of drawing at random (0: none)",
		func(c *Config, v string) (err error) {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil && !(f >= 0 && f < 1) {
				err = fmt.Errorf("want a share in [0, 1)")
			}
			c.Targeted = f
			return err
		},
		func(c *Config) string { return strconv.FormatFloat(c.Targeted, 'g', -1, 64) }, ""},
	{"guided", "0.1", "emulator, with -ptxprop.coverage: share of each contract run's checks, in [0, 1], that mutate an input that reached a branch direction or guard outcome not reached before instead of drawing at random (0: none); with -ptxprop.targeted at most 1 in all",
		func(c *Config, v string) (err error) {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil && !(f >= 0 && f <= 1) {
				err = fmt.Errorf("want a share in [0, 1]")
			}
			c.Guided = f
			return err
		},
		func(c *Config) string { return strconv.FormatFloat(c.Guided, 'g', -1, 64) }, ""},
	{"watchdog", "0", "bound on one launch and one launcher call before a liveness failure (0: the device's 30s a launch, 2m a call)",
		func(c *Config, v string) (err error) { c.Watchdog, err = NonNegDuration(v); return },
		func(c *Config) string { return c.Watchdog.String() }, ""},
	{"summary", "true", "print the report's summary when the run ends",
		func(c *Config, v string) (err error) { c.Summary, err = strconv.ParseBool(v); return },
		func(c *Config) string { return strconv.FormatBool(c.Summary) }, "what is printed"},
	{"faildb", "", "failure database directory: every contract run first replays the failures stored there for it, and every new counterexample is stored there (\"\": none)",
		func(c *Config, v string) error { c.FailDB = v; return nil },
		func(c *Config) string { return c.FailDB }, "a reproduction names the stored entry, itself a rapid fail file"},
	{"shard", "", "this process's part of the work, i/n (0 ≤ i < n): contract runs times seed ranges split deterministically over n processes (\"\": JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID or BUILDKITE_PARALLEL_JOB when set, else no sharding)",
		func(c *Config, v string) error {
			if v != "" {
				if _, err := ParseShard(v); err != nil {
					return err
				}
			}
			c.Shard = v
			return nil
		},
		func(c *Config) string { return c.Shard }, "a reproduction runs the failing contract run itself"},
	{"shard-count", "0", "shard count for an engine that gives the index alone (a Kubernetes Indexed Job's JOB_COMPLETION_INDEX: its completions)",
		func(c *Config, v string) (err error) { c.ShardCount, err = NonNegInt(v); return },
		func(c *Config) string { return strconv.Itoa(c.ShardCount) }, "a reproduction runs the failing contract run itself"},
	{"shard-split", "1", "seed ranges each contract run is cut into, at most the shard count: each range on its own shard, with its own seed and a split-th of the checks",
		func(c *Config, v string) (err error) { c.ShardSplit, err = NonNegInt(v); return },
		func(c *Config) string { return strconv.Itoa(c.ShardSplit) }, "a reproduction gives the failing case's own seed"},
	{"shard-run", "", "the identity every shard of one run shares, recorded so that merge can tell shards apart (\"\": SLURM_ARRAY_JOB_ID, BUILDKITE_BUILD_ID, else the base seed, which must then be given)",
		func(c *Config, v string) error { c.ShardRun = v; return nil },
		func(c *Config) string { return c.ShardRun }, "it names the run, it does not change it"},
	{"coverage", "true", "emulator: record which branch directions and basic blocks of each kernel the run executed, into the report's coverage section",
		func(c *Config, v string) (err error) { c.Coverage, err = strconv.ParseBool(v); return },
		func(c *Config) string { return strconv.FormatBool(c.Coverage) }, "it records what ran, it changes no check"},
}

// EnvName returns the environment twin of the setting -ptxprop.name.
func EnvName(name string) string {
	return "PTXPROP_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Default returns every setting at its default.
func Default() Config { return settings.Default() }

// Load returns the defaults overridden by the environment, read through
// lookup (os.LookupEnv in a real run): PTXPROP_BACKEND=emu and so on.
func Load(lookup func(string) (string, bool)) (Config, error) { return settings.Load(lookup) }

// RegisterFlags defines the -ptxprop.X flags on fs; parsing fs then sets c.
// Values already in c (e.g. from Load) are the flags' defaults.
func RegisterFlags(fs *flag.FlagSet, c *Config) { settings.RegisterFlags(fs, c) }

// Settings lists every setting, in the order of the package documentation.
func Settings() []Setting { return settings.Settings() }

// ReplayFlags returns the flags -ptxprop.X=v that give c's settings that may
// change a contract run's outcome and are not at their default, in the
// table's order: what a failure's reproduction carries, so that it fails
// again under the settings that made it fail.
func ReplayFlags(c Config) []string { return settings.ReplayFlags(c) }

// loopsString spells a Loops value as the setting takes it.
func loopsString(n int) string {
	if n == 0 {
		return "auto"
	}
	return strconv.Itoa(n)
}

// progressString spells a Progress value as the setting takes it.
func progressString(d time.Duration) string {
	if d == Auto {
		return "auto"
	}
	return d.String()
}

// ReplayFlags returns the flags for c's settings of t that a reproduction
// carries: each one without NoReplay whose value is not the default's.
func (t Table[C]) ReplayFlags(c C) []string {
	def := t.Default()
	var out []string
	for _, f := range t {
		if f.NoReplay != "" {
			continue
		}
		if f.Get == nil {
			panic(fmt.Sprintf("suite: setting %s has no Get: a reproduction cannot carry it", f.Name))
		}
		if v := f.Get(&c); v != f.Get(&def) {
			out = append(out, "-ptxprop."+f.Name+"="+shellQuote(v))
		}
	}
	return out
}

// Default returns a C with every setting of t at its default.
func (t Table[C]) Default() C {
	var c C
	for _, f := range t {
		if err := f.Set(&c, f.Default); err != nil {
			panic(fmt.Sprintf("suite: default of %s: %v", f.Name, err))
		}
	}
	return c
}

// Load returns t's defaults overridden by the environment twins, read
// through lookup.
func (t Table[C]) Load(lookup func(string) (string, bool)) (C, error) {
	c := t.Default()
	for _, f := range t {
		v, ok := lookup(EnvName(f.Name))
		if !ok {
			continue
		}
		if err := f.Set(&c, v); err != nil {
			return c, fmt.Errorf("%s=%q: %v", EnvName(f.Name), v, err)
		}
	}
	return c, nil
}

// configFlag is one -ptxprop.X flag over a field of a C.
type configFlag[C any] struct {
	c   *C
	f   Field[C]
	val string
}

func (f *configFlag[C]) String() string { return f.val }
func (f *configFlag[C]) Set(v string) error {
	if err := f.f.Set(f.c, v); err != nil {
		return err
	}
	f.val = v
	return nil
}

// IsBoolFlag lets -ptxprop.merge stand for -ptxprop.merge=true.
func (f *configFlag[C]) IsBoolFlag() bool { return f.f.Default == "true" || f.f.Default == "false" }

// RegisterFlags defines t's -ptxprop.X flags on fs (those not defined
// yet); parsing fs then sets c. The flags' defaults are the table's.
func (t Table[C]) RegisterFlags(fs *flag.FlagSet, c *C) {
	for _, f := range t {
		if fs.Lookup("ptxprop."+f.Name) != nil {
			continue
		}
		fs.Var(&configFlag[C]{c: c, f: f, val: f.Default}, "ptxprop."+f.Name, f.Usage+" ($"+EnvName(f.Name)+")")
	}
}

// Setting describes one setting: its flag -ptxprop.Name, its environment
// twin Env, its default and what it does; NoReplay says why a failure's
// reproduction leaves it out ("": it carries it when not the default).
type Setting struct{ Name, Env, Default, Usage, NoReplay string }

// Settings lists t's settings in its order; an empty default reads "".
func (t Table[C]) Settings() []Setting {
	out := make([]Setting, len(t))
	for i, f := range t {
		def := f.Default
		if def == "" {
			def = `""`
		}
		out[i] = Setting{Name: f.Name, Env: EnvName(f.Name), Default: def, Usage: f.Usage, NoReplay: f.NoReplay}
	}
	return out
}

// NonNegInt parses a decimal integer that is not negative.
func NonNegInt(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err == nil && n < 0 {
		err = fmt.Errorf("negative")
	}
	return n, err
}

// NonNegDuration parses a time.Duration that is not negative.
func NonNegDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err == nil && d < 0 {
		err = fmt.Errorf("negative")
	}
	return d, err
}
