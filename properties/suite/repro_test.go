package suite_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/properties/suite"
)

// nonDefault is a value other than the default for every setting of the
// runner: TestReproCarriesEverySetting fails for a setting missing here.
var nonDefault = map[string]string{
	"backend": "emu-checked", "devices": "0,2", "report": "/x/r.json", "merge": "true",
	"deadline": "45s", "max-elements": "4096", "progress": "3s", "emu-adversarial": "7", "emu-schedule": "11",
	"checks": "1000", "seed": "99", "watchdog": "2ms", "summary": "false", "loops": "4",
	"faildb": "/x/db", "shard": "1/3", "shard-count": "3", "shard-split": "2", "shard-run": "job-7",
	"contexts": "3", "targeted": "0.3", "guided": "0.4", "coverage": "false",
}

// A failure's reproduction carries every setting that may change the
// outcome and is not at its default, whether a flag or the environment set
// it (`-ptxprop.watchdog=2ms` made a liveness failure that the printed
// command, without it, did not reproduce); a setting is left out only where
// the table says why.
func TestReproCarriesEverySetting(t *testing.T) {
	for _, s := range suite.Settings() {
		v, ok := nonDefault[s.Name]
		if !ok {
			t.Errorf("setting %s: no non-default value in this test", s.Name)
			continue
		}
		env, err := suite.Load(func(k string) (string, bool) { return v, k == s.Env })
		if err != nil {
			t.Fatal(err)
		}
		fl := suite.Default()
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		suite.RegisterFlags(fs, &fl)
		if err := fs.Parse([]string{"-ptxprop." + s.Name + "=" + v}); err != nil {
			t.Fatal(err)
		}
		want := "-ptxprop." + s.Name + "=" + v
		for how, c := range map[string]suite.Config{"environment": env, "flag": fl} {
			for _, cmd := range []string{
				suite.Repro(c, "go test ./properties", "TestX", 12, ""),
				suite.Repro(c, "go test ./properties", "TestX", 0, "testdata/rapid/TestX/a.fail"),
				suite.RunRepro(withCommand(c), "a/RMS-FWD-001", 42),
				suite.RunRerun(withCommand(c), "a/RMS-FWD-001", 42, 7),
			} {
				carried := strings.Contains(" "+cmd+" ", " "+want+" ")
				switch {
				case s.NoReplay == "" && !carried:
					t.Errorf("-ptxprop.%s set by the %s: reproduction %q does not carry %s", s.Name, how, cmd, want)
				case s.NoReplay != "" && strings.Contains(cmd, "-ptxprop."+s.Name+"="+v):
					t.Errorf("-ptxprop.%s (%s) set by the %s: reproduction %q carries it", s.Name, s.NoReplay, how, cmd)
				}
			}
		}
	}
	// The settings the runner's devices and generators read are never left
	// out: a NoReplay on one of them would pass the loop above.
	for _, name := range []string{"backend", "devices", "max-elements", "emu-adversarial", "emu-schedule", "watchdog"} {
		for _, s := range suite.Settings() {
			if s.Name == name && s.NoReplay != "" {
				t.Errorf("-ptxprop.%s changes what a contract run does, yet a reproduction leaves it out: %s", name, s.NoReplay)
			}
		}
	}
	// At the defaults, nothing is added but the one rapid loop that a
	// failing check's seed replays.
	if got, want := suite.Repro(suite.Default(), "go test ./properties", "TestX", 12, ""), "go test ./properties -run '^TestX$' -rapid.seed=12 -ptxprop.loops=1"; got != want {
		t.Errorf("repro at the defaults = %q, want %q", got, want)
	}
}

func withCommand(c suite.Config) suite.Config {
	c.Command, c.CommandArgs = "ptxprop verify", []string{"k.yaml"}
	return c
}
