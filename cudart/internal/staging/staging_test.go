package staging

import (
	"bytes"
	"testing"
)

func init() { PoisonReleased = true }

func TestCopyShares(t *testing.T) {
	src := make([]byte, 3*MinPooled+5)
	for i := range src {
		src[i] = byte(i)
	}
	h := New(src)
	if !h.pooled || len(h.b) != len(src) || cap(h.b) != 4*MinPooled {
		t.Fatalf("pooled %v, len %d, cap %d; want pooled, %d, %d", h.pooled, len(h.b), cap(h.b), len(src), 4*MinPooled)
	}
	h.Hold()
	h.Release()
	if h.b[7] != 7 { // one holder left: still its bytes
		t.Fatalf("after one of two releases: byte 7 is %#x", h.b[7])
	}
	b := h.b[:cap(h.b)]
	h.Release()
	if b[7] != Poison || b[len(b)-1] != Poison {
		t.Errorf("released copy not poisoned: %#x %#x", b[7], b[len(b)-1])
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a third release did not panic")
			}
		}()
		h.Release()
	}()
	if small := New([]byte{1, 2, 3}); small.pooled {
		t.Error("a 3-byte copy is pooled")
	}
	var nilCopy *Copy
	nilCopy.Release() // no-op
	if nilCopy.Bytes() != nil {
		t.Error("bytes of a nil copy")
	}
}

func TestQueueLastFill(t *testing.T) {
	var q Queue
	q.Add(0x100, Store{Addr: 0x100, Words: 64, V: 1}) // guard bands and all
	q.Add(0x100, Store{Addr: 0x140, Words: 8, V: 2})  // the body's poison
	if i := q.LastFill(0x100, 0x140, 32); i != 1 {
		t.Fatalf("LastFill = %d, want 1", i)
	}
	q.Add(0x100, Store{Addr: 0x150, Raw: make([]byte, 4)}) // a partial write after it
	if i := q.LastFill(0x100, 0x140, 32); i != -1 {
		t.Fatalf("LastFill after an overlapping store = %d, want -1", i)
	}
	q.Add(0x200, Store{Addr: 0x200, Words: 1})
	if got := len(q.Of([]uint64{0x100})); got != 3 {
		t.Fatalf("Of(0x100): %d stores, want 3", got)
	}
	q.Remove(0x100, 2)
	q.Drop(0x200)
	if all := q.TakeAll(); len(all) != 2 || len(q.TakeAll()) != 0 {
		t.Fatalf("TakeAll: %d stores, want 2, then none", len(all))
	}
}

// TestPaint: a later store wins where stores overlap; what is left of the
// earlier ones keeps its contents.
func TestPaint(t *testing.T) {
	data := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	segs := Paint([]Store{
		{Addr: 0, Words: 8, V: 0xAA},
		{Addr: 8, Raw: data},
		{Addr: 12, Words: 1, V: 0xBB},
	})
	want := map[uint64]Segment{
		0: {Addr: 0, N: 8, V: 0xAA}, 16: {Addr: 16, N: 16, V: 0xAA},
		8:  {Addr: 8, N: 4, Raw: data[:4]},
		12: {Addr: 12, N: 4, V: 0xBB},
	}
	covered := 0
	for _, s := range segs {
		covered += s.N
		w, ok := want[s.Addr]
		if !ok || w.N != s.N || w.V != s.V || !bytes.Equal(w.Raw, s.Raw) {
			t.Errorf("segment %+v, want %+v", s, w)
		}
	}
	if covered != 32 || len(segs) != 4 {
		t.Errorf("%d segments covering %d bytes; want 4 covering 32", len(segs), covered)
	}
}
