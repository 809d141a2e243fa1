package suite_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
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
	unbounded         bool // lift the emulator's instruction budget: only the watchdog ends a hang, as on a GPU
}

func (l launcher) RMSNormForward(dev cudart.Device, a *op.RMSNormForwardArgs) error {
	if l.unbounded {
		if old, err := dev.SetInstructionLimit(-1); err == nil {
			defer dev.SetInstructionLimit(old)
		}
	}
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

// spin is an RMSNorm forward whose kernel never returns; spinForever's
// is not stopped by the emulator's instruction budget either.
var (
	spin        = launcher{name: "spin", text: spinPTX, entry: "spin"}
	spinForever = launcher{name: "spin", text: spinPTX, entry: "spin", unbounded: true}
)

// TestChildSpin is the child run of TestDeadlineWithAHangingKernel.
func TestChildSpin(t *testing.T) {
	if os.Getenv(childEnv) != "TestChildSpin" {
		t.Skip("run as a child by TestDeadlineWithAHangingKernel")
	}
	properties.RMSNormForwardContract(suite.T(t), spinForever)
}

// A deadline holds with a kernel that hangs: the run ends within the
// deadline and one watchdog (-ptxprop.watchdog sets it), says that a
// launch in progress may take the watchdog, and reports the hang as a
// liveness failure at once.
func TestDeadlineWithAHangingKernel(t *testing.T) {
	const deadline, watchdog = 300 * time.Millisecond, 2 * time.Second
	start := time.Now()
	cmd, out, report := childRun(t, "TestChildSpin", "-ptxprop.deadline="+deadline.String(),
		"-ptxprop.watchdog="+watchdog.String(), "-ptxprop.checks=100", "-ptxprop.progress=0")
	var lines []string
	for out.Scan() {
		lines = append(lines, out.Text())
	}
	err := cmd.Wait()
	took := time.Since(start)
	text := strings.Join(lines, "\n")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != suite.ExitFailed {
		t.Errorf("exit: %v, want status %d", err, suite.ExitFailed)
	}
	if took > deadline+watchdog+3*time.Second {
		t.Errorf("the run took %v: deadline %v, watchdog %v", took, deadline, watchdog)
	}
	if !strings.Contains(text, "-ptxprop.deadline=300ms") || !strings.Contains(text, "within the watchdog, -ptxprop.watchdog=2s") {
		t.Errorf("output does not name the deadline and the watchdog:\n%s", text)
	}
	rep, rerr := reports.Read(report)
	if rerr != nil {
		t.Fatal(rerr)
	}
	p := rep.Prediction(properties.RMSFwd)
	if p == nil || p.Status != reports.Falsified || !strings.Contains(p.Reason, "liveness: ") || p.Checks != 1 {
		t.Errorf("prediction = %+v, want falsified by the liveness failure after one check", p)
	}
}

// A kernel that never returns is a liveness failure, reported at once: the
// contract run ends after the first watchdog, without shrinking (which
// would wait the watchdog again at every step), with a command that
// replays the checks up to it.
func TestLivenessEndsTheRunAtOnce(t *testing.T) {
	const wd = 300 * time.Millisecond
	o, took := runContract(t, properties.RMSFwd, 100, wd, func(tb properties.TB) {
		properties.RMSNormForwardContract(tb, spin)
	})
	// The emulator's instruction budget or the 300 ms watchdog, whichever
	// ends the launch first on this machine.
	if o.Status != outcome.Falsified || !strings.HasPrefix(o.Reason, "liveness: ") ||
		!strings.Contains(o.Reason, "did not complete within 300ms") && !strings.Contains(o.Reason, "instruction budget") {
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

// erring is an RMSNorm forward whose every call fails with err.
type erring struct{ err error }

func (f erring) RMSNormForward(cudart.Device, *op.RMSNormForwardArgs) error { return f.err }

// A device left unusable by an earlier timeout fails every later call
// with an error that matches ErrTimeout as well: the contract that meets it
// records an error, not a liveness failure of its own kernel.
func TestPoisonedDeviceIsAnError(t *testing.T) {
	timeout := &cudart.TimeoutError{What: "other_kernel", Limit: time.Second}
	err := &cudart.Error{Op: "launch", Name: "rmsnorm_fwd", Err: fmt.Errorf("%w (%w)", cudart.ErrPoisoned, timeout)}
	o, _ := runContract(t, properties.RMSFwd, 100, 0, func(tb properties.TB) {
		properties.RMSNormForwardContract(tb, erring{err})
	})
	if o.Status != outcome.Errored || strings.Contains(o.Reason, "liveness") || o.Checks != 1 {
		t.Errorf("status %s after %d checks, reason %q: want an error at once", o.Status, o.Checks, o.Reason)
	}
}

// A prediction falsified by a liveness failure costs one watchdog: a later
// contract run of it (another test of the same prediction) does not launch
// the hanging kernel again to wait the watchdog a second time.
func TestLivenessCostsOneWatchdog(t *testing.T) {
	const wd = time.Second
	c := suite.Default()
	c.Backend, c.Watchdog = "emu", wd
	dev, _, err := suite.OpenDevice(c)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	cfg := suite.ContractConfig(c, dev)
	cfg.Recorder, cfg.Seed = &outcome.Recorder{}, 12345
	defer suite.SetRapid(suite.Rapid{Checks: 100, NoFailFile: true})()
	start := time.Now()
	for _, name := range []string{"TestSpinA", "TestSpinB", "TestSpinC"} {
		properties.RunQuiet(name, cfg, func(tb properties.TB) { properties.RMSNormForwardContract(tb, spin) })
	}
	took := time.Since(start)
	o := cfg.Recorder.Outcomes()[properties.RMSFwd]
	if o.Status != outcome.Falsified || !strings.HasPrefix(o.Reason, "liveness: ") || o.Failed != 1 {
		t.Errorf("status %s, %d failed, reason %q: want falsified by one liveness failure", o.Status, o.Failed, o.Reason)
	}
	if took > wd+wd/2 {
		t.Errorf("three contract runs of a hanging kernel took %v with a %v watchdog: want about one", took, wd)
	}
	if len(o.Notes) != 2 || !strings.Contains(o.Notes[0], "already falsified by a liveness failure in TestSpinA") {
		t.Errorf("notes %q: want the two runs not started, naming the one that hung", o.Notes)
	}
}
