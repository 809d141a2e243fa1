package emu_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
)

// A device over the emulator runs the PTX the GPU runs and reports what a
// GPU hides: here an off-by-one store past the end of a buffer.
func Example() {
	src, err := os.ReadFile("testdata/checks.ptx")
	if err != nil {
		panic(err)
	}
	dev := cudart.New(emu.New(emu.Config{Seed: 7}), cudart.DefaultOptions())
	defer dev.Close()
	mod, err := dev.Load("checks", src)
	if err != nil {
		panic(err)
	}
	out, _ := dev.Alloc(cudart.F32, 100)
	err = dev.Launch(mod, "oob_write", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(128)},
		cudart.Out(out), cudart.ScalarI32(100))
	var f *emu.Fault
	fmt.Println(errors.Is(err, cudart.ErrOutOfBounds), errors.As(err, &f), f.Thread[0], f.Space)
	fmt.Println(dev.Info().Name)
	// Output:
	// true true 100 global
	// ptxprop PTX emulator (warp 32, approximate instructions as sm_90)
}
