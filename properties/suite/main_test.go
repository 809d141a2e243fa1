package suite_test

import (
	"os"
	"testing"

	"github.com/ptxprop/ptxprop/properties/suite"
)

// The package's own tests run under Main too; unless a test started this
// binary as a child run (childEnv), they write no report and print no
// summary.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "" {
		os.Setenv("PTXPROP_REPORT", "off")
		os.Setenv("PTXPROP_SUMMARY", "false")
		os.Setenv("PTXPROP_PROGRESS", "0")
	}
	os.Exit(suite.Main(m))
}
