package properties_test

import (
	"os"
	"path"
	"testing"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

func TestMain(m *testing.M) { os.Exit(suite.Main(m, suite.WithKernels(ourKernels()...))) }

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
