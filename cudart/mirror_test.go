package cudart

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/ptxprop/ptxprop/cudart/internal/staging"
)

// Every test in this package runs with released host copies overwritten:
// a holder that reads one after giving it back sees poison bytes.
func init() { staging.PoisonReleased = true }

// TestMirrorSharedWithReads writes a buffer again and again, in full (the
// data is then also its mirror) and all but its last element (then it has
// no mirror, and the pending store holds the only share), while other
// goroutines read it (from the mirror, copied without the lock, or from the
// device after the pending stores), launch a copy kernel on it and read
// that kernel's output (a pending Write's data staged by the launch or
// copied by another goroutine's call; an output gathered back into a pooled
// copy): every read must see one writer's pattern in all but the last
// element, never the poison of a copy given back too early. On plain,
// device-checking and pinned backends.
func TestMirrorSharedWithReads(t *testing.T) {
	const n = 3000 // 12 000 bytes: pooled
	copyKernel := func(m *memBackend, p [][]byte) error {
		x, y := m.at(ptr(p[0])), m.at(ptr(p[1]))
		copy(y[:4*n+4], x[:4*n+4])
		return nil
	}
	backends := map[string]func() Backend{
		"plain": func() Backend {
			m := newMem()
			m.kernels["copy"] = copyKernel
			return m
		},
		"checked": func() Backend {
			m := newMem()
			m.caps = CapCopyDtoD | CapBatch
			m.kernels["copy"] = copyKernel
			return m
		},
		"pinned": func() Backend {
			m := newMem()
			m.caps = CapCopyDtoD | CapBatch | CapPinned
			m.pins = &pinPool{}
			m.kernels["copy"] = copyKernel
			return m
		},
	}
	for name, nb := range backends {
		t.Run(name, func(t *testing.T) {
			d := New(nb(), DefaultOptions())
			defer d.Close()
			mod, err := d.Load("k", []byte("k"))
			if err != nil {
				t.Fatal(err)
			}
			x, err := d.Alloc(U32, n+1)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Write(x, uniform(n+1, 1)); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			wg.Go(func() { // the writer
				for k := range uint32(200) {
					if err := d.Write(x, uniform(n+int(k%2), k+2)); err != nil {
						errs <- err
						return
					}
				}
			})
			for range 3 {
				wg.Go(func() { // readers of x
					got := make([]uint32, n+1)
					for range 200 {
						if err := d.Read(got, x); err != nil {
							errs <- err
							return
						}
						if err := isUniform(got[:n]); err != nil {
							errs <- fmt.Errorf("read of x: %w", err)
							return
						}
					}
				})
			}
			for range 2 {
				wg.Go(func() { // launches on x, and reads of their output
					got := make([]uint32, n+1)
					for range 50 {
						y, err := d.Alloc(U32, n+1)
						if err == nil {
							err = d.Launch(mod, "copy", Geometry{Grid: D1(1), Block: D1(1)}, In(x), Out(y))
						}
						if err == nil {
							err = d.Read(got, y)
						}
						if err == nil {
							err = isUniform(got[:n])
						}
						if err == nil {
							err = d.Free(y)
						}
						if err != nil {
							errs <- fmt.Errorf("copy of x: %w", err)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// uniform returns n copies of v.
func uniform(n int, v uint32) []uint32 {
	s := make([]uint32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// isUniform reports an error unless every element of s is one value that a
// writer of TestMirrorSharedWithReads wrote (1 to 201).
func isUniform(s []uint32) error {
	for i, v := range s {
		if v != s[0] || v < 1 || v > 201 {
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], v)
			return fmt.Errorf("element %d is %#x (bytes % x; element 0: %#x)", i, v, b, s[0])
		}
	}
	return nil
}
