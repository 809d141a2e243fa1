package suite

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ptxprop/ptxprop/reports"
)

// Config holds every setting of a run. Load fills it from the environment
// and Main from the flags as well; Run takes it as a value.
type Config struct {
	Backend        string        // gpu, emu, emu-checked or auto
	Devices        Devices       // the devices the run spreads its contract runs over (zero: every visible GPU)
	Report         string        // report path; "" is DefaultReportPath(), "off" writes none
	Merge          bool          // merge into the report already at Report instead of replacing it
	Deadline       time.Duration // end the run after this long (0: none)
	MaxElements    int           // cap on the elements of one generated tensor (0: the backend's limits)
	Progress       time.Duration // progress interval (0: none; Auto: 5s on a terminal, 1m otherwise)
	EmuAdversarial int64         // emulator: adversarial approximate instructions with this seed (0: off)
	Checks         int           // rapid checks per contract unless -rapid.checks or RAPID_CHECKS is given (0: rapid's default)
	Seed           uint64        // rapid's base seed unless -rapid.seed or RAPID_SEED is given (0: a random one, recorded)
	Watchdog       time.Duration // bound on one launch and one launcher call (0: the defaults)
	Summary        bool          // print the report's summary at the end of the run

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
	// Kernels fills the report's kernels section: the kernels the run's
	// predictions are about (WithKernels, for Main). Not a setting.
	Kernels []reports.Kernel
}

// Option adjusts what Main runs with beyond the settings.
type Option func(*Config)

// WithKernels lists ks in the report's kernels section.
func WithKernels(ks ...reports.Kernel) Option {
	return func(c *Config) { c.Kernels = append(c.Kernels, ks...) }
}

// Auto is the Progress value that picks the interval from the output: a
// line every 5 seconds on a terminal, every minute otherwise.
const Auto time.Duration = -1

// setting is one row of the configuration table: the name after
// "-ptxprop." (the environment twin is PTXPROP_ and the name upper-cased,
// '-' as '_'), its default, what it means, and how it is set.
type setting struct {
	name, def, usage string
	set              func(c *Config, v string) error
}

// settings is the one table of the runner's configuration; the package
// documentation lists it (TestDocListsSettings keeps the two equal).
var settings = []setting{
	{"backend", "auto", "device backend: gpu, emu, emu-checked (the emulator checked like a GPU) or auto (the GPU when built with -tags cuda and present, else emu)",
		func(c *Config, v string) error {
			switch v {
			case "gpu", "emu", "emu-checked", "auto":
				c.Backend = v
				return nil
			}
			return fmt.Errorf("want gpu, emu, emu-checked or auto")
		}},
	{"devices", "all", "devices to spread the contract runs over, one context each: all (every visible GPU; CUDA_VISIBLE_DEVICES masks them), a count N (the first N; on the emulator N emulator devices), or ordinals 0,2 or 1-3",
		func(c *Config, v string) (err error) { c.Devices, err = ParseDevices(v); return }},
	{"report", "", "contract report path (default out/contract-report.json at the module root; off: none)",
		func(c *Config, v string) error { c.Report = v; return nil }},
	{"merge", "false", "merge into the report at the report path (same commit and backend only) instead of replacing it",
		func(c *Config, v string) (err error) { c.Merge, err = strconv.ParseBool(v); return }},
	{"deadline", "0", "end the run after this long, as Ctrl-C does: finished predictions as they ended, running ones inconclusive (0: none)",
		func(c *Config, v string) (err error) { c.Deadline, err = nonNegDuration(v); return }},
	{"max-elements", "0", "cap on the elements of one generated tensor (0: the backend's limits)",
		func(c *Config, v string) (err error) { c.MaxElements, err = nonNegInt(v); return }},
	{"progress", "auto", "progress interval: what runs, checks done, elapsed (auto: 5s on a terminal, 1m otherwise; 0: none)",
		func(c *Config, v string) (err error) {
			if v == "auto" {
				c.Progress = Auto
				return nil
			}
			c.Progress, err = nonNegDuration(v)
			return
		}},
	{"emu-adversarial", "0", "emulator: approximate instructions return any value within the PTX ISA's bound, chosen from this seed (0: off)",
		func(c *Config, v string) (err error) { c.EmuAdversarial, err = strconv.ParseInt(v, 0, 64); return }},
	{"checks", "0", "rapid checks per contract unless -rapid.checks or RAPID_CHECKS is given (0: rapid's default, 100)",
		func(c *Config, v string) (err error) { c.Checks, err = nonNegInt(v); return }},
	{"seed", "0", "rapid's base seed unless -rapid.seed or RAPID_SEED is given (0: a random one; the report records it)",
		func(c *Config, v string) (err error) { c.Seed, err = strconv.ParseUint(v, 0, 64); return }},
	{"watchdog", "0", "bound on one launch and one launcher call before a liveness failure (0: the device's 30s a launch, 2m a call)",
		func(c *Config, v string) (err error) { c.Watchdog, err = nonNegDuration(v); return }},
	{"summary", "true", "print the report's summary when the run ends",
		func(c *Config, v string) (err error) { c.Summary, err = strconv.ParseBool(v); return }},
}

func nonNegDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err == nil && d < 0 {
		err = fmt.Errorf("negative")
	}
	return d, err
}

func nonNegInt(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err == nil && n < 0 {
		err = fmt.Errorf("negative")
	}
	return n, err
}

// EnvName returns the environment twin of the setting -ptxprop.name.
func EnvName(name string) string {
	return "PTXPROP_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Default returns every setting at its default.
func Default() Config {
	var c Config
	for _, s := range settings {
		if err := s.set(&c, s.def); err != nil {
			panic(fmt.Sprintf("suite: default of %s: %v", s.name, err))
		}
	}
	return c
}

// Load returns the defaults overridden by the environment, read through
// lookup (os.LookupEnv in a real run): PTXPROP_BACKEND=emu and so on.
func Load(lookup func(string) (string, bool)) (Config, error) {
	c := Default()
	for _, s := range settings {
		v, ok := lookup(EnvName(s.name))
		if !ok {
			continue
		}
		if err := s.set(&c, v); err != nil {
			return c, fmt.Errorf("%s=%q: %v", EnvName(s.name), v, err)
		}
	}
	return c, nil
}

// configFlag is one -ptxprop.X flag over a field of a Config.
type configFlag struct {
	c   *Config
	s   setting
	val string
}

func (f *configFlag) String() string { return f.val }
func (f *configFlag) Set(v string) error {
	if err := f.s.set(f.c, v); err != nil {
		return err
	}
	f.val = v
	return nil
}

// IsBoolFlag lets -ptxprop.merge stand for -ptxprop.merge=true.
func (f *configFlag) IsBoolFlag() bool { return f.s.def == "true" || f.s.def == "false" }

// RegisterFlags defines the -ptxprop.X flags on fs; parsing fs then sets c.
// Values already in c (e.g. from Load) are the flags' defaults.
func RegisterFlags(fs *flag.FlagSet, c *Config) {
	for _, s := range settings {
		if fs.Lookup("ptxprop."+s.name) != nil {
			continue
		}
		fs.Var(&configFlag{c: c, s: s, val: s.def}, "ptxprop."+s.name, s.usage+" ($"+EnvName(s.name)+")")
	}
}

// Setting describes one setting: its flag -ptxprop.Name, its environment
// twin Env, its default and what it does.
type Setting struct{ Name, Env, Default, Usage string }

// Settings lists every setting, in the order of the package documentation.
func Settings() []Setting {
	out := make([]Setting, len(settings))
	for i, s := range settings {
		def := s.def
		if def == "" {
			def = `""`
		}
		out[i] = Setting{Name: s.name, Env: EnvName(s.name), Default: def, Usage: s.usage}
	}
	return out
}
