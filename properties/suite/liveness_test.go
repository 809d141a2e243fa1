package suite_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
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

// spinning is an RMSNorm forward whose kernel never returns.
type spinning struct{}

func (spinning) RMSNormForward(dev cudart.Device, a *op.RMSNormForwardArgs) error {
	m, err := dev.Load("spin", []byte(spinPTX))
	if err != nil {
		return err
	}
	y, err := dev.Alloc(cudart.F32, len(a.Y))
	if err != nil {
		return err
	}
	defer dev.Free(y)
	return dev.Launch(m, "spin", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(32)}, cudart.Out(y))
}

// TestChildSpin is the child run of TestDeadlineWithAHangingKernel.
func TestChildSpin(t *testing.T) {
	if os.Getenv(childEnv) != "TestChildSpin" {
		t.Skip("run as a child by TestDeadlineWithAHangingKernel")
	}
	properties.RMSNormForwardContract(suite.T(t), spinning{})
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
