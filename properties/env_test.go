package properties

import (
	"testing"

	"github.com/ptxprop/ptxprop/properties/gen"
)

// A run without a device draws under the emulator's limits.
func TestLimitsWithoutADevice(t *testing.T) {
	if lim := (&Config{}).Limits(); lim != gen.EmuLimits {
		t.Fatalf("limits without a device = %+v, want gen.EmuLimits", lim)
	}
}
