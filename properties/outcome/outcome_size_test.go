package outcome

import "testing"

func TestSizeBuckets(t *testing.T) {
	for _, c := range []struct{ size, k int }{{1, 0}, {2, 1}, {3, 1}, {33, 5}, {63, 5}, {64, 6}, {1 << 40, SizeBuckets - 1}} {
		if k, ok := SizeBucketOf(c.size); !ok || k != c.k {
			t.Errorf("SizeBucketOf(%d) = %d, %v; want %d", c.size, k, ok, c.k)
		}
	}
	if _, ok := SizeBucketOf(0); ok {
		t.Error("SizeBucketOf(0) is a bucket: a check without a size would be counted")
	}
	var a, b ErrorStats
	a.AddSize(40, 0.25)
	a.AddSize(50, 0.5)
	a.AddSize(0, 9) // no size: in no bucket
	b.AddSize(33, 0.75)
	b.AddSize(4096, 0.1)
	a.Merge(b)
	if got := a.Sizes[5]; got != (SizeBucket{Checks: 3, MaxRatio: 0.75}) {
		t.Errorf("bucket 5 = %+v, want 3 checks, max 0.75", got)
	}
	if got := a.Sizes[12]; got != (SizeBucket{Checks: 1, MaxRatio: 0.1}) {
		t.Errorf("bucket 12 = %+v, want 1 check, max 0.1", got)
	}
	n := 0
	for _, s := range a.Sizes {
		n += s.Checks
	}
	if n != 4 {
		t.Errorf("%d checks in buckets, want 4", n)
	}
}
