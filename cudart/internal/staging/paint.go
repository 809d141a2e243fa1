package staging

// Segment is a run of device memory that pending stores leave with one
// content: a 32-bit pattern, or bytes.
type Segment struct {
	Addr uint64
	N    int
	V    uint32
	Raw  []byte // nil: the pattern
}

// Paint reduces pending stores, in order, to the disjoint segments they
// leave behind: a later store wins where two overlap. Stores are 4-byte
// aligned and whole words (every element kind is 4 or 8 bytes).
func Paint(ps []Store) []Segment {
	var segs []Segment
	for _, p := range ps {
		n := p.Len()
		if n == 0 {
			continue
		}
		lo, hi := p.Addr, p.Addr+uint64(n)
		var kept []Segment
		for _, s := range segs {
			slo, shi := s.Addr, s.Addr+uint64(s.N)
			if shi <= lo || slo >= hi {
				kept = append(kept, s)
				continue
			}
			if slo < lo { // the part before
				kept = append(kept, s.cut(slo, lo))
			}
			if shi > hi { // the part after
				kept = append(kept, s.cut(hi, shi))
			}
		}
		segs = append(kept, Segment{Addr: lo, N: n, V: p.V, Raw: p.Raw})
	}
	return segs
}

// cut returns the part [lo, hi) of s.
func (s Segment) cut(lo, hi uint64) Segment {
	c := Segment{Addr: lo, N: int(hi - lo), V: s.V}
	if s.Raw != nil {
		c.Raw = s.Raw[lo-s.Addr : hi-s.Addr]
	}
	return c
}
