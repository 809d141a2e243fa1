package emu_test

import (
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
)

// The emulator's options at open reach it, and its run-time controls go
// through the Device.
func TestOpenWithOptions(t *testing.T) {
	opts := cudart.DefaultOptions()
	opts.Backend = emu.Options{Config: emu.Config{Approx: emu.ApproxAdversarial, ApproxSeed: 9}}
	d, err := cudart.Open("emu", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b := d.Backend().(*emu.Backend)
	if cfg := b.Config(); cfg.Approx != emu.ApproxAdversarial || cfg.ApproxSeed != 9 {
		t.Errorf("config %+v, want the options' adversarial seed 9", cfg)
	}
	if d.Capabilities() != emu.Caps {
		t.Errorf("capabilities %v, want %v", d.Capabilities(), emu.Caps)
	}
	if err := d.SetSchedule(3); err != nil || b.Config().Seed != 3 {
		t.Errorf("SetSchedule: %v, seed %d", err, b.Config().Seed)
	}
	// A schedule never replaces the user's adversarial seed.
	if got := b.Config().ApproxSeed; got != 9 {
		t.Errorf("after SetSchedule the adversarial seed is %d, want 9", got)
	}
	if old, err := d.SetInstructionLimit(1000); err != nil || old != 0 || b.Config().MaxInstructions != 1000 {
		t.Errorf("SetInstructionLimit: %d, %v; limit %d", old, err, b.Config().MaxInstructions)
	}
	if old, _ := d.SetInstructionLimit(0); old != 1000 {
		t.Errorf("SetInstructionLimit returned %d, want 1000", old)
	}

	opts.Backend = emu.Options{DeviceChecks: true}
	c, err := cudart.Open("emu", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.Backend().(emu.Checked); !ok {
		t.Errorf("DeviceChecks opened %T, want emu.Checked", c.Backend())
	}
}
