package cudart

import (
	"errors"
	"strings"
	"testing"
)

// A view at an element offset starts misaligned by the offset, its slack
// belongs to the guard band before it (a store just before its first
// element is out of bounds, not a write into the allocation), and a
// kernel that stays inside it round-trips as an aligned buffer does.
func TestViewAtOffset(t *testing.T) {
	for _, size := range []int{8, 1 << 15} { // gathered with its guards; guards read apart
		for off := 1; off <= 3; off++ {
			var addr uint64
			mb := newMem()
			mb.kernels["scale"] = scaleKernel(0)
			mb.kernels["before"] = func(m *memBackend, p [][]byte) error {
				addr = ptr(p[0])
				putF32(m.at(addr-4), 0, 1) // y[-1]
				return nil
			}
			d := New(mb, DefaultOptions())
			m, _ := d.Load("k", []byte("ptx"))
			x, err := d.AllocAt(F32, size, off)
			if err != nil {
				t.Fatal(err)
			}
			y, _ := d.AllocAt(F32, size, off)
			d.Write(x, make([]float32, size))
			if err := d.Launch(m, "scale", Geometry{Grid: D1(1), Block: D1(1)}, In(x), Out(y), ScalarU32(uint32(size)), ScalarF32(2)); err != nil {
				t.Fatalf("size %d off %d: in-bounds launch: %v", size, off, err)
			}
			err = d.Launch(m, "before", Geometry{Grid: D1(1), Block: D1(1)}, Out(y))
			if addr%16 != uint64(4*off) {
				t.Errorf("size %d off %d: address %#x, want %d mod 16", size, off, addr, 4*off)
			}
			if !errors.Is(err, ErrGuardBand) || !strings.Contains(err.Error(), "1 element(s) before its start") {
				t.Errorf("size %d off %d: store before the view: err = %v, want ErrGuardBand 1 element before its start", size, off, err)
			}
			d.Close()
		}
	}
}

func TestViewOffsetBounds(t *testing.T) {
	d := New(newMem(), DefaultOptions())
	defer d.Close()
	for _, off := range []int{-1, MaxViewBytes / 4} {
		if _, err := d.AllocAt(F32, 4, off); !errors.Is(err, ErrInvalid) {
			t.Errorf("AllocAt(F32, 4, %d): err = %v, want ErrInvalid", off, err)
		}
	}
}
