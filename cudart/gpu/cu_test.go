//go:build cuda

package gpu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/ptxprop/ptxprop/cudart"
)

// TestInitInterposed: gorgonia.org/cu's init called the cuInit of
// cuinit.go, not the driver's directly, so its failure cannot end the
// process. It needs no GPU.
func TestInitInterposed(t *testing.T) {
	if n := initCalls(); n != 1 {
		t.Fatalf("cuInit went through the interposer %d times, want once (cu's init): the linker bound cu's call to the driver", n)
	}
	t.Logf("the driver's cuInit, in %q, returned %v", libraryPath(), initResult())
	if libraryPath() == "" {
		t.Errorf("no library path for the driver's cuInit")
	}
	if err := loadDriver(); (err == nil) != (initResult() == success) {
		t.Errorf("loadDriver() = %v with cuInit's result %v", err, initResult())
	}
}

// TestResultOf: cu's errors become our Result with the same code.
func TestResultOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Result
	}{
		{nil, success},
		{cu.NoDevice, ErrNoDevice},
		{cu.IllegalAddress, ErrIllegalAddress},
		{cu.InvalidPtx, ErrInvalidPTX},
		{cu.NotFound, ErrNotFound},
		{cu.OutOfMemory, ErrOutOfMemory},
		{errors.New("not from cu"), ErrUnknown},
	} {
		if got := resultOf(c.err); got != c.want {
			t.Errorf("resultOf(%v) = %d, want %d", c.err, int(got), int(c.want))
		}
	}
	r := resultOf(cu.IllegalAddress)
	if !errors.Is(r, cudart.ErrOutOfBounds) || !errors.Is(r, cudart.ErrLaunch) || !r.Sticky() {
		t.Errorf("%v: not mapped onto the cudart sentinels", r)
	}
	t.Logf("%v", r)
}

// TestParamSlots: every parameter lies byte for byte at the start of its own
// zeroed 8-byte slot, which is all cu's Function.Launch reads through each
// pointer.
func TestParamSlots(t *testing.T) {
	params := [][]byte{
		binary.LittleEndian.AppendUint32(nil, 0x89ABCDEF),
		binary.LittleEndian.AppendUint64(nil, 0xDEADBEEFCAFEF00D),
		{0x7F},
		binary.LittleEndian.AppendUint16(nil, 0xBEEF),
	}
	ptrs, ok := paramSlots(params)
	if !ok || len(ptrs) != len(params) {
		t.Fatalf("paramSlots: %d pointers, ok=%v", len(ptrs), ok)
	}
	for i, p := range params {
		slot := unsafe.Slice((*byte)(ptrs[i]), 8)
		want := make([]byte, 8)
		copy(want, p)
		if !bytes.Equal(slot, want) {
			t.Errorf("parameter %d (%d bytes): slot % x, want % x", i, len(p), slot, want)
		}
		if got, w := *(*uint64)(ptrs[i]), binary.LittleEndian.Uint64(want); got != w { // what cu copies
			t.Errorf("parameter %d: cu would copy %#x, want %#x", i, got, w)
		}
		for j := range ptrs[:i] {
			if ptrs[j] == ptrs[i] {
				t.Errorf("parameters %d and %d share a slot", j, i)
			}
		}
	}
	if _, ok := paramSlots([][]byte{make([]byte, 9)}); ok {
		t.Errorf("a 9-byte parameter was accepted")
	}
	if ptrs, ok := paramSlots(nil); !ok || len(ptrs) != 0 {
		t.Errorf("no parameters: %v, %v", ptrs, ok)
	}
}
