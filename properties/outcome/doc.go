// Package outcome holds what running ptxprop's contracts produced: the
// verdict on a prediction (Status), an Outcome per prediction with its
// checks, error statistics (ErrorStats), minimal counterexample and
// reproduction command, and the Recorder that a runner hands to the
// contracts through properties.Config to collect outcomes and follow the
// contract runs in progress (LiveRun).
//
// Several contract runs of one prediction merge into one Outcome: counts
// add up, maxima take the larger, and the most severe verdict wins
// (falsified over error over inconclusive over discharged over skipped).
// The package holds no state of its own: a runner makes one Recorder per
// run. Package properties/suite writes outcomes into the contract report.
package outcome
