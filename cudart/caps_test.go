package cudart

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// bare shows a backend's Backend methods only, declaring caps.
type bare struct {
	Backend
	caps Caps
}

func (b bare) Capabilities() Caps { return b.caps }

// A backend that declares a capability without its interface gives a
// Device that refuses every call, naming the capability.
func TestDeclaredButMissing(t *testing.T) {
	d := New(bare{newMem(), CapFill | CapWriteCounts}, DefaultOptions())
	defer d.Close()
	_, err := d.Alloc(F32, 8)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "{fill,write-counts}") {
		t.Fatalf("Alloc: %v, want ErrInvalid naming {fill,write-counts}", err)
	}
	if _, err := d.Load("k", []byte("k")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Load: %v, want ErrInvalid", err)
	}
	if d.Capabilities() != 0 {
		t.Errorf("Capabilities = %v, want none of the missing ones", d.Capabilities())
	}
}

// TestCheckerFromCaps: the checker follows the declared capabilities; the
// methods a backend has but does not declare are never called.
func TestCheckerFromCaps(t *testing.T) {
	for _, c := range []struct {
		caps   Caps
		device bool
	}{
		{0, false}, {CapFill | CapBatch, false}, {CapCopyDtoD, true},
		{CapCopyDtoD | CapProtect, false}, {gpuCaps, true},
	} {
		mb := newMem()
		mb.caps = c.caps
		verifies := 0
		mb.kernels[verifyEntry] = func(m *memBackend, p [][]byte) error { verifies++; return goVerify(m, p) }
		mb.kernels["copy"] = func(m *memBackend, p [][]byte) error {
			copy(m.at(ptr(p[1]))[:4*20000], m.at(ptr(p[0]))[:4*20000])
			return nil
		}
		d := New(mb, DefaultOptions())
		_, isDev := d.(*device).check.(*deviceChecker)
		if isDev != c.device {
			t.Errorf("caps %v: device checker %v, want %v", c.caps, isDev, c.device)
		}
		m, _ := d.Load("k", []byte("k"))
		x, _ := d.Alloc(F32, 20000) // large: compared on the device where it is checked there
		y, _ := d.Alloc(F32, 20000)
		if err := d.Write(x, make([]float32, 20000)); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second with a snapshot of x
			if err := d.Launch(m, "copy", Geometry{Grid: D1(1), Block: D1(1)}, In(x), Out(y)); err != nil {
				t.Fatalf("caps %v: %v", c.caps, err)
			}
		}
		if (verifies > 0) != c.device || (mb.dtod > 0) != c.device {
			t.Errorf("caps %v: %d verify passes, %d device copies; want some only when checked on the device", c.caps, verifies, mb.dtod)
		}
		if mb.batches > 0 != c.caps.Has(CapBatch) {
			t.Errorf("caps %v: %d batches", c.caps, mb.batches)
		}
		if _, err := d.Elapsed(1, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		if n := mb.undeclared.Load(); n != 0 {
			t.Errorf("caps %v: %d calls of methods not declared", c.caps, n)
		}
		if _, err := d.WriteCounts(y); !errors.Is(err, ErrUnsupported) {
			t.Errorf("caps %v: WriteCounts: %v, want ErrUnsupported", c.caps, err)
		}
		if err := d.SetSchedule(1); !errors.Is(err, ErrUnsupported) {
			t.Errorf("caps %v: SetSchedule: %v, want ErrUnsupported", c.caps, err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCapsString(t *testing.T) {
	if s := (CapFill | CapSchedule | 1<<20).String(); s != "{fill,schedule,0x100000}" {
		t.Errorf("String = %q", s)
	}
	if !gpuCaps.Has(CapFill|CapBatch) || gpuCaps.Has(CapProtect) {
		t.Error("Has")
	}
}

// SetOptions changes the checks and the watchdog, not what the Device was
// opened with.
func TestSetOptionsKeepsOpen(t *testing.T) {
	opts := DefaultOptions()
	opts.Ordinal = 3
	d := New(newMem(), opts)
	defer d.Close()
	d.SetOptions(Options{Watchdog: time.Minute, GuardBytes: 100})
	if o := d.Options(); o.Ordinal != 3 || o.Watchdog != time.Minute || o.GuardBytes != 256 {
		t.Errorf("options after SetOptions: %+v", o)
	}
}
