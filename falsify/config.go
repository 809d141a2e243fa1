package falsify

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/ptxprop/ptxprop/properties/suite"
)

// settings is the one table of falsify's settings, beside the runner's
// (suite.Settings): each is a flag -ptxprop.NAME of the test binary with
// an environment twin PTXPROP_NAME. The package documentation and the
// README list it (TestDocListsSettings).
var settings = suite.Table[Options]{
	{Name: "mutants", Default: "quick", Usage: "quick: the named mutants and a few generic ones (-ptxprop.generic-quick); full: the generic sample (-ptxprop.generic-per-op) and its score gate",
		Set: func(o *Options, v string) error {
			switch v {
			case "quick", "full":
				o.Full = v == "full"
				return nil
			}
			return fmt.Errorf("want quick or full")
		}},
	{Name: "mutant-checks", Default: "200", Usage: "rapid checks per contract run on a named mutant",
		Set: func(o *Options, v string) (err error) { o.Checks, err = suite.NonNegInt(v); return }},
	{Name: "generic-checks", Default: "100", Usage: "rapid checks in a generic mutant's first (sharpest) contract run",
		Set: func(o *Options, v string) (err error) { o.GenericChecks, err = suite.NonNegInt(v); return }},
	{Name: "generic-checks-rest", Default: "25", Usage: "rapid checks in a generic mutant's other contract runs (0: -ptxprop.generic-checks)",
		Set: func(o *Options, v string) (err error) { o.SecondaryChecks, err = suite.NonNegInt(v); return }},
	{Name: "mutant-seed", Default: "1", Usage: "base seed of the mutants' rapid seeds (0: -rapid.seed, else a random one)",
		Set: func(o *Options, v string) (err error) { o.Seed, err = strconv.ParseUint(v, 0, 64); return }},
	{Name: "generic-per-op", Default: "2", Usage: "generic mutants per kernel·operator in the full sample (0: every site)",
		Set: func(o *Options, v string) (err error) { o.PerOp, err = suite.NonNegInt(v); return }},
	{Name: "generic-quick", Default: "8", Usage: "generic mutants of the quick run, spread over the kernels and operators",
		Set: func(o *Options, v string) (err error) { o.Quick, err = suite.NonNegInt(v); return }},
	{Name: "min-score", Default: "0.90", Usage: "the full sample fails below this share of killed among killed, survived and error",
		Set: func(o *Options, v string) (err error) {
			o.MinScore, err = strconv.ParseFloat(v, 64)
			if err == nil && (o.MinScore < 0 || o.MinScore > 1) {
				err = fmt.Errorf("want a share in [0, 1]")
			}
			return
		}},
	{Name: "mutant", Default: "", Usage: "TestMutant runs the mutants of this comma-separated list of names",
		Set: func(o *Options, v string) error { o.Names = v; return nil }},
	{Name: "equivalence", Default: "true", Usage: "run the original beside each mutant to tell equivalent survivors from gaps",
		Set: func(o *Options, v string) (err error) { o.Equivalence, err = strconv.ParseBool(v); return }},
	{Name: "shrink", Default: "2s", Usage: "rapid's shrink time per killing contract run of a named mutant",
		Set: func(o *Options, v string) (err error) { o.ShrinkTime, err = suite.NonNegDuration(v); return }},
	{Name: "generic-shrink", Default: "1s", Usage: "rapid's shrink time per killing contract run of a generic mutant",
		Set: func(o *Options, v string) (err error) { o.GenericShrinkTime, err = suite.NonNegDuration(v); return }},
	{Name: "record", Default: "true", Usage: "in a full run, merge the kill matrix into the mutation report (-ptxprop.report; default out/mutants-report.json)",
		Set: func(o *Options, v string) (err error) { o.Record, err = strconv.ParseBool(v); return }},
	{Name: "isolate", Default: "auto", Usage: "run mutants in child processes: auto (on a GPU, or with more than one worker), always or never",
		Set: func(o *Options, v string) error {
			switch v {
			case "auto", "always", "never":
				o.Isolate = v
				return nil
			}
			return fmt.Errorf("want auto, always or never")
		}},
	{Name: "workers", Default: "0", Usage: "child processes running mutants side by side (0: the CPU count up to 4 on the emulator, one per selected GPU)",
		Set: func(o *Options, v string) (err error) { o.Workers, err = suite.NonNegInt(v); return }},
	{Name: "child", Default: "false", Usage: "internal: run as a child process of the mutation tests",
		Set: func(o *Options, v string) (err error) { o.Child, err = strconv.ParseBool(v); return }},
}

// LoadOptions returns DefaultOptions overridden by the environment twins of
// falsify's settings and of the runner's (suite.Load), read through lookup
// (os.LookupEnv in a real run).
func LoadOptions(lookup func(string) (string, bool)) (Options, error) {
	o, err := settings.Load(lookup)
	if err != nil {
		return o, err
	}
	run, err := suite.Load(lookup)
	if err != nil {
		return o, err
	}
	d := DefaultOptions()
	o.MaxInstructions, o.Watchdog, o.Run = d.MaxInstructions, d.Watchdog, run
	o.Repro = o.ReproCommand()
	return o, nil
}

// RegisterFlags defines falsify's -ptxprop.X flags and the runner's on fs;
// parsing fs then sets o (call o.Repro = o.ReproCommand() after).
func RegisterFlags(fs *flag.FlagSet, o *Options) {
	settings.RegisterFlags(fs, o)
	suite.RegisterFlags(fs, &o.Run)
}

// ReportPath is where the kill matrix is recorded: -ptxprop.report when
// given ("" for off), else out/mutants-report.json beside the runner's
// default report. It is not the property suite's report, which a property
// run replaces: a kill matrix merged into it would be lost, or race with
// the suite's writing when both packages' tests run at once.
func (o Options) ReportPath() string {
	if o.Run.Report == "" {
		return filepath.Join(filepath.Dir(suite.DefaultReportPath()), "mutants-report.json")
	}
	return o.Run.ReportPath()
}

// Settings lists falsify's settings, in the order of the package
// documentation (the runner's are suite.Settings).
func Settings() []suite.Setting { return settings.Settings() }

// ReproCommand is the command prefix that reruns one mutant with o's
// budgets and seed; the mutant's name follows it.
func (o Options) ReproCommand() string {
	return fmt.Sprintf("go test ./falsify -run 'TestMutant$' -ptxprop.mutant-seed=%d -ptxprop.mutant-checks=%d -ptxprop.generic-checks=%d -ptxprop.generic-checks-rest=%d -ptxprop.mutant=",
		o.Seed, o.Checks, o.GenericChecks, o.SecondaryChecks)
}
