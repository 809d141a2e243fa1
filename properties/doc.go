// Package properties holds ptxprop's predictions: falsifiable claims about
// GPU kernels, each checked by a rapid property.
//
// A prediction is data (Prediction, registered once under its upstream ID).
// A contract is a function XxxContract(t, impl) over a one-method interface
// on the argument types of package op, so any implementation — ptxprop's
// own kernels, a mutant from package falsify, or your PTX — is checked the
// same way. To check your own RMSNorm forward, write a test file:
//
//	func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }
//
//	func TestMyRMSNorm(t *testing.T) {
//		properties.RMSNormForwardContract(suite.T(t), myImpl)
//	}
//
// Package properties/suite runs the contracts: it owns the settings
// (-ptxprop.X flags, PTXPROP_X variables), the device, the report, the
// deadline and signals. A contract reads what it needs from its TB's Config
// and records every run's Outcome (checks, verdict, error statistics, the
// minimal counterexample as rapid drew it, the command that reproduces it)
// in the Config's Recorder. Tolerances come from package oracle: each is a
// function of the inputs, derived from a forward error analysis of the
// float32 computation, and the report records observed error / tolerance.
package properties
