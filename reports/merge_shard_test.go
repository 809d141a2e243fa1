package reports

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// shardOf is shard i of count of the sharded run named run.
func shardOf(run string, i, count int, preds ...Prediction) *Report {
	r := shard(time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC), 100, preds...)
	r.Run.Shard = &Shard{Run: run, Count: count, Split: 1, Indexes: []int{i}}
	return r
}

// Shards unite; a shard given twice (a retried job: another run ID, the same
// index) is refused, as are shards of another sharded run and a report that
// is no shard; a merge that lacks a shard says which, and is partial.
func TestMergeShards(t *testing.T) {
	p := Prediction{ID: "A", Status: Discharged, Checks: 10}
	all, err := Merge(shardOf("job-1", 0, 3, p), shardOf("job-1", 2, 3, p), shardOf("job-1", 1, 3, p))
	if err != nil {
		t.Fatal(err)
	}
	if s := all.Run.Shard; s == nil || s.Run != "job-1" || s.Count != 3 || !slices.Equal(s.Indexes, []int{0, 1, 2}) || all.Run.Stopped != "" {
		t.Errorf("merged shard = %+v, stopped %q", s, all.Run.Stopped)
	}
	part, err := Merge(shardOf("job-1", 0, 3, p), shardOf("job-1", 2, 3, p))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(part.Run.Stopped, "missing shards 1/3") || !part.Partial() {
		t.Errorf("two of three shards: stopped %q, partial %v", part.Run.Stopped, part.Partial())
	}
	// The partial merge and the missing shard make the whole.
	if whole, err := Merge(part, shardOf("job-1", 1, 3, p)); err != nil || len(whole.Run.Shard.Indexes) != 3 || whole.Run.Stopped != "" {
		t.Errorf("merge of a partial merge and the missing shard: %v, %+v", err, whole)
	}
	for name, rs := range map[string][]*Report{
		"twice":        {shardOf("job-1", 0, 2, p), shardOf("job-1", 0, 2, p), shardOf("job-1", 1, 2, p)},
		"twice merged": {part, shardOf("job-1", 2, 3, p)},
	} {
		if _, err := Merge(rs...); !errors.Is(err, ErrSameShard) || !strings.Contains(err.Error(), "both hold shard") {
			t.Errorf("%s: err = %v, want ErrSameShard", name, err)
		}
	}
	for name, rs := range map[string][]*Report{
		"other run":   {shardOf("job-1", 0, 2, p), shardOf("job-2", 1, 2, p)},
		"other count": {shardOf("job-1", 0, 2, p), shardOf("job-1", 1, 3, p)},
		"not a shard": {shardOf("job-1", 0, 2, p), shard(time.Now(), 100, p)},
	} {
		if _, err := Merge(rs...); err == nil || !strings.Contains(err.Error(), "not shards of one sharded run") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
