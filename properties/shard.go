package properties

import (
	"fmt"
	"hash/fnv"
)

// Shard is one of Count processes that split a run's work between them.
// The work is contract runs (a test's check of one prediction) times seed
// ranges: each contract run is cut into Split seed ranges, and range j of
// a contract run whose name and prediction hash to h is done by shard
// (h+j) mod Count. The split depends on nothing but the names, so every
// process computes the same one without talking to the others. Split is
// at most Count, so a shard does at most one range of a contract run: the
// runner gives each shard a base seed of its own and a Split-th of the
// checks (SeedRange).
type Shard struct {
	Index, Count int
	Split        int // seed ranges per contract run (0 or 1: one, the whole run)
}

// Validate says what is wrong with s, or nil.
func (s Shard) Validate() error {
	switch {
	case s.Count < 1:
		return fmt.Errorf("shard count %d: want at least 1", s.Count)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard index %d: want 0 to %d", s.Index, s.Count-1)
	case s.Split < 0 || s.Split > s.Count:
		return fmt.Errorf("shard split %d: want 1 to the shard count %d", s.Split, s.Count)
	}
	return nil
}

// ranges is the number of seed ranges per contract run.
func (s Shard) ranges() int { return max(1, s.Split) }

// Owner returns the shard that does seed range j of prediction id's
// contract run named run.
func (s Shard) Owner(run, id string, j int) int {
	h := fnv.New64a()
	h.Write([]byte(run))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return int((h.Sum64()%uint64(s.Count) + uint64(j)) % uint64(s.Count))
}

// Owns reports whether s does a seed range of prediction id's contract run
// named run, and which.
func (s Shard) Owns(run, id string) (j int, ok bool) {
	for j := range s.ranges() {
		if s.Owner(run, id, j) == s.Index {
			return j, true
		}
	}
	return 0, false
}

// String spells s as -ptxprop.shard takes it: i/n.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }
