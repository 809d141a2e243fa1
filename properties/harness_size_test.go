package properties

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/properties/outcome"
)

// TestHarnessRecordsSizes: each passed check's worst ratio goes to the
// bucket of the size its last positive Context gave, even when the cols
// are reset afterwards, as some properties do.
func TestHarnessRecordsSizes(t *testing.T) {
	noFailFile(t)
	rec := &outcome.Recorder{} // TEST-HARNESS-PASS: registered by harness_test.go
	q := RunQuiet("TestSizes", Config{Recorder: rec}, func(tb TB) {
		Check(tb, "TEST-HARNESS-PASS", func(rt *rapid.T, o *Obs) {
			hidden := rapid.SampledFrom([]int{3, 40, 100}).Draw(rt, "hidden")
			o.Context(hidden, "hidden=%d", hidden)
			o.Context(0, "reset") // as rmsnorm.go does between outputs
			// err/tol = hidden/200: the bucket's worst ratio is its largest size's.
			o.Within("y", []float32{float32(hidden)}, []float64{0}, []float64{200})
		})
	})
	p := rec.Outcomes()["TEST-HARNESS-PASS"]
	if p.Status != outcome.Discharged {
		t.Fatalf("status %s: %s (%q)", p.Status, p.Reason, q.Logs())
	}
	n := 0
	for k, b := range p.Stats.Sizes {
		n += b.Checks
		want := map[int]float64{1: 3.0 / 200, 5: 40.0 / 200, 6: 100.0 / 200}[k]
		if b.Checks > 0 && b.MaxRatio != want {
			t.Errorf("bucket %d: max ratio %v, want %v", k, b.MaxRatio, want)
		}
		if b.Checks > 0 && want == 0 {
			t.Errorf("bucket %d has %d checks; no size falls in it", k, b.Checks)
		}
	}
	if n != p.Checks || n == 0 {
		t.Errorf("%d checks in size buckets, %d passed", n, p.Checks)
	}
}
