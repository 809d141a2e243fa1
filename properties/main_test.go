package properties_test

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

func TestMain(m *testing.M) {
	before := failFiles()
	code := suite.Main(m, suite.WithKernels(ourKernels()...), suite.WithPredictions(ourPredictions()...), suite.WithCoverageCheck())
	if leaked := newFailFiles(before); code == 0 && len(leaked) > 0 {
		// Every test passed, so these fail files come from failures a test
		// provoked on purpose: rapid would replay them in every later run.
		fmt.Fprintf(os.Stderr, "rapid fail files left by passing tests (a test that fails on purpose must write none): %s\n",
			strings.Join(leaked, " "))
		code = 1
	}
	os.Exit(code)
}

// failFiles returns the rapid fail files under testdata/rapid.
func failFiles() map[string]bool {
	files := map[string]bool{}
	filepath.WalkDir(filepath.Join("testdata", "rapid"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".fail") {
			files[p] = true
		}
		return nil
	})
	return files
}

// newFailFiles returns the fail files that are not in before.
func newFailFiles(before map[string]bool) []string {
	var out []string
	for p := range failFiles() {
		if !before[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// ourPredictions lists the predictions this package's tests check: every
// one it registers but the harness's self-tests and the benchmark's.
func ourPredictions() []string {
	var ids []string
	for _, p := range properties.All() {
		if !strings.HasPrefix(p.ID, "TEST-") && !strings.HasPrefix(p.ID, "BENCH-") {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// ourKernels lists ptxprop's own kernels, pinned by their PTX, for the
// report's kernels section.
func ourKernels() []reports.Kernel {
	var ks []reports.Kernel
	for _, k := range kernels.All() {
		rk := reports.NewKernel(k.Name, reports.KernelOurs, path.Join("kernels", k.PTXFile), k.Entry, k.PTX)
		rk.Source = path.Join("kernels", k.Source)
		ks = append(ks, rk)
	}
	return ks
}
