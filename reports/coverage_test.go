package reports

import (
	"strings"
	"testing"
)

func coverageOf(uncovered []UncoveredBranch, blocks []int) Coverage {
	return Coverage{Kernel: "k", Branches: 6, Covered: 6 - len(uncovered), Uncovered: uncovered,
		Blocks: 5, BlocksCovered: 5 - len(blocks), UncoveredBlocks: blocks}
}

// TestCoverageUnion checks that shards' coverage of one kernel adds up:
// a direction or block is uncovered only where every shard left it so.
func TestCoverageUnion(t *testing.T) {
	a := coverageOf([]UncoveredBranch{{Line: 3, Guard: "@%p1", Direction: "taken"}, {Line: 9, Guard: "@%p2", Direction: "not taken"}}, []int{4, 10})
	b := coverageOf([]UncoveredBranch{{Line: 3, Guard: "@%p1", Direction: "not taken"}, {Line: 9, Guard: "@%p2", Direction: "not taken"}}, []int{10})
	u := unionCoverage(a, b)
	if u.Covered != 5 || len(u.Uncovered) != 1 || u.Uncovered[0].Line != 9 {
		t.Errorf("union: %d/%d covered, uncovered %v; want 5/6, line 9 only", u.Covered, u.Branches, u.Uncovered)
	}
	if u.BlocksCovered != 4 || len(u.UncoveredBlocks) != 1 || u.UncoveredBlocks[0] != 10 {
		t.Errorf("union: %d/%d blocks, uncovered %v; want 4/5, line 10", u.BlocksCovered, u.Blocks, u.UncoveredBlocks)
	}
	out := &Report{Coverage: []Coverage{a}}
	problems := mergeNightly(out, &Report{Coverage: []Coverage{b}}, "b")
	if len(problems) > 0 || out.Coverage[0].Covered != 5 {
		t.Errorf("mergeNightly: %v, %+v", problems, out.Coverage[0])
	}
}

// TestCoverageDiff checks that fewer blocks covered is a regression even
// when the branch directions covered are as many.
func TestCoverageDiff(t *testing.T) {
	a := &Report{Coverage: []Coverage{coverageOf(nil, nil)}}
	b := &Report{Coverage: []Coverage{coverageOf(nil, []int{7})}}
	var found bool
	for _, c := range Compare(a, b) {
		if strings.HasPrefix(c.Text, "coverage k:") {
			found = true
			if c.Class != Regression {
				t.Errorf("%s: %v, want a regression", c.Text, c.Class)
			}
		}
	}
	if !found {
		t.Errorf("Compare lists no coverage change: %v", Compare(a, b))
	}
}
