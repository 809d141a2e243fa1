package properties_test

import (
	"testing"

	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
)

// Every operation of ours computes each output from exactly its declared
// inputs. It runs in the suite, so that the report has DEPEND-001: a
// report without it is partial, and the suite does not check a partial
// run's branch coverage.
func TestDependenceOurs(t *testing.T) {
	t.Parallel()
	properties.DependenceContract(suite.T(t), ours(properties.Dependence))
}
