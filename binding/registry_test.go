package binding_test

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// TestEveryOperationBindable: every operation of the op table is a
// contract a binding may claim, and nothing else is.
func TestEveryOperationBindable(t *testing.T) {
	var want []string
	for _, o := range op.All() {
		want = append(want, o.Name())
	}
	sort.Strings(want)
	if got := binding.Contracts(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("binding contracts %v, want the op table's %v", got, want)
	}
}

// TestJobsAreRegistryRows: a binding's jobs are the registry rows that
// cover its contract, each once, with the pair rows when it names its
// forward: a row added to the registry reaches bindings without an edit
// to package binding, and no job runs a prediction that does not cover
// the operation.
func TestJobsAreRegistryRows(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.yaml")
	foreign, _ := filepath.Glob("testdata/foreign/*/*.binding.yaml")
	seen := map[string]bool{}
	for _, path := range append(files, foreign...) {
		b := load(t, path)
		seen[b.Contract] = true
		var want []string
		for _, p := range properties.InOrder() {
			if !p.Covers(b.Contract) {
				continue
			}
			if p.Pair != nil && (b.Forward == nil || b.Forward.Contract != p.Pair.Name()) {
				continue
			}
			want = append(want, p.ID)
		}
		var got []string
		for _, j := range binding.Jobs(b) {
			got = append(got, j.ID)
			if p, ok := properties.Lookup(j.ID); !ok || !p.Covers(b.Contract) {
				t.Errorf("%s: job %s does not cover %s", path, j.ID, b.Contract)
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: jobs %v, want the registry's rows %v", path, got, want)
		}
	}
	for _, o := range op.All() {
		if !seen[o.Name()] {
			t.Errorf("no binding of %s in testdata", o.Name())
		}
	}
}

// TestForwardWithoutStatistics: a layernorm.forward or rmsnorm.forward
// that saves no statistics (an inference kernel) is a valid binding, and
// its predictions run without asking it for any: each discharges.
func TestForwardWithoutStatistics(t *testing.T) {
	for _, b := range []*binding.Binding{
		load(t, "testdata/layernorm_fwd_no_stats.yaml"),
		load(t, "testdata/rmsnorm_fwd_no_stats.yaml"),
	} {
		if b.Saved != "" {
			t.Fatalf("%s saves %q, want none", b.Name, b.Saved)
		}
		js := binding.Jobs(b)
		if len(js) == 0 {
			t.Fatalf("%s: no jobs", b.Name)
		}
		for _, j := range js {
			t.Run(b.Contract+"/"+j.ID, func(t *testing.T) { j.Contract(suite.T(t)) })
		}
	}
}
