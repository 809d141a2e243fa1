package emu

import (
	"fmt"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// TestOutOfBoundsExact checks that every access outside a buffer is caught,
// whatever the guard band, and that the distance is measured from the
// buffer's own end (or start): the allocation behind a buffer is rounded up
// to a size class, and its padding is not part of the buffer.
func TestOutOfBoundsExact(t *testing.T) {
	src := mustRead(t, "testdata/oob.ptx")
	for _, guard := range []int{0, 256, 1024} {
		opts := cudart.DefaultOptions()
		opts.Watchdog, opts.GuardBytes = 0, guard
		e := newEnvOn(t, "oob", src, New(Config{}), opts)
		dev, m := e.dev, e.mod
		one := cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(1)}
		sink, _ := dev.Alloc(cudart.F32, 1)
		for _, n := range []int{1, 2, 64, 1001} {
			buf, err := dev.Alloc(cudart.F32, n)
			if err != nil {
				t.Fatal(err)
			}
			end := int64(4 * n)
			for _, past := range []int64{0, 4, 252, 1276, 2044, 4092} {
				t.Logf("guard %d, %d floats, %d bytes past the end", guard, n, past)
				err := dev.Launch(m, "store_at", one, cudart.Out(buf), cudart.ScalarU64(uint64(end+past)))
				wantErr(t, err, cudart.ErrOutOfBounds, buf.String(), fmt.Sprintf("%d bytes past the end of %s", past, buf), "st.global")
				err = dev.Launch(m, "load_at", one, cudart.In(buf), cudart.ScalarU64(uint64(end+past)), cudart.Out(sink))
				wantErr(t, err, cudart.ErrOutOfBounds, fmt.Sprintf("%d bytes past the end of %s", past, buf), "ld.global")
			}
			for _, before := range []int64{4, 256, 1028, 4096} {
				err := dev.Launch(m, "store_at", one, cudart.Out(buf), cudart.ScalarU64(uint64(-before)))
				wantErr(t, err, cudart.ErrOutOfBounds, fmt.Sprintf("%d bytes before the start of %s", before, buf), "st.global")
			}
			if n%2 == 1 { // an aligned 8-byte store that starts inside and ends outside
				err = dev.Launch(m, "store64_at", one, cudart.Out(buf), cudart.ScalarU64(uint64(end-4)))
				wantErr(t, err, cudart.ErrOutOfBounds, fmt.Sprintf("crosses the end of %s", buf), "st.global.u64")
			}
			// The last element is fine.
			if err := dev.Launch(m, "store_at", one, cudart.Out(buf), cudart.ScalarU64(uint64(end-4))); err != nil {
				t.Fatalf("guard %d, %d floats: store to the last element: %v", guard, n, err)
			}
			if err := dev.Free(buf); err != nil {
				t.Fatal(err)
			}
		}
	}
}
