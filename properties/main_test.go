package properties_test

import (
	"os"
	"testing"

	"github.com/ptxprop/ptxprop/properties/suite"
)

func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }
