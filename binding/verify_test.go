package binding_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// A verify report keys results per binding: two forwards of one contract
// give two RMS-FWD-001 entries (not one of twice the checks), it lists
// exactly the predictions the bindings claim (nothing of the registry as
// not run), and its kernels section names the bound kernels, each with its
// binding file.
func TestVerifyReportPerBinding(t *testing.T) {
	cfg := config(t)
	if cfg.Device == nil {
		t.Skip(cfg.NoDevice)
	}
	paths := []string{"testdata/rmsnorm_fwd.yaml", "testdata/foreign/nvcc13/rms_norm.binding.yaml"}
	bs, err := binding.LoadAll(paths...)
	if err != nil {
		t.Fatal(err)
	}
	c := suite.Default()
	c.Backend, c.Progress, c.Summary, c.Checks = cfg.Device.Info().Backend, 0, false, 5
	c.Report = filepath.Join(t.TempDir(), "report.json")
	if _, err := binding.Verify(context.Background(), c, paths...); err != nil {
		t.Fatal(err)
	}
	rep, err := reports.Read(c.Report) // the schema admits the binding field
	if err != nil {
		t.Fatal(err)
	}
	if lint := rep.Lint(); len(lint) > 0 {
		t.Errorf("report contradicts itself: %v", lint)
	}
	want := map[string]bool{}
	for _, j := range binding.Jobs(bs...) {
		want[j.ID+"@"+j.Binding] = true
	}
	if len(rep.Predictions) != len(want) {
		t.Errorf("%d predictions in the report, want the %d claimed", len(rep.Predictions), len(want))
	}
	for _, p := range rep.Predictions {
		if !want[p.ID] {
			t.Errorf("%s (%s) is not a claimed prediction", p.ID, p.Status)
			continue
		}
		id, name, _ := strings.Cut(p.ID, "@")
		if id == properties.Parity && rep.Run.Backend != "gpu" {
			if p.Status != reports.Skipped {
				t.Errorf("%s without a GPU: %s, want skipped", p.ID, p.Status)
			}
			continue
		}
		if p.Binding != name || p.Status != reports.Discharged || p.Checks != ranChecks(rep.Run.RapidChecks) {
			t.Errorf("%s: binding %q, %s after %d checks; want %q, discharged after %d", p.ID, p.Binding, p.Status, p.Checks, name, ranChecks(rep.Run.RapidChecks))
		}
		if id == properties.RMSFwd && (len(p.Kernels) != 1 || !strings.HasPrefix(p.Kernels[0], name+"/")) {
			t.Errorf("%s: kernels %v, want the binding's", p.ID, p.Kernels)
		}
	}
	for _, b := range bs {
		for _, k := range b.ReportKernels() {
			got := rep.Kernel(k.Name)
			if got == nil || got.Origin != reports.KernelBinding || got.Binding != b.Path || got.PTXSHA256 != k.PTXSHA256 {
				t.Errorf("kernel %s: %+v, want %+v", k.Name, got, k)
			}
		}
	}
}

// ranChecks is the number of checks rapid runs in a contract run given
// -rapid.checks=n: a fifth of them under -short.
func ranChecks(n int) int {
	if testing.Short() {
		return n / 5
	}
	return n
}
