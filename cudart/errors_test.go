package cudart_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
)

const storeOne = `.version 7.0
.target sm_70
.address_size 64

.visible .entry store_one(
	.param .u64 y
)
{
	.reg .b64 %rd<2>;
	.reg .f32 %f<2>;
	ld.param.u64 %rd1, [y];
	cvta.to.global.u64 %rd1, %rd1;
	mov.f32 %f1, 0f3F800000;
	st.global.f32 [%rd1], %f1;
	ret;
}
`

func emuDevice(t *testing.T) cudart.Device {
	t.Helper()
	dev := cudart.New(emu.New(emu.Config{}), cudart.DefaultOptions())
	t.Cleanup(func() { dev.Close() })
	return dev
}

// A module that does not load — an empty text, PTX that does not parse —
// fails at Load with an error wrapping ErrLoad that names the module, and
// Setup tells it from a kernel's fault.
func TestLoadErrors(t *testing.T) {
	dev := emuDevice(t)
	for _, c := range []struct{ name, text string }{
		{"empty", ""},
		{"blank", " \n\t\n"},
		{"garbage", ".version 7.0\n.target sm_70\n.visible .entry k( {\n"},
	} {
		_, err := dev.Load(c.name, []byte(c.text))
		if !errors.Is(err, cudart.ErrLoad) || !cudart.Setup(err) {
			t.Errorf("Load(%s): err = %v, want one wrapping ErrLoad", c.name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "load "+c.name+":") {
			t.Errorf("Load(%s): %v does not name the module", c.name, err)
		}
	}
}

// An entry the module lacks and a parameter count the entry does not take
// are set-up failures; a launch error names the module the caller loaded,
// not the first module to load the same text.
func TestLaunchSetupErrors(t *testing.T) {
	dev := emuDevice(t)
	if _, err := dev.Load("first", []byte(storeOne)); err != nil {
		t.Fatal(err)
	}
	m, err := dev.Load("mine", []byte(storeOne))
	if err != nil {
		t.Fatal(err)
	}
	y, err := dev.Alloc(cudart.F32, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(1)}
	err = dev.Launch(m, "no_such_entry", g, cudart.Out(y))
	if !cudart.Setup(err) || !strings.Contains(err.Error(), "mine") || strings.Contains(err.Error(), "first") {
		t.Errorf("missing entry: err = %v, want a set-up error naming module mine", err)
	}
	err = dev.Launch(m, "store_one", g, cudart.Out(y), cudart.ScalarU32(1))
	if !errors.Is(err, cudart.ErrParams) || !cudart.Setup(err) {
		t.Errorf("two parameters for one: err = %v, want ErrParams", err)
	}
	if err := dev.Launch(m, "store_one", g, cudart.Out(y)); err != nil {
		t.Errorf("the right launch: %v", err)
	}
	for _, code := range []error{cudart.ErrTimeout, cudart.ErrOutOfBounds, cudart.ErrLaunch, cudart.ErrDeadlock, cudart.ErrGuardBand} {
		if cudart.Setup(&cudart.Error{Op: "launch", Name: "k", Err: code}) {
			t.Errorf("Setup(%v) = true: a kernel's fault", code)
		}
	}
}
