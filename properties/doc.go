// Package properties checks GPU kernels against ptxprop's predictions,
// falsifiable claims each checked by a rapid property. To check your own
// kernel, implement the one-method interface of its operation
// (RMSNormForwarder, …, over the argument types of package op) and call
// the operation's contract from a test file:
//
//	func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }
//
//	func TestMyRMSNorm(t *testing.T) {
//		properties.RMSNormForwardContract(suite.T(t), myImpl)
//	}
//
// go test then writes the contract report (out/contract-report.json) and
// prints its summary: the predictions your tests ran, each credited to the
// implementation it checked (named by its Name method, Namer, else by its
// Go type, or by the kernels it lists: ImplKernels); suite.WithPredictions
// makes a run that filtered some out partial. The example of package properties/suite runs the same
// outside go test, and package binding checks a PTX kernel described by a
// file alone.
//
// A prediction is data (Prediction, registered once under its upstream ID:
// RMSFwd, …). A contract XxxContract(t, impl) checks one prediction on any
// implementation — ptxprop's own kernels, a mutant from package falsify, or
// yours — the same way. Check and Obs are what a contract is written with:
// Obs compares results with the float64 oracle and fails a check with the
// full case.
//
// Package properties/suite runs the contracts: it owns the settings
// (-ptxprop.X flags, PTXPROP_X variables), the device, the report, the
// deadline and signals. A contract reads what it needs from its TB's Config,
// draws its inputs with package properties/gen and records every run's
// outcome (checks, verdict, error statistics, the minimal counterexample as
// rapid drew it, the command that reproduces it) in the Config's Recorder
// (package properties/outcome). Tolerances come from package oracle: each is
// a function of the inputs, derived from a forward error analysis of the
// float32 computation, and the report records observed error / tolerance.
package properties
