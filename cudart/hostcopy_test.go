package cudart

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
)

// Every test in this package runs with released host copies overwritten:
// a holder that reads one after giving it back sees PoisonI bytes.
func init() { poisonReleased = true }

func TestHostCopyShares(t *testing.T) {
	src := make([]byte, 3*minPooled+5)
	for i := range src {
		src[i] = byte(i)
	}
	h := newHostCopy(src)
	if !h.pooled || len(h.b) != len(src) || cap(h.b) != 4*minPooled {
		t.Fatalf("pooled %v, len %d, cap %d; want pooled, %d, %d", h.pooled, len(h.b), cap(h.b), len(src), 4*minPooled)
	}
	h.hold()
	h.release()
	if h.b[7] != 7 { // one holder left: still its bytes
		t.Fatalf("after one of two releases: byte 7 is %#x", h.b[7])
	}
	b := h.b[:cap(h.b)]
	h.release()
	if b[7] != PoisonI || b[len(b)-1] != PoisonI {
		t.Errorf("released copy not poisoned: %#x %#x", b[7], b[len(b)-1])
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a third release did not panic")
			}
		}()
		h.release()
	}()

	small := newHostCopy([]byte{1, 2, 3})
	if small.pooled {
		t.Error("a 3-byte copy is pooled")
	}
	var nilCopy *hostCopy
	nilCopy.release() // no-op
	if nilCopy.bytes() != nil {
		t.Error("bytes of a nil copy")
	}
}

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
			m.kernels[verifyEntry] = goVerify
			m.kernels["copy"] = copyKernel
			return &lockedMem{c: copyMem{m}}
		},
		"pinned": func() Backend {
			m := newMem()
			m.kernels[verifyEntry] = goVerify
			m.kernels["copy"] = copyKernel
			return &lockedMem{c: copyMem{m}, pinPool: &pinPool{}}
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
