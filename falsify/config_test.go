package falsify

import (
	"flag"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Every setting has its environment twin, read through the lookup it is
// given; a flag overrides the environment; bad values are errors naming
// the variable.
func TestLoadOptionsReadsEverySetting(t *testing.T) {
	env := map[string]string{
		"PTXPROP_MUTANTS": "full", "PTXPROP_MUTANT_CHECKS": "7", "PTXPROP_GENERIC_CHECKS": "8",
		"PTXPROP_GENERIC_CHECKS_REST": "9", "PTXPROP_MUTANT_SEED": "10", "PTXPROP_GENERIC_PER_OP": "11",
		"PTXPROP_GENERIC_QUICK": "12", "PTXPROP_MIN_SCORE": "0.5", "PTXPROP_MUTANT": "a,b",
		"PTXPROP_EQUIVALENCE": "false", "PTXPROP_SHRINK": "3s", "PTXPROP_GENERIC_SHRINK": "4s",
		"PTXPROP_RECORD": "false", "PTXPROP_ISOLATE": "always", "PTXPROP_WORKERS": "3", "PTXPROP_CHILD": "true",
		"PTXPROP_BACKEND": "emu", // the runner's settings come with them
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	o, err := LoadOptions(lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultOptions()
	want.Full, want.Checks, want.GenericChecks, want.SecondaryChecks, want.Seed = true, 7, 8, 9, 10
	want.PerOp, want.Quick, want.MinScore, want.Names, want.Equivalence = 11, 12, 0.5, "a,b", false
	want.ShrinkTime, want.GenericShrinkTime, want.Record, want.Isolate, want.Workers, want.Child = 3*time.Second, 4*time.Second, false, "always", 3, true
	want.Run.Backend = "emu"
	want.Repro = want.ReproCommand()
	if !reflect.DeepEqual(o, want) {
		t.Errorf("LoadOptions = %+v\nwant          %+v", o, want)
	}
	// Every setting is in the test: each moved its field from the default.
	if len(Settings()) != len(env)-1 {
		t.Errorf("%d settings, the test sets %d", len(Settings()), len(env)-1)
	}
	for _, s := range Settings() {
		if _, ok := env[s.Env]; !ok {
			t.Errorf("setting %s: %s not tested", s.Name, s.Env)
		}
	}
	fs := flag.NewFlagSet("falsify", flag.ContinueOnError)
	RegisterFlags(fs, &o)
	if err := fs.Parse([]string{"-ptxprop.mutants=quick", "-ptxprop.workers=1", "-ptxprop.backend=emu-checked"}); err != nil {
		t.Fatal(err)
	}
	if o.Full || o.Workers != 1 || o.Checks != 7 || o.Run.Backend != "emu-checked" {
		t.Errorf("after flags: Full %v, Workers %d, Checks %d, backend %s; want false, 1, 7 (the environment's), emu-checked",
			o.Full, o.Workers, o.Checks, o.Run.Backend)
	}
	for k, v := range map[string]string{"PTXPROP_MUTANTS": "all", "PTXPROP_MIN_SCORE": "1.5", "PTXPROP_ISOLATE": "sometimes",
		"PTXPROP_WORKERS": "-1", "PTXPROP_BACKEND": "cpu"} {
		if _, err := LoadOptions(func(x string) (string, bool) { return v, x == k }); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: err = %v, want one naming %s", k, v, err, k)
		}
	}
}

// The package documentation and the README list every setting with its
// flag, its environment twin and its default.
func TestDocListsSettings(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Settings() {
		row := regexp.MustCompile(`(?m)^//\s+-ptxprop\.` + regexp.QuoteMeta(s.Name) + `\s+` + s.Env + `\s+` + regexp.QuoteMeta(s.Default) + `\s`)
		if !row.Match(doc) {
			t.Errorf("doc.go has no table row for -ptxprop.%s %s %s", s.Name, s.Env, s.Default)
		}
		md := regexp.MustCompile("(?m)^\\| `-ptxprop\\." + regexp.QuoteMeta(s.Name) + "` \\| `" + s.Env + "` \\| `" + regexp.QuoteMeta(s.Default) + "` \\|")
		if !md.Match(readme) {
			t.Errorf("README.md has no table row for -ptxprop.%s %s %s", s.Name, s.Env, s.Default)
		}
	}
}
