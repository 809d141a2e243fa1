package suite_test

import (
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/properties/suite"
)

// -ptxprop.emu-schedule opens the emulator with a fuzzed schedule and is
// refused on a GPU, whose order no seed sets.
func TestEmuScheduleNeedsTheEmulator(t *testing.T) {
	c := suite.Default()
	c.EmuSchedule = 5
	if err := suite.OpenOrdinal(c, "emu", 0); err != nil {
		t.Errorf("emu with a schedule seed: %v", err)
	}
	if err := suite.OpenOrdinal(c, "emu-checked", 0); err != nil {
		t.Errorf("emu-checked with a schedule seed: %v", err)
	}
	err := suite.OpenOrdinal(c, "gpu", 0)
	if err == nil || !strings.Contains(err.Error(), "-ptxprop.emu-schedule needs the emulator") {
		t.Errorf("gpu with a schedule seed: err = %v", err)
	}
}
