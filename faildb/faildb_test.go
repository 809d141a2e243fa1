package faildb

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const input = "v0.4.8#12345\n0x1\n0x2a\n0xffffffffffffffff"

func entry() Entry {
	return Entry{Prediction: "RMSNORM-FWD-001", Kernels: []string{"rmsnorm_fwd"}, Run: "TestRMSNormForward/ours",
		Seed: 12345, Reason: "ratio 3 > 1", Counterexample: []string{"hidden: 33"}, Input: input}
}

// An entry is stored once per input, counts the replays that passed, and
// reads back as a rapid fail file would: its data lines are rapid's.
func TestFailedReplayedPrune(t *testing.T) {
	db := DB{Dir: t.TempDir()}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e, err := db.Failed(entry(), t0)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(e.Path)
	if in, err := FailFileInput(data); err != nil || in != input {
		t.Fatalf("the entry as a rapid fail file holds %q, %v; want %q", in, err, input)
	}
	for i := range 2 {
		if e, err = Replayed(e.Path, false, t0.Add(time.Duration(i+1)*time.Hour)); err != nil || e.Passed != i+1 {
			t.Fatalf("replay %d: passed %d, %v", i+1, e.Passed, err)
		}
	}
	// Found again: one entry, first seen kept, its passes restart.
	again, err := db.Failed(entry(), t0.Add(24*time.Hour))
	if err != nil || again.Path != e.Path || !again.FirstSeen.Equal(t0) || !again.LastFailed.Equal(t0.Add(24*time.Hour)) || again.Passed != 0 {
		t.Fatalf("found again: %+v, %v", again, err)
	}
	other := entry()
	other.Input = "v0.4.8#1\n0x3"
	if _, err := db.Failed(other, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := Replayed(again.Path, false, t0); err != nil {
		t.Fatal(err)
	}
	es, errs := db.List()
	if len(es) != 2 || len(errs) != 0 {
		t.Fatalf("list: %d entries, errors %v", len(es), errs)
	}
	gone, errs := db.Prune(1)
	if len(gone) != 1 || gone[0].Path != again.Path || len(errs) != 0 {
		t.Fatalf("prune -passed 1 removed %+v, errors %v", gone, errs)
	}
	if es, _ := db.List(); len(es) != 1 || es[0].Input != other.Input {
		t.Errorf("left after prune: %+v", es)
	}
	if left, _ := filepath.Glob(filepath.Join(db.Dir, "*")); len(left) != 1 {
		t.Errorf("files left: %v (a temporary file?)", left)
	}
}

// A corrupt entry is an error naming the file, never a panic, and the
// other entries still list.
func TestCorruptEntry(t *testing.T) {
	db := DB{Dir: t.TempDir()}
	if _, err := db.Failed(entry(), time.Now()); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"nometa.fail":    "v0.4.8#1\n0x1\n",
		"badjson.fail":   metaPrefix + "{\n" + input,
		"noinput.fail":   metaPrefix + `{"schema":1,"prediction":"P","run":"T"}` + "\n",
		"badvalue.fail":  metaPrefix + `{"schema":1,"prediction":"P","run":"T"}` + "\nv0.4.8#1\nzz\n",
		"schema.fail":    metaPrefix + `{"schema":9,"prediction":"P","run":"T"}` + "\n" + input,
		"noname.fail":    metaPrefix + `{"schema":1}` + "\n" + input,
		"truncated.fail": metaPrefix + `{"schema":1,"predic`,
	} {
		os.WriteFile(filepath.Join(db.Dir, name), []byte(data), 0o644)
	}
	es, errs := db.List()
	if len(es) != 1 || len(errs) != 7 {
		t.Fatalf("%d entries, %d errors: %v", len(es), len(errs), errs)
	}
	for _, err := range errs {
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), ".fail") {
			t.Errorf("error %v: want ErrCorrupt naming the file", err)
		}
	}
	if _, err := db.Failed(Entry{Prediction: "P", Run: "T", Input: "not rapid"}, time.Now()); err == nil {
		t.Error("an entry with an input that is no fail file's was stored")
	}
}
