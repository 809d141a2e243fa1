// Package staging holds what a Device keeps on the host for device memory:
// host copies of buffers' bytes (a Write's data, a buffer's mirror, a
// launch's output gathered back), shared by their holders and pooled; the
// stores to device memory not yet made (canaries, poison, written data);
// and their reduction to disjoint segments for one upload.
package staging

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Copy is a host copy of a buffer's bytes: a Write's data (a pending store
// and, written in full, the buffer's mirror) or a launch's output gathered
// back on a device-checking backend (the mirror a Read serves). Its holders
// share it: the buffer's mirror, a pending store until it is made, a Read
// copying out of it without the Device's lock. The last holder to let go
// gives the memory back to a pool for the next copy of that size class.
//
// These copies are nearly all the bytes a check allocates, so pooling them
// keeps the garbage collector from running often. A copy that is never
// given back (a holder dropped on an error path) is simply collected: only
// giving one back too early would be a bug, and Release panics on a count
// below zero.
type Copy struct {
	b      []byte
	refs   atomic.Int32
	pooled bool
}

// pools holds free copies by size class: pool k has capacity 1<<k.
var pools [bits.UintSize]sync.Pool

// MinPooled is the smallest copy worth pooling; smaller ones cost less to
// allocate than to track.
const MinPooled = 4 << 10

// PoisonReleased, set by tests before any copy is made, overwrites a copy's
// bytes with Poison when it goes back to the pool, so that a holder that
// reads it afterwards sees garbage.
var PoisonReleased bool

// Poison is the byte PoisonReleased writes.
const Poison byte = 0xEE

// New returns a copy of src with one holder.
func New(src []byte) *Copy {
	n := len(src)
	var h *Copy
	if n >= MinPooled {
		k := bits.Len(uint(n - 1))
		if v := pools[k].Get(); v != nil {
			h = v.(*Copy)
		} else {
			h = &Copy{b: make([]byte, 1<<k), pooled: true}
		}
		h.b = h.b[:n]
	} else {
		h = &Copy{b: make([]byte, n)}
	}
	copy(h.b, src)
	h.refs.Store(1)
	return h
}

// Keep returns b as a copy with one holder, not pooled (bytes the caller
// allocated and hands over).
func Keep(b []byte) *Copy {
	h := &Copy{b: b}
	h.refs.Store(1)
	return h
}

// Hold adds a holder.
func (h *Copy) Hold() *Copy {
	if h.refs.Add(1) <= 1 {
		panic("staging: hold of a released host copy")
	}
	return h
}

// Release lets go of one holder's share; the last gives the memory back.
// A nil h is a no-op.
func (h *Copy) Release() {
	if h == nil {
		return
	}
	switch r := h.refs.Add(-1); {
	case r < 0:
		panic("staging: host copy released more often than held")
	case r > 0 || !h.pooled:
		return
	}
	h.b = h.b[:cap(h.b)]
	if PoisonReleased {
		for i := range h.b {
			h.b[i] = Poison
		}
	}
	pools[bits.Len(uint(cap(h.b)-1))].Put(h)
}

// Bytes returns the copy's contents, or nil for a nil h.
func (h *Copy) Bytes() []byte {
	if h == nil {
		return nil
	}
	return h.b
}
