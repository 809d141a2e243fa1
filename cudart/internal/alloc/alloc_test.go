package alloc

import "testing"

func TestSizeClass(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{1, 4096}, {4096, 4096}, {4097, 4608}, {1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 1<<17},
	} {
		if got := SizeClass(c.n); got != c.want {
			t.Errorf("SizeClass(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	for n := 1; n < 1<<22; n = n*3/2 + 1 {
		if c := SizeClass(n); c < n || n > 4096 && 8*(c-n) > n {
			t.Fatalf("SizeClass(%d) = %d: too small or more than 1/8 waste", n, c)
		}
	}
}

func TestPool(t *testing.T) {
	var p Pool
	if _, ok := p.Get(4096); ok {
		t.Fatal("an empty pool returned an allocation")
	}
	p.Put(4096, 0x1000)
	p.Put(8192, 0x2000)
	if !p.Fits(MaxPoolBytes-4096-8192) || p.Fits(MaxPoolBytes-4096-8192+1) {
		t.Error("Fits does not count the kept bytes")
	}
	if b, ok := p.Get(4096); !ok || b != 0x1000 {
		t.Fatalf("Get(4096) = %#x, %v", b, ok)
	}
	if _, ok := p.Get(4096); ok {
		t.Fatal("an allocation came out twice")
	}
	if all := p.Drain(); len(all) != 1 || all[0] != 0x2000 || !p.Fits(MaxPoolBytes) {
		t.Fatalf("Drain = %#x", all)
	}
}

func TestArenas(t *testing.T) {
	var a Arenas
	a.Put(Arena{Addr: 1, Size: 1 << 20})
	a.Put(Arena{Addr: 2, Size: 4 << 20})
	a.Put(Arena{Addr: 3, Size: 2 << 20})
	if x, ok := a.Take(1<<20 + 1); !ok || x.Addr != 3 {
		t.Fatalf("Take: %+v, %v; want the smallest large enough (3)", x, ok)
	}
	if _, ok := a.Take(8 << 20); ok {
		t.Fatal("Take of more than any arena succeeded")
	}
	if x, ok := a.Evict(); !ok || x.Addr != 1 {
		t.Fatalf("Evict: %+v, %v; want the oldest (1)", x, ok)
	}
	if all := a.Drain(); len(all) != 1 || all[0].Addr != 2 {
		t.Fatalf("Drain: %+v", all)
	}
}

func TestQuarantine(t *testing.T) {
	var q Quarantine[int]
	q.Add(1, 2)
	q.Add(3)
	if len(q.Held()) != 3 {
		t.Fatalf("Held: %v", q.Held())
	}
	if all := q.Take(); len(all) != 3 || all[2] != 3 || len(q.Held()) != 0 {
		t.Fatalf("Take: %v, then %v", all, q.Held())
	}
}
