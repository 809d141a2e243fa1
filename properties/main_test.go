package properties_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/properties"
)

func TestMain(m *testing.M) {
	flag.Parse()
	properties.DefaultChecks(1000)
	start := time.Now()
	properties.StartDeadline(os.Stdout, start)
	stop := properties.StartProgress(os.Stdout, start)
	code := m.Run()
	stop()
	if err := properties.Finish(os.Stdout, start); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	properties.CloseDevice()
	os.Exit(code)
}
