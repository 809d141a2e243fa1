package staging

import "encoding/binary"

// Store is a store to device memory not yet made: Words copies of a 32-bit
// pattern V, or the bytes Raw (a Write's data; a pattern that is wider, or
// that the backend cannot fill).
type Store struct {
	Addr  uint64
	Words int
	V     uint32
	Raw   []byte
	Ref   *Copy // Raw's holder share, for a Write's data: released once the store is made
}

// Len is the number of bytes the store covers.
func (s Store) Len() int {
	if s.Raw != nil {
		return len(s.Raw)
	}
	return 4 * s.Words
}

// Bytes returns what the store writes, as bytes (the pattern repeated).
func (s Store) Bytes() []byte {
	if s.Raw != nil {
		return s.Raw
	}
	raw := make([]byte, 4*s.Words)
	for i := 0; i < len(raw); i += 4 {
		binary.LittleEndian.PutUint32(raw[i:], s.V)
	}
	return raw
}

// Queue holds the pending stores by the base of the allocation they store
// into, each allocation's in order (stores into different allocations are
// disjoint: their order does not matter). The zero value is empty.
type Queue struct{ by map[uint64][]Store }

// Add queues s into the allocation at base.
func (q *Queue) Add(base uint64, s Store) {
	if q.by == nil {
		q.by = map[uint64][]Store{}
	}
	q.by[base] = append(q.by[base], s)
}

// LastFill returns the index, among the stores into the allocation at base,
// of a pattern store covering exactly [addr, addr+n), or -1 if there is
// none or a store queued after it overlaps that range.
func (q *Queue) LastFill(base, addr uint64, n int) int {
	l := q.by[base]
	for i := len(l) - 1; i >= 0; i-- {
		s := l[i]
		if s.Addr == addr && s.Raw == nil && 4*s.Words == n {
			return i
		}
		if s.Addr < addr+uint64(n) && addr < s.Addr+uint64(s.Len()) {
			return -1
		}
	}
	return -1
}

// Remove drops store i of the allocation at base (made unnecessary by a
// later store that covers it).
func (q *Queue) Remove(base uint64, i int) {
	l := q.by[base]
	q.by[base] = append(l[:i], l[i+1:]...)
}

// Of returns the pending stores into the allocations at bases, each
// allocation's in order, leaving them queued.
func (q *Queue) Of(bases []uint64) []Store {
	var mine []Store
	for _, b := range bases {
		mine = append(mine, q.by[b]...)
	}
	return mine
}

// Drop forgets the stores into the allocation at base (made, or taken).
func (q *Queue) Drop(base uint64) { delete(q.by, base) }

// TakeAll removes and returns every pending store.
func (q *Queue) TakeAll() []Store {
	var all []Store
	for _, l := range q.by {
		all = append(all, l...)
	}
	q.by = nil
	return all
}

// Clear forgets every pending store.
func (q *Queue) Clear() { q.by = nil }
