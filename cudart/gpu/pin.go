//go:build cuda

package gpu

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/ptxprop/ptxprop/cudart"
)

var _ cudart.Pinner = (*Backend)(nil)

// pins is the page-locked host memory that Pinned hands out
// (cudart.Pinner): whole allocations (cuMemHostAlloc) of a power-of-two
// size class, kept for reuse when given back. Its own lock, not sem,
// guards it: the Device fills and reads these buffers outside the
// backend's calls, which is the point of them.
type pins struct {
	mu     sync.Mutex
	free   map[int][]unsafe.Pointer // by class
	slabs  map[unsafe.Pointer]*slab // every allocation, by its address
	total  int                      // bytes allocated, or being allocated
	failed bool                     // cuMemHostAlloc failed once: Pinned returns nil from then on
	closed bool
}

type slab struct {
	class int
	out   bool // handed out and not given back
}

const (
	pinMin   = 64 << 10
	pinMax   = stageMax  // a larger request gets Go memory
	pinTotal = 512 << 20 // the most page-locked memory Pinned allocates
)

// Pinned returns n bytes of page-locked host memory, or nil when the
// request is larger than pinMax, the pool holds pinTotal bytes already, or
// the driver refused. A copy from or into the whole slice, or a prefix of
// it, goes directly between it and the device; inside Batch an upload from
// it is only queued, so it must not change until Batch has returned.
func (b *Backend) Pinned(n int) []byte {
	if n <= 0 || n > pinMax {
		return nil
	}
	class := max(pinMin, 1<<bits.Len(uint(n-1)))
	ps := &b.pins
	ps.mu.Lock()
	if ps.closed || ps.failed {
		ps.mu.Unlock()
		return nil
	}
	if l := ps.free[class]; len(l) > 0 {
		p := l[len(l)-1]
		ps.free[class] = l[:len(l)-1]
		ps.slabs[p].out = true
		ps.mu.Unlock()
		return unsafe.Slice((*byte)(p), class)[:n]
	}
	if ps.total+class > pinTotal {
		ps.mu.Unlock()
		return nil
	}
	ps.total += class
	ps.mu.Unlock()
	var p unsafe.Pointer
	err := b.do(func() error {
		var r Result
		p, r = memHostAlloc(class)
		return b.checkf(r, "cuMemHostAlloc(%d bytes)", class)
	})
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if err != nil || ps.closed { // closed meanwhile: the context's destruction frees it
		ps.total -= class
		ps.failed = ps.failed || err != nil && !ps.closed
		return nil
	}
	if ps.slabs == nil {
		ps.slabs, ps.free = map[unsafe.Pointer]*slab{}, map[int][]unsafe.Pointer{}
	}
	ps.slabs[p] = &slab{class: class, out: true}
	return unsafe.Slice((*byte)(p), class)[:n]
}

// Unpin gives back a slice that Pinned returned; anything else, or a slice
// given back already, is ignored.
func (b *Backend) Unpin(s []byte) {
	p := unsafe.Pointer(unsafe.SliceData(s))
	ps := &b.pins
	ps.mu.Lock()
	defer ps.mu.Unlock()
	sl := ps.slabs[p]
	if sl == nil || !sl.out || cap(s) != sl.class || ps.closed {
		return
	}
	sl.out = false
	ps.free[sl.class] = append(ps.free[sl.class], p)
}

// pinned returns s's address when s starts a buffer Pinned handed out and
// fits in it: a copy can then go directly from or into it.
func (b *Backend) pinned(s []byte) (unsafe.Pointer, bool) {
	p := unsafe.Pointer(unsafe.SliceData(s))
	ps := &b.pins
	ps.mu.Lock()
	defer ps.mu.Unlock()
	sl := ps.slabs[p]
	return p, sl != nil && sl.out && len(s) <= sl.class
}

// close frees every allocation, handed out or not. The context must be
// current, and no call may be using them (Close holds sem for good).
func (ps *pins) close() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.closed = true
	for p := range ps.slabs {
		memFreeHost(p)
	}
	ps.slabs, ps.free, ps.total = nil, nil, 0
}
