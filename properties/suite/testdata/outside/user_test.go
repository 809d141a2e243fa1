package main

// A user's own module testing its own implementations with ptxprop's
// contracts, under suite.Main (TestUserModuleReport runs it): the report
// must hold the predictions these tests ran, on these implementations.

import (
	"math"
	"os"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
)

func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }

// hostRMSNorm is RMSNorm forward computed on the host in float64, rounded
// once: correct. The report names it by its Go type.
type hostRMSNorm struct{}

func (hostRMSNorm) RMSNormForward(_ cudart.Device, a *op.RMSNormForwardArgs) error {
	rmsNorm(a, true)
	return nil
}

// brokenRMSNorm forgets γ; it names itself.
type brokenRMSNorm struct{}

func (brokenRMSNorm) Name() string { return "my-broken-rmsnorm" }

func (brokenRMSNorm) RMSNormForward(_ cudart.Device, a *op.RMSNormForwardArgs) error {
	rmsNorm(a, false)
	return nil
}

func rmsNorm(a *op.RMSNormForwardArgs, gamma bool) {
	for r := range a.Rows {
		x := a.X[r*a.Hidden : (r+1)*a.Hidden]
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		rms := math.Sqrt(ss/float64(a.Hidden) + float64(a.Eps))
		if a.RMS != nil {
			a.RMS[r] = float32(rms)
		}
		for i, v := range x {
			y := float64(v) / rms
			if gamma {
				y *= float64(a.Gamma[i])
			}
			a.Y[r*a.Hidden+i] = float32(y)
		}
	}
}

func TestMyRMSNorm(t *testing.T) { properties.RMSNormForwardContract(suite.T(t), hostRMSNorm{}) }

func TestMyBrokenRMSNorm(t *testing.T) {
	properties.RMSNormForwardContract(suite.T(t), brokenRMSNorm{})
}
