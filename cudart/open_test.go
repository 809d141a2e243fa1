package cudart_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
)

// Two emulators opened side by side are two devices: each names its
// ordinal, and neither takes the other's buffers.
func TestTwoEmulators(t *testing.T) {
	opts := cudart.DefaultOptions()
	a, err := cudart.Open("emu", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	opts.Ordinal = 1
	b, err := cudart.Open("emu", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if ia, ib := a.Info(), b.Info(); ia.Ordinal != 0 || ib.Ordinal != 1 || ia.Backend != "emu" || ib.Backend != "emu" {
		t.Fatalf("infos %+v and %+v, want emulators 0 and 1", ia, ib)
	}
	x, err := a.Alloc(cudart.F32, 4)
	if err != nil {
		t.Fatal(err)
	}
	y, err := b.Alloc(cudart.F32, 4) // the same id on the other device
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Write(x, []float32{1, 2, 3, 4}); !errors.Is(err, cudart.ErrInvalid) {
		t.Errorf("a buffer of device 0 written on device 1: %v, want ErrInvalid", err)
	}
	if err := a.Write(x, []float32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(y, []float32{5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 4)
	if err := a.Read(got, x); err != nil || got[0] != 1 {
		t.Errorf("device 0 reads %v, %v; want its own 1", got, err)
	}
}

func TestOpenOptions(t *testing.T) {
	opts := cudart.DefaultOptions()
	opts.Backend = emu.Options{DeviceChecks: true}
	d, err := cudart.Open("", opts) // auto: the emulator here, given its options
	if err != nil {
		t.Fatal(err)
	}
	if d.Capabilities() != emu.CheckedCaps {
		t.Errorf("DeviceChecks: capabilities %v, want %v", d.Capabilities(), emu.CheckedCaps)
	}
	d.Close()
	if _, err := cudart.Open("emu-checked", cudart.DefaultOptions()); !errors.Is(err, cudart.ErrInvalid) {
		t.Errorf(`Open("emu-checked"): %v, want an unknown backend`, err)
	}
	opts.Ordinal = -1
	if _, err := cudart.Open("emu", opts); !errors.Is(err, cudart.ErrInvalid) {
		t.Errorf("ordinal -1: %v, want ErrInvalid", err)
	}
}

// Open the emulator as the second device of its kind, with adversarial
// approximate instructions, and vary its schedule.
func ExampleOpen() {
	opts := cudart.DefaultOptions()
	opts.Ordinal = 1
	opts.Backend = emu.Options{Config: emu.Config{Approx: emu.ApproxAdversarial, ApproxSeed: 7}}
	dev, err := cudart.Open("emu", opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	fmt.Println(dev.Info().Backend, dev.Info().Ordinal, dev.Capabilities())
	if dev.Capabilities().Has(cudart.CapSchedule) {
		fmt.Println(dev.SetSchedule(42))
	}
	// Output:
	// emu 1 {fill,copy-dtod,protect,write-counts,abort,schedule,instruction-limit,dependence}
	// <nil>
}

// gpuOptions stand for another backend's options.
type gpuOptions struct{}

func (gpuOptions) BackendName() string { return "gpu" }

func TestOpenRefusesOtherBackendsOptions(t *testing.T) {
	opts := cudart.DefaultOptions()
	opts.Backend = gpuOptions{}
	if _, err := cudart.Open("emu", opts); !errors.Is(err, cudart.ErrInvalid) {
		t.Fatalf("gpu options given to the emulator: %v, want ErrInvalid", err)
	}
	opts.Backend = &emu.Options{} // named "emu", but not the type the emulator takes
	if _, err := cudart.Open("emu", opts); !errors.Is(err, cudart.ErrInvalid) {
		t.Fatalf("*emu.Options: %v, want ErrInvalid", err)
	}
}
