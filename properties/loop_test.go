package properties_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/gen"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// spinPTX never returns: every thread loops forever.
const spinPTX = `.version 7.0
.target sm_70
.address_size 64

.visible .entry spin(
	.param .u64 y
)
{
$L_spin:
	bra.uni $L_spin;
}
`

// launcher is an RMSNorm forward that loads text as module name and
// launches entry with params (the output buffer, then extra scalars),
// standing for a user's kernel bound wrongly or hanging.
type launcher struct {
	name, text, entry string
	extra             []cudart.Param
}

func (l launcher) RMSNormForward(dev cudart.Device, a *op.RMSNormForwardArgs) error {
	m, err := dev.Load(l.name, []byte(l.text))
	if err != nil {
		return err
	}
	y, err := dev.Alloc(cudart.F32, len(a.Y))
	if err != nil {
		return err
	}
	defer dev.Free(y)
	err = dev.Launch(m, l.entry, cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(32)}, append([]cudart.Param{cudart.Out(y)}, l.extra...)...)
	if err != nil {
		return err
	}
	return dev.Read(a.Y, y)
}

// runContract runs f on the emulator with checks rapid checks (no fail
// files), a base seed and the given watchdog, and returns the outcome of
// prediction id and the time it took.
func runContract(t *testing.T, id string, checks int, watchdog time.Duration, f func(properties.TB)) (outcome.Outcome, time.Duration) {
	t.Helper()
	c := suite.Default()
	c.Backend, c.Watchdog = "emu", watchdog
	dev, _, err := suite.OpenDevice(c)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	cfg := suite.ContractConfig(c, dev)
	cfg.Recorder, cfg.Seed = &outcome.Recorder{}, 12345
	defer suite.SetRapid(suite.Rapid{Checks: checks, NoFailFile: true})()
	start := time.Now()
	properties.RunQuiet(t.Name(), cfg, f)
	o, ok := cfg.Recorder.Outcomes()[id]
	if !ok {
		t.Fatalf("%s recorded no outcome", id)
	}
	return o, time.Since(start)
}

// A kernel that never returns is a liveness failure, reported at once: the
// contract run ends after the first watchdog, without shrinking (which
// would wait the watchdog again at every step), with a command that
// replays the checks up to it.
func TestLivenessEndsTheRunAtOnce(t *testing.T) {
	const wd = 300 * time.Millisecond
	o, took := runContract(t, properties.RMSFwd, 100, wd, func(tb properties.TB) {
		properties.RMSNormForwardContract(tb, launcher{name: "spin", text: spinPTX, entry: "spin"})
	})
	if o.Status != outcome.Falsified || !strings.HasPrefix(o.Reason, "liveness: ") || !strings.Contains(o.Reason, "did not complete within 300ms") {
		t.Errorf("status %s, reason %q: want falsified, liveness", o.Status, o.Reason)
	}
	if o.Checks != 1 || o.Failed != 1 {
		t.Errorf("checks %d, failed %d: want the one check that hung", o.Checks, o.Failed)
	}
	if took > 10*wd {
		t.Errorf("took %v with a %v watchdog: the hang was waited for more than once", took, wd)
	}
	if len(o.Counterexample) != 1 || !strings.HasPrefix(o.Counterexample[0], "case: ") {
		t.Errorf("counterexample %q, want the case that hung", o.Counterexample)
	}
	if want := "-rapid.seed=12345 -rapid.checks=1"; !strings.HasSuffix(o.Repro, want) {
		t.Errorf("repro %q, want one ending %q", o.Repro, want)
	}
}

// A PTX that does not load, an entry that does not exist and a parameter
// count that does not match are errors with their reason, not falsified
// predictions with a shrunk case: the contract run ends at once.
func TestSetupFailuresAreErrors(t *testing.T) {
	const store = `.version 7.0
.target sm_70
.address_size 64

.visible .entry store(
	.param .u64 y
)
{
	ret;
}
`
	for _, c := range []struct {
		name string
		impl launcher
		want string
	}{
		{"empty", launcher{name: "mine", text: "", entry: "store"}, "load mine: module not loaded: empty PTX text"},
		{"parse", launcher{name: "mine", text: ".version 7.0\n.visible .entry store( {", entry: "store"}, "load mine: module not loaded"},
		{"entry", launcher{name: "mine", text: store, entry: "stor"}, `module mine has no kernel "stor"`},
		{"params", launcher{name: "mine", text: store, entry: "store", extra: []cudart.Param{cudart.ScalarU32(1)}}, "store takes 1 parameters, launched with 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, _ := runContract(t, properties.RMSFwd, 100, 0, func(tb properties.TB) {
				properties.RMSNormForwardContract(tb, c.impl)
			})
			if o.Status != outcome.Errored || !strings.Contains(o.Reason, c.want) {
				t.Errorf("status %s, reason %q: want error, %q", o.Status, o.Reason, c.want)
			}
			if o.Checks != 1 || len(o.Counterexample) != 1 {
				t.Errorf("checks %d, counterexample %q: want the first check, unshrunk", o.Checks, o.Counterexample)
			}
		})
	}
}

// failing is an RMSNorm forward whose every call fails with err.
type failing struct{ err error }

func (f failing) RMSNormForward(cudart.Device, *op.RMSNormForwardArgs) error { return f.err }

// A device left unusable by an earlier timeout fails every later call
// with an error that matches ErrTimeout as well: the contract that meets it
// records an error, not a liveness failure of its own kernel.
func TestPoisonedDeviceIsAnError(t *testing.T) {
	timeout := &cudart.TimeoutError{What: "other_kernel", Limit: time.Second}
	err := &cudart.Error{Op: "launch", Name: "rmsnorm_fwd", Err: fmt.Errorf("%w (%w)", cudart.ErrPoisoned, timeout)}
	o, _ := runContract(t, properties.RMSFwd, 100, 0, func(tb properties.TB) {
		properties.RMSNormForwardContract(tb, failing{err})
	})
	if o.Status != outcome.Errored || strings.Contains(o.Reason, "liveness") || o.Checks != 1 {
		t.Errorf("status %s after %d checks, reason %q: want an error at once", o.Status, o.Checks, o.Reason)
	}
}

// The report's statistics of real contracts mean what they say: a
// contract that compares only scalars (C-BRMS-BACK-001's directional
// derivatives) has a ratio and no element statistics; RoPE's rotations,
// which cancel to near zero, have relative errors and ULP distances only
// where they describe the result (at most 1/2 and one binade, by Scaled's
// floor).
func TestContractStatistics(t *testing.T) {
	const checks = 5
	fd, _ := runContract(t, properties.BRMSBackFD, checks, 0, func(tb properties.TB) {
		properties.RMSNormBackwardFDContract(tb, kernels.RMSNormBwdWarp)
	})
	if s := fd.Stats; fd.Status != outcome.Discharged || s.Compared != 0 || s.MaxAbs != 0 || s.RelCompared != 0 || s.Scalars == 0 || !(s.MaxRatio > 0) {
		t.Errorf("%s: %s, stats %+v: want only ratios", properties.BRMSBackFD, fd.Status, s)
	}
	// In the report: the ratio, no element statistics, and the command
	// that reruns the prediction.
	c := suite.Default()
	c.Backend, c.Report, c.Summary, c.Progress, c.Checks = "emu", "off", false, 0, checks
	rep, err := suite.Run(context.Background(), c, []suite.Job{{Name: "TestFD", Run: func(tb properties.TB) {
		properties.RMSNormBackwardFDContract(tb, kernels.RMSNormBwdWarp)
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if p := rep.Prediction(properties.BRMSBackFD); p == nil || p.ErrorStats == nil || p.ErrorStats.MaxAbs != nil ||
		p.ErrorStats.MaxRel != nil || p.ErrorStats.MaxULP != nil || !(p.ErrorStats.MaxRatio > 0) || p.Rerun == "" {
		t.Errorf("reported %+v, stats %+v: want a ratio alone and a rerun command", p, p.ErrorStats)
	}
	rope, _ := runContract(t, properties.RoPEBasis, checks, 0, func(tb properties.TB) {
		properties.RoPEBasisContract(tb, kernels.RoPEFwdBatched, properties.PerRowPositions, kernels.RoPEBwd)
	})
	if s := rope.Stats; rope.Status != outcome.Discharged || s.Compared == 0 || s.RelCompared == 0 || s.MaxRel > 0.5 || s.MaxULP > 1<<24 {
		t.Errorf("%s: %s, stats %+v", properties.RoPEBasis, rope.Status, s)
	}
}

// The emulator draws the row counts a GPU does: its limits cap elements,
// not rows, so a chunked backward's chunk grows past kernels.ChunkMinRows
// (at 2049 rows of a small hidden size) on the CPU as well, and the edge
// rows sit on both sides of that step.
func TestEmulatorDrawsChunkedRowCounts(t *testing.T) {
	step := kernels.ChunkMinRows * kernels.ChunkTargetBlocks
	if kernels.ChunkRows(step) != kernels.ChunkMinRows || kernels.ChunkRows(step+1) == kernels.ChunkMinRows {
		t.Fatalf("the chunk no longer grows at %d rows: update EdgeRows", step+1)
	}
	for _, r := range []int{step, step + 1} {
		if !slices.Contains(gen.EdgeRows, r) {
			t.Errorf("EdgeRows %v lacks %d", gen.EdgeRows, r)
		}
	}
	cfg := properties.Config{} // no device: the emulator's limits
	lim := cfg.Limits()
	if lim != gen.EmuLimits {
		t.Fatalf("limits without a device = %+v, want EmuLimits", lim)
	}
	// Beyond RandomRows rows come rarely (the emulator runs a block a
	// row): about one draw in WideOdds.
	const draws = 2000
	rows := gen.Rows(lim, 2)
	most, wide := 0, 0
	for seed := range draws {
		r := rows.Example(seed)
		most = max(most, r)
		if r > lim.RandomRows {
			wide++
		}
	}
	if most <= step {
		t.Errorf("rows of hidden 2 drawn under the emulator's limits reach %d, want past %d", most, step)
	}
	if f := float64(wide) / draws; f < 0.5/gen.WideOdds || f > 2.0/gen.WideOdds {
		t.Errorf("%d of %d draws beyond %d rows, want about 1 in %d", wide, draws, lim.RandomRows, gen.WideOdds)
	}
	// Where the elements allow no more than RandomRows, nothing changes.
	for seed := range 200 {
		if r := gen.Rows(lim, 1024).Example(seed); r > lim.MaxElements/1024 {
			t.Fatalf("hidden 1024: %d rows", r)
		}
	}
}
