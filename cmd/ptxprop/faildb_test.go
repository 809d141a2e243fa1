package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/faildb"
)

// list prints each entry and reports a corrupt one (exit 1); prune removes
// the entries that passed enough runs.
func TestFaildbListPrune(t *testing.T) {
	dir := t.TempDir()
	db := faildb.DB{Dir: dir}
	e, err := db.Failed(faildb.Entry{Prediction: "RMSNORM-FWD-001", Kernels: []string{"rmsnorm_fwd"}, Run: "TestX/ours", Input: "v0.4.8#7\n0x1"},
		time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	faildb.Replayed(e.Path, false, time.Now())
	var out, errb bytes.Buffer
	if code := run([]string{"report", "faildb", "list", dir}, &out, &errb); code != exitOK ||
		!strings.Contains(out.String(), "RMSNORM-FWD-001  rmsnorm_fwd  TestX/ours  2026-03-01T00:00:00Z  2026-03-01T00:00:00Z  1") {
		t.Errorf("list: exit %d\n%s%s", code, out.String(), errb.String())
	}
	os.WriteFile(filepath.Join(dir, "bad.fail"), []byte("junk"), 0o644)
	out.Reset()
	errb.Reset()
	if code := run([]string{"report", "faildb", "list", dir}, &out, &errb); code != exitFinding || !strings.Contains(errb.String(), "bad.fail") {
		t.Errorf("list with a corrupt entry: exit %d\n%s", code, errb.String())
	}
	if code := run([]string{"report", "faildb", "prune", dir}, &out, &errb); code != exitUsage {
		t.Errorf("prune without -passed: exit %d", code)
	}
	out.Reset()
	run([]string{"report", "faildb", "prune", "-passed", "2", dir}, &out, &errb)
	if _, err := os.Stat(e.Path); err != nil || !strings.HasPrefix(out.String(), "0 entries pruned") {
		t.Errorf("prune -passed 2 after one pass: %v\n%s", err, out.String())
	}
	out.Reset()
	run([]string{"report", "faildb", "prune", "-passed", "1", dir}, &out, &errb)
	if _, err := os.Stat(e.Path); err == nil || !strings.HasPrefix(out.String(), "1 entries pruned") {
		t.Errorf("prune -passed 1 after one pass left the entry\n%s", out.String())
	}
}
