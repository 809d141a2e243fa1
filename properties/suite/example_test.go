package suite_test

import (
	"context"
	"fmt"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// myRMSNorm stands for your kernel's launcher: load your PTX on dev, launch
// it on a's tensors and fill a.Y (and a.RMS when it is not nil). So that
// the example runs anywhere, this one computes in float32 on the CPU.
type myRMSNorm struct{}

func (myRMSNorm) RMSNormForward(dev cudart.Device, a *op.RMSNormForwardArgs) error {
	oracle.RMSNormForward32Naive(a.Y, a.RMS, a.X, a.Gamma, a.Rows, a.Hidden, a.Eps)
	return nil
}

// To check your own RMSNorm forward against RMS-FWD-001, write a test file:
//
//	package mykernel_test
//
//	func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }
//
//	func TestMyRMSNorm(t *testing.T) {
//		properties.RMSNormForwardContract(suite.T(t), myRMSNorm{})
//	}
//
// go test then shows progress, writes out/contract-report.json and prints
// its summary. Outside go test, suite.Run runs the same contract, as here.
func Example() {
	c := suite.Default()
	c.Backend, c.Report, c.Summary, c.Progress, c.Checks = "emu", "off", false, 0, 20
	rep, err := suite.Run(context.Background(), c, []suite.Job{
		{Name: "TestMyRMSNorm", Run: func(t properties.TB) { properties.RMSNormForwardContract(t, myRMSNorm{}) }},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := rep.Prediction(properties.RMSFwd)
	fmt.Println(p.ID, p.Status)
	// Output: RMS-FWD-001 discharged
}
