package properties

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/faildb"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

// A counterexample is stored in the failure database; a later run replays
// it before it generates anything, so it fails on the stored input even
// where its own seed would never draw it; replays that pass are counted,
// and prune removes the entry once they reach its bound.
func TestFailDBReplaysStoredFailure(t *testing.T) {
	t.Chdir(t.TempDir()) // rapid stages and writes fail files under testdata/ here
	setRapid(t, "nofailfile", "false")
	setRapid(t, "checks", "100")
	dir := filepath.Join(t.TempDir(), "faildb")
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	db := &FailDB{DB: faildb.DB{Dir: dir}, Now: func() time.Time { return clock }}
	const (
		anyLarge = iota // the bug: every n ≥ 10⁶ fails
		exactly         // only n = 10⁶ fails: no seed's 100 checks draw it
		fixed
	)
	run := func(bug int, db *FailDB, seed string) outcome.Outcome {
		t.Helper()
		setRapid(t, "seed", seed)
		rec := &outcome.Recorder{}
		RunQuiet("TestFailDB", Config{Recorder: rec, FailDB: db}, func(tb TB) {
			Check(tb, "TEST-HARNESS-FAIL", func(rt *rapid.T, o *Obs) {
				n := rapid.Uint64Range(0, 1<<62).Draw(rt, "n")
				if bug == anyLarge && n >= 1e6 || bug == exactly && n == 1e6 {
					o.Fatalf("n=%d too large", n)
				}
			})
		})
		return rec.Outcomes()["TEST-HARNESS-FAIL"]
	}
	leftInTestdata := func() {
		t.Helper()
		if _, err := os.Stat("testdata"); err == nil {
			t.Errorf("testdata/ left behind (a staged or rapid's own fail file)")
		}
	}

	first := run(anyLarge, db, "1")
	if first.Status != outcome.Falsified || len(first.Counterexample) != 1 || first.Counterexample[0] != "n: 0xf4240" {
		t.Fatalf("first run: %s %q", first.Status, first.Counterexample)
	}
	es, errs := db.DB.List()
	if len(es) != 1 || len(errs) != 0 {
		t.Fatalf("stored: %+v, errors %v", es, errs)
	}
	e := es[0]
	if e.Prediction != "TEST-HARNESS-FAIL" || e.Run != "TestFailDB" || !e.FirstSeen.Equal(clock) || e.Passed != 0 ||
		len(e.Counterexample) != 1 || e.Counterexample[0] != "n: 0xf4240" {
		t.Errorf("entry = %+v", e)
	}
	if abs, _ := filepath.Abs(e.Path); first.Failfile != abs || !strings.Contains(first.Repro, "-rapid.failfile='"+abs+"'") {
		t.Errorf("first run's fail file %q, repro %q: want the entry %s", first.Failfile, first.Repro, abs)
	}
	leftInTestdata()

	if o := run(exactly, nil, "2"); o.Status != outcome.Discharged {
		t.Fatalf("without the database, seed 2 gives %s: the test needs a seed that misses the bug", o.Status)
	}
	clock = clock.Add(24 * time.Hour)
	again := run(exactly, db, "2")
	if again.Status != outcome.Falsified || len(again.Counterexample) != 1 || again.Counterexample[0] != "n: 0xf4240" ||
		!strings.Contains(strings.Join(again.Notes, "\n"), "a stored failure failed again") {
		t.Fatalf("replay: %s %q, notes %q", again.Status, again.Counterexample, again.Notes)
	}
	if e, _ := faildb.Read(e.Path); !e.LastFailed.Equal(clock) || !e.FirstSeen.Equal(clock.Add(-24*time.Hour)) {
		t.Errorf("after failing again: %+v", e)
	}
	leftInTestdata()

	for i := 1; i <= 2; i++ {
		if o := run(fixed, db, "3"); o.Status != outcome.Discharged {
			t.Fatalf("fixed, run %d: %s %s", i, o.Status, o.Reason)
		}
		if e, err := faildb.Read(e.Path); err != nil || e.Passed != i {
			t.Fatalf("fixed, run %d: passed %d, %v", i, e.Passed, err)
		}
	}
	leftInTestdata()
	if gone, errs := db.DB.Prune(3); len(gone) != 0 || len(errs) != 0 {
		t.Errorf("prune -passed 3 after 2 passes removed %d, %v", len(gone), errs)
	}
	if gone, errs := db.DB.Prune(2); len(gone) != 1 || len(errs) != 0 {
		t.Errorf("prune -passed 2 after 2 passes removed %d, %v", len(gone), errs)
	}
}

// A shard runs the contract runs Shard assigns it and records the others
// not_run; over the shards, each contract run runs exactly as often as it
// has seed ranges.
func TestShardSplitsContractRuns(t *testing.T) {
	noFailFile(t)
	names := []string{"TestA", "TestB", "TestC", "TestD", "TestE", "TestF", "TestG", "TestH"}
	for _, split := range []int{1, 2, 3} {
		ran := map[string]int{}
		for i := range 3 {
			s := &Shard{Index: i, Count: 3, Split: split}
			for _, name := range names {
				rec := &outcome.Recorder{}
				RunQuiet(name, Config{Recorder: rec, Shard: s}, func(tb TB) {
					Check(tb, "TEST-HARNESS-PASS", func(rt *rapid.T, o *Obs) { rapid.Bool().Draw(rt, "b") })
				})
				o := rec.Outcomes()["TEST-HARNESS-PASS"]
				switch o.Status {
				case outcome.Discharged:
					ran[name]++
				case outcome.NotRun:
					if !strings.Contains(o.Reason, "shard "+s.String()) {
						t.Errorf("not run: reason %q", o.Reason)
					}
				default:
					t.Errorf("%s on shard %s: %s", name, s, o.Status)
				}
			}
		}
		for _, name := range names {
			if ran[name] != split {
				t.Errorf("split %d: %s ran on %d shards", split, name, ran[name])
			}
		}
	}
}
