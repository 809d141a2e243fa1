// Package alloc keeps a Device's device memory for reuse: size classes, the
// pool of freed allocations, the arenas of the verify passes and the
// quarantine of freed buffers whose guard bands are still to be checked.
// Nothing here calls a backend: the Device allocates and frees, and asks
// this package what to reuse.
package alloc

// MaxPoolBytes bounds the memory a Pool keeps for reuse.
const MaxPoolBytes = 1 << 30

// SizeClass rounds an allocation up to a class of at most 1/8 waste, so
// that buffers of nearby sizes share pooled allocations.
func SizeClass(n int) int {
	if n <= 4096 {
		return 4096
	}
	step := 1
	for step*16 < n {
		step *= 2
	}
	return (n + step - 1) / step * step
}

// Pool keeps freed allocations by size class: allocating and freeing
// device memory costs far more than a property check's kernel. The zero
// value is empty.
type Pool struct {
	free  map[int][]uint64
	bytes int
}

// Get returns a pooled allocation of class, if one is kept.
func (p *Pool) Get(class int) (uint64, bool) {
	free := p.free[class]
	if len(free) == 0 {
		return 0, false
	}
	base := free[len(free)-1]
	p.free[class] = free[:len(free)-1]
	p.bytes -= class
	return base, true
}

// Fits reports whether an allocation of class may be kept without the pool
// exceeding MaxPoolBytes.
func (p *Pool) Fits(class int) bool { return p.bytes+class <= MaxPoolBytes }

// Put keeps the allocation at base, of class, for reuse.
func (p *Pool) Put(class int, base uint64) {
	if p.free == nil {
		p.free = map[int][]uint64{}
	}
	p.free[class] = append(p.free[class], base)
	p.bytes += class
}

// Drain empties the pool and returns what it kept, for freeing.
func (p *Pool) Drain() []uint64 {
	var bases []uint64
	for class, free := range p.free {
		bases = append(bases, free...)
		delete(p.free, class)
	}
	p.bytes = 0
	return bases
}

// Arena is device memory for one launch's verify passes.
type Arena struct {
	Addr uint64
	Size int
}

// Arenas are the arenas not in use by a launch in flight. The zero value is
// empty.
type Arenas struct{ free []Arena }

// Take removes and returns the smallest free arena of at least need bytes.
func (a *Arenas) Take(need int) (Arena, bool) {
	k := -1
	for i, x := range a.free {
		if x.Size >= need && (k < 0 || x.Size < a.free[k].Size) {
			k = i
		}
	}
	if k < 0 {
		return Arena{}, false
	}
	x := a.free[k]
	a.free = append(a.free[:k], a.free[k+1:]...)
	return x, true
}

// Evict removes and returns the oldest free arena (one too small to keep
// once a larger one is made), if any.
func (a *Arenas) Evict() (Arena, bool) {
	if len(a.free) == 0 {
		return Arena{}, false
	}
	x := a.free[0]
	a.free = a.free[1:]
	return x, true
}

// Put returns an arena to the free ones.
func (a *Arenas) Put(x Arena) { a.free = append(a.free, x) }

// Drain empties the free arenas and returns them, for freeing.
func (a *Arenas) Drain() []Arena {
	all := a.free
	a.free = nil
	return all
}

// Quarantine holds freed buffers until their guard bands have been checked
// (by the next launch's verify pass, or at Close); only then is their
// memory pooled again. The zero value is empty.
type Quarantine[T any] struct{ held []T }

// Add quarantines x.
func (q *Quarantine[T]) Add(x ...T) { q.held = append(q.held, x...) }

// Held returns the quarantined buffers, still held.
func (q *Quarantine[T]) Held() []T { return q.held }

// Take empties the quarantine and returns what it held.
func (q *Quarantine[T]) Take() []T {
	all := q.held
	q.held = nil
	return all
}
