package properties_test

import (
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// dependence runs DEPEND-001 on im on the emulator for checks checks and
// returns its outcome (removing the fail file of a failure provoked on
// purpose).
func dependence(t *testing.T, im properties.Impls, checks int) outcome.Outcome {
	t.Helper()
	d := cudart.New(emu.New(emu.Config{}), cudart.DefaultOptions())
	t.Cleanup(func() { d.Close() })
	cfg := properties.Config{Device: d, Recorder: &outcome.Recorder{}, Loops: suite.Checks(checks)}
	q := properties.RunQuiet(t.Name(), cfg, func(tb properties.TB) { properties.DependenceContract(tb, im) })
	o := q.Outcomes()[properties.Dependence]
	removeFailFile(o.Failfile)
	return o
}

// Every operation of ours computes each output from exactly its declared
// inputs. It runs in the suite, so that the report has DEPEND-001: a
// report without it is partial, and the suite does not check a partial
// run's branch coverage.
func TestDependenceOurs(t *testing.T) {
	t.Parallel()
	properties.DependenceContract(suite.T(t), ours(properties.Dependence))
}

var _ = strings.Contains
