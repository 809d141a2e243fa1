package binding_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/properties"
)

// falsifiedForeign are the predictions the committed foreign kernels must
// fail: the Triton backward that sums dγ with float atomics is not
// deterministic. Every other prediction must be discharged, except those in
// mayFalsify.
var falsifiedForeign = map[string]bool{
	"triton-rmsnorm-bwd-atomic/" + properties.Determinism: true,
}

// mayFalsify are predictions a kernel fails only on some draws: the atomic
// backward's atom.add.f32 flushes subnormal sums to zero (as the PTX ISA
// specifies), so dγ of subnormal inputs is wrong when a check draws them.
var mayFalsify = map[string]string{
	"triton-rmsnorm-bwd-atomic/" + properties.BRMSBack: "dgamma",
}

// TestForeignBindings runs every prediction of the committed foreign
// bindings (PTX from Triton 3.6 and nvcc 13 that ptxprop did not write) and
// checks each verdict.
func TestForeignBindings(t *testing.T) {
	paths, err := filepath.Glob("testdata/foreign/*/*.binding.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no foreign bindings: %v", err)
	}
	if cfg.Device == nil {
		t.Skip(cfg.NoDevice)
	}
	for _, p := range paths {
		b := load(t, p)
		t.Run(b.Name, func(t *testing.T) {
			if err := b.Prepare(cfg.Device); err != nil {
				if cfg.Device.Info().Backend == "emu" && strings.Contains(err.Error(), "unsupported") {
					// The emulator names what it lacks before any launch;
					// the instructions Triton emits are being added to it.
					t.Skipf("the emulator cannot run it yet: %v", err)
				}
				t.Fatal(err)
			}
			for _, j := range binding.Jobs(b) {
				c := cfg
				c.Recorder = &properties.Recorder{}
				q := properties.RunQuiet(b.Name+"/"+j.ID, c, j.Contract)
				o := c.Recorder.Outcomes()[j.ID]
				want := properties.Discharged
				if falsifiedForeign[b.Name+"/"+j.ID] {
					want = properties.Falsified
				}
				if why, ok := mayFalsify[b.Name+"/"+j.ID]; ok && o.Status == properties.Falsified && strings.Contains(o.Reason, why) {
					t.Logf("%s: falsified as it may be: %s", j.ID, o.Reason)
				} else if o.Status != want {
					t.Errorf("%s: %s (%s), want %s\n%s", j.ID, o.Status, o.Reason, want, strings.Join(q.Logs(), "\n"))
				} else {
					t.Logf("%s: %s after %d checks", j.ID, o.Status, o.Checks)
				}
			}
		})
	}
}

// TestPaddedRowStride: the nvcc 13 kernel takes its rows' strides, so it
// is run on rows hidden+8 apart, the gaps filled with NaN; it must read
// only its rows and leave the gaps of y alone.
func TestPaddedRowStride(t *testing.T) {
	src := strings.Replace(mustRead(t, "testdata/foreign/nvcc13/rms_norm.binding.yaml"), "saved: rstd", "saved: rstd\nrow_stride: hidden + 8", 1)
	b, err := binding.Parse("testdata/foreign/nvcc13/rms_norm.binding.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	properties.RMSNormForwardContract(tb{t}, b.Impl().(properties.RMSNormForwarder))
}
