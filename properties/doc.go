// Package properties holds ptxprop's predictions: falsifiable claims about
// GPU kernels, each checked by a rapid property.
//
// A prediction is data (Prediction, registered once under its upstream ID).
// A contract is a function XxxContract(t, impl) over a one-method interface,
// so any implementation — ptxprop's own kernels, a mutant from package
// falsify, or a user's PTX — is checked by the same three lines:
//
//	func TestRMSNormForward(t *testing.T) {
//		properties.RMSNormForwardContract(t, kernels.RMSNormFwd)
//	}
//
// Contracts run through Check, which records every run's Outcome (checks,
// verdict, error statistics, the minimal counterexample as rapid drew it and
// the command that reproduces it). The package's TestMain turns the outcomes
// into the contract report. Tolerances come from package oracle: each is a
// function of the inputs, derived from a forward error analysis of the
// float32 computation, and the report records observed error / tolerance.
package properties
