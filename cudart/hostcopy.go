package cudart

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// hostCopy is a host copy of a buffer's bytes: a Write's data (a pending
// store and, written in full, the buffer's mirror) or a launch's output
// gathered back on a device-checking backend (the mirror a Read serves).
// Its holders share it: the buffer's mirror, a pending store until it is
// made, a Read copying out of it without the lock. The last holder to let
// go gives the memory back to a pool for the next copy of that size class.
//
// Why a pool: these copies are nearly all the bytes a check allocates (at
// 64×1024, 256 KiB in and 256 KiB back per RMSNorm forward), and with a
// live heap of a few MiB the garbage collector then ran about 70 times a
// second. A copy that is never given back (a holder dropped on an error
// path) is simply collected: only giving one back too early would be a
// bug, and release panics on a count below zero.
type hostCopy struct {
	b      []byte
	refs   atomic.Int32
	pooled bool
}

// hostPools holds free copies by size class: pool k has capacity 1<<k.
var hostPools [bits.UintSize]sync.Pool

// minPooled is the smallest copy worth pooling; smaller ones cost less to
// allocate than to track.
const minPooled = 4 << 10

// poisonReleased, set by tests, overwrites a copy's bytes when it goes back
// to the pool, so that a holder that reads it afterwards sees garbage.
var poisonReleased bool

// newHostCopy returns a copy of src with one holder.
func newHostCopy(src []byte) *hostCopy {
	n := len(src)
	var h *hostCopy
	if n >= minPooled {
		k := bits.Len(uint(n - 1))
		if v := hostPools[k].Get(); v != nil {
			h = v.(*hostCopy)
		} else {
			h = &hostCopy{b: make([]byte, 1<<k), pooled: true}
		}
		h.b = h.b[:n]
	} else {
		h = &hostCopy{b: make([]byte, n)}
	}
	copy(h.b, src)
	h.refs.Store(1)
	return h
}

// keep returns b as a copy with one holder, not pooled (bytes the caller
// allocated and hands over).
func keep(b []byte) *hostCopy {
	h := &hostCopy{b: b}
	h.refs.Store(1)
	return h
}

// hold adds a holder.
func (h *hostCopy) hold() *hostCopy {
	if h.refs.Add(1) <= 1 {
		panic("cudart: hold of a released host copy")
	}
	return h
}

// release lets go of one holder's share; the last gives the memory back.
// A nil h is a no-op.
func (h *hostCopy) release() {
	if h == nil {
		return
	}
	switch r := h.refs.Add(-1); {
	case r < 0:
		panic("cudart: host copy released more often than held")
	case r > 0 || !h.pooled:
		return
	}
	h.b = h.b[:cap(h.b)]
	if poisonReleased {
		for i := range h.b {
			h.b[i] = PoisonI
		}
	}
	hostPools[bits.Len(uint(cap(h.b)-1))].Put(h)
}

// bytes returns the copy's contents, or nil for a nil h.
func (h *hostCopy) bytes() []byte {
	if h == nil {
		return nil
	}
	return h.b
}
