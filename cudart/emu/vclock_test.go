package emu

import (
	"math/rand/v2"
	"testing"
)

// The persistent vector clock against a map: random sets and joins over
// clocks that share history, as a launch's warps and locations do, with
// and without the memo of joins found redundant.
func TestVclockMatchesMap(t *testing.T) {
	for _, memo := range []*vcMemo{nil, new(vcMemo)} {
		r := rand.New(rand.NewPCG(1, 2))
		const n = 12
		var vs [n]vclock
		var ms [n]map[uint32]uint32
		for i := range ms {
			ms[i] = map[uint32]uint32{}
		}
		for step := range 20000 {
			i, j := r.IntN(n), r.IntN(n)
			switch r.IntN(5) {
			case 0, 1:
				k := uint32(r.IntN(1 << (5 + r.IntN(12))))
				c := uint32(r.IntN(1000))
				vs[i].set(k, c)
				ms[i][k] = max(ms[i][k], c)
			case 2, 3:
				vs[i].join(vs[j], memo)
				for k, c := range ms[j] {
					ms[i][k] = max(ms[i][k], c)
				}
			case 4:
				if r.IntN(8) == 0 {
					vs[i].reset()
					ms[i] = map[uint32]uint32{}
				}
			}
			for k, c := range ms[i] {
				if got := vs[i].get(k); got != c {
					t.Fatalf("memo %v step %d: clock %d of key %d, want %d", memo != nil, step, got, k, c)
				}
			}
			if k := uint32(r.IntN(1 << 16)); vs[i].get(k) != ms[i][k] {
				t.Fatalf("memo %v step %d: key %d holds %d, want %d", memo != nil, step, k, vs[i].get(k), ms[i][k])
			}
		}
	}
}
