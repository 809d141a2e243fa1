package suite

import (
	"time"

	"github.com/ptxprop/ptxprop/properties/outcome"
)

// GoTestCommand is goTestCommand, for the tests.
var GoTestCommand = goTestCommand

// ReproArgs is reproArgs, for the tests.
var ReproArgs = reproArgs

// Repro is the runner's reproduction command for a run of c with the
// command prefix.
func Repro(c Config, prefix, name string, seed uint64, failfile string) string {
	r := &runner{cfg: c, reproCmd: prefix}
	return r.repro(name, seed, failfile)
}

// RunRepro is the reproduction command of a job of Run under c.
func RunRepro(c Config, name string, seed uint64) string {
	r := &runner{cfg: c, outside: true}
	return r.repro(name, seed, "")
}

// RunRerun is the command that replays the first checks checks of a job of
// Run under c from seed.
func RunRerun(c Config, name string, seed uint64, checks int) string {
	r := &runner{cfg: c, outside: true}
	return r.rerunChecks(name, seed, checks)
}

// OpenRest is openRest, for the tests: how all visible GPUs are found.
var OpenRest = openRest

// ProgressInterval is progressOutput, for the tests: the interval of
// progress lines to out.
var ProgressInterval = progressOutput

// ProgressLine is the progress line of a run started at start whose
// outcomes and contract runs in progress are rec's.
func ProgressLine(rec *outcome.Recorder, start time.Time) string {
	r := &runner{rec: rec, start: start}
	return r.progressLine()
}

// PlanLoops is planLoops, for the tests: how a contract run's checks are
// split over rapid loops.
var PlanLoops = planLoops

// OpenOrdinal is openOrdinal, for the tests.
func OpenOrdinal(c Config, name string, ordinal int) error {
	d, _, err := openOrdinal(c, name, ordinal)
	if err == nil {
		d.Close()
	}
	return err
}
