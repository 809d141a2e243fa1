package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// dirEntries lists the names in dir, failing the test on error.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// noTempFiles fails if dir holds a leftover temporary or lock file.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	for _, n := range dirEntries(t, dir) {
		if strings.Contains(n, ".tmp") || strings.HasSuffix(n, ".lock") {
			t.Errorf("temporary or lock file %s left in %s", n, dir)
		}
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deep", "er")
	path := filepath.Join(dir, "report.json")
	want := sampleReport()
	if err := Write(path, want); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if got := dirEntries(t, dir); !reflect.DeepEqual(got, []string{"report.json"}) {
		t.Errorf("directory holds %v, want only report.json", got)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"{\n  \"schema_version\": \"ptxprop.contract-report/v2\",\n",
		`"status": "discharged"`,
		`"max_abs": "+Inf"`,
		`"max_rel": "NaN"`,
		`"rapid_seed": 18446744073709551615`,
		`error < tol & \"quoted\"`, // no HTML escaping
	} {
		if !bytes.Contains(data, []byte(s)) {
			t.Errorf("file lacks %q:\n%s", s, data)
		}
	}
	if !bytes.HasSuffix(data, []byte("}\n")) {
		t.Errorf("file does not end in a newline")
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
		}
	}

	got, err := Read(path)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	// NaN != NaN defeats DeepEqual; compare the encodings, then the rest.
	if again := mustMarshal(t, got); !bytes.Equal(again, data) {
		t.Errorf("Read then Marshal differs from the file:\n%s\nwant\n%s", again, data)
	}
	if e := got.Predictions[1].ErrorStats; !math.IsNaN(*e.MaxRel) || !math.IsInf(*e.MaxAbs, 1) {
		t.Errorf("non-finite error stats not restored: %+v", got.Predictions[1].ErrorStats)
	}
	got.Predictions[1].ErrorStats, want.Predictions[1].ErrorStats = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", got, want)
	}
}

func TestRoundTripMinimal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	want := minimalReport()
	if err := Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	// Empty lists come back empty, not nil.
	want.Mutants, want.Kernels = []Mutant{}, []Kernel{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestWriteInvalidKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := Write(path, sampleReport()); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(path)

	for name, edit := range map[string]func(r *Report){
		"bad status":  func(r *Report) { r.Predictions[0].Status = "passed" },
		"bad backend": func(r *Report) { r.Run.Backend = "GPU" },
		"no start":    func(r *Report) { r.Run.Start = time.Time{} },
		"duplicate":   func(r *Report) { r.Predictions = append(r.Predictions, r.Predictions[0]) },
		"NaN rate":    func(r *Report) { r.Predictions[0].ChecksPerSecond = math.NaN() },
		"bad version": func(r *Report) { r.SchemaVersion = "v0" },
	} {
		r := sampleReport()
		edit(r)
		err := Write(path, r)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Write = %v, want ErrInvalid", name, err)
		}
		if now, _ := os.ReadFile(path); !bytes.Equal(now, old) {
			t.Errorf("%s: failed Write changed the file", name)
		}
	}
	noTempFiles(t, dir)
	if err := Write(filepath.Join(dir, "new.json"), nil); err == nil {
		t.Errorf("Write(nil) succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "new.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("failed Write of a new file left one: %v", err)
	}
}

func TestMarshalRejectsInvalidEnums(t *testing.T) {
	r := sampleReport()
	r.Mutants[0].Status = "Killed" // bypass Write's Validate
	if _, err := Marshal(r); err == nil || !strings.Contains(err.Error(), `invalid mutant status "Killed"`) {
		t.Errorf("Marshal = %v, want an invalid mutant status error", err)
	}
}

// TestWriteFailureKeepsOldFile simulates a disk failing half-way through the
// temporary file and a failing fsync.
func TestWriteFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := Write(path, minimalReport()); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(path)
	orig := writeData
	t.Cleanup(func() { writeData = orig })
	errDisk := errors.New("disk full")

	failures := map[string]func(f *os.File, data []byte) error{
		"write": func(f *os.File, data []byte) error {
			f.Write(data[:len(data)/2])
			return errDisk
		},
		"sync": func(f *os.File, data []byte) error {
			f.Write(data[:len(data)/2])
			return f.Close() // the Sync that follows fails
		},
	}
	for name, fail := range failures {
		writeData = fail
		err := Write(path, sampleReport())
		if err == nil {
			t.Errorf("%s: Write succeeded despite the failure", name)
		}
		if name == "write" && !errors.Is(err, errDisk) {
			t.Errorf("%s: Write = %v, want it to wrap %v", name, err, errDisk)
		}
		if now, _ := os.ReadFile(path); !bytes.Equal(now, old) {
			t.Errorf("%s: the old file changed:\n%s", name, now)
		}
		if _, err := Read(path); err != nil {
			t.Errorf("%s: old file unreadable: %v", name, err)
		}
		noTempFiles(t, dir)
		if err := Write(filepath.Join(dir, "fresh.json"), sampleReport()); err == nil {
			t.Errorf("%s: Write of a new file succeeded despite the failure", name)
		}
		if _, err := os.Stat(filepath.Join(dir, "fresh.json")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: failed Write of a new file left it behind", name)
		}
	}
}

func TestWriteRenameFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := os.MkdirAll(filepath.Join(path, "occupied"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, sampleReport()); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	noTempFiles(t, dir)
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(missing) = %v, want fs.ErrNotExist", err)
	}
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v1 := strings.Replace(string(mustMarshal(t, minimalReport())), "/v2", "/v1", 1)
	_, err := Read(write("v1.json", v1))
	if !errors.Is(err, ErrSchemaVersion) {
		t.Errorf("Read(v1) = %v, want ErrSchemaVersion", err)
	} else if msg := err.Error(); !strings.Contains(msg, `"ptxprop.contract-report/v2"`) || !strings.Contains(msg, `"ptxprop.contract-report/v1"`) || !strings.Contains(msg, "v1.json") {
		t.Errorf("Read(v1) error %q should name the file and both versions", msg)
	}
	if _, err := Read(write("other.json", `{"Action":"pass"}`)); !errors.Is(err, ErrSchemaVersion) {
		t.Errorf("Read(test2json) = %v, want ErrSchemaVersion", err)
	}
	if _, err := Read(write("torn.json", string(mustMarshal(t, sampleReport())[:300]))); err == nil {
		t.Errorf("Read(truncated file) succeeded")
	}
	if _, err := Read(write("twice.json", strings.Repeat(string(mustMarshal(t, minimalReport())), 2))); err == nil {
		t.Errorf("Read(two reports in one file) succeeded")
	}
}

func addPrediction(id string) func(r *Report) error {
	return func(r *Report) error {
		if r.Run.Start.IsZero() {
			r.Run = NewRun(BackendEmu)
		}
		r.UpsertPrediction(Prediction{ID: id, Status: Discharged, Checks: 1})
		return nil
	}
}

func checkIDs(t *testing.T, path string, want []string) {
	t.Helper()
	r, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range r.Predictions {
		got[p.ID] = true
	}
	var missing []string
	for _, id := range want {
		if !got[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 || len(r.Predictions) != len(want) {
		t.Errorf("report has %d predictions, want %d; lost %v", len(r.Predictions), len(want), missing)
	}
	noTempFiles(t, filepath.Dir(path))
}

func TestUpdateConcurrentGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "report.json")
	const workers, each = 16, 8
	var wg sync.WaitGroup
	var want []string
	errs := make(chan error, workers*each)
	for w := range workers {
		for i := range each {
			want = append(want, fmt.Sprintf("G-%d-%d", w, i))
		}
		wg.Go(func() {
			for i := range each {
				errs <- Update(path, addPrediction(fmt.Sprintf("G-%d-%d", w, i)))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkIDs(t, path, want)
}

const helperEnv = "REPORTS_TEST_UPDATE_HELPER"

// TestUpdateHelperProcess is not a test: TestUpdateConcurrentProcesses runs
// the test binary with it selected to update a report from another process.
func TestUpdateHelperProcess(t *testing.T) {
	spec := os.Getenv(helperEnv) // path|worker|count
	if spec == "" {
		t.Skip("helper process for TestUpdateConcurrentProcesses")
	}
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[2])
	for i := range n {
		if err := Update(parts[0], addPrediction(fmt.Sprintf("P-%s-%d", parts[1], i))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUpdateConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	path := filepath.Join(t.TempDir(), "report.json")
	const procs, each = 6, 20
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	var want []string
	for p := range procs {
		cmd := exec.Command(exe, "-test.run=^TestUpdateHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|%d", helperEnv, path, p, each))
		out := new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
		for i := range each {
			want = append(want, fmt.Sprintf("P-%d-%d", p, i))
		}
	}
	// This process joins in too.
	for i := range each {
		if err := Update(path, addPrediction(fmt.Sprintf("P-main-%d", i))); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("P-main-%d", i))
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i])
		}
	}
	checkIDs(t, path, want)
}

// TestNoTornReads reads the report while it is rewritten and requires every
// read to see a whole, valid report.
func TestNoTornReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	if err := Update(path, addPrediction("T-0")); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var reads, bad int
	var mu sync.Mutex
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				_, err := Read(path)
				mu.Lock()
				reads++
				if err != nil {
					bad++
					t.Errorf("torn or invalid read: %v", err)
				}
				mu.Unlock()
			}
		})
	}
	for i := 1; i < 80; i++ {
		if err := Update(path, addPrediction(fmt.Sprintf("T-%d-%s", i, strings.Repeat("x", i*10)))); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	if reads == 0 {
		t.Error("no reads happened")
	}
	t.Logf("%d reads, %d bad", reads, bad)
}

func TestUpdateErrorsWriteNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := Write(path, sampleReport()); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(path)
	errFn := errors.New("fn failed")
	if err := Update(path, func(r *Report) error {
		r.Predictions = nil
		return errFn
	}); !errors.Is(err, errFn) {
		t.Errorf("Update = %v, want it to wrap fn's error", err)
	}
	if err := Update(path, func(r *Report) error {
		r.Predictions[0].Status = "bogus"
		return nil
	}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Update = %v, want ErrInvalid", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, old) {
		t.Errorf("a failed Update changed the file")
	}

	// A file that is not a v1 report is never overwritten.
	if err := os.WriteFile(path, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	called := false
	if err := Update(path, func(*Report) error { called = true; return nil }); err == nil || called {
		t.Errorf("Update over a corrupt file: err %v, fn called %v; want an error and no call", err, called)
	}
	if now, _ := os.ReadFile(path); string(now) != "not json" {
		t.Errorf("Update overwrote a corrupt file")
	}

	// A fresh report must get a Run from fn.
	if err := Update(filepath.Join(dir, "fresh.json"), func(r *Report) error {
		if !r.Run.Start.IsZero() || r.SchemaVersion != SchemaVersion {
			t.Errorf("fresh report: %+v", r)
		}
		return nil
	}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Update leaving Run empty = %v, want ErrInvalid", err)
	}
	noTempFiles(t, dir)
}

// TestParseErrorMessages: an error names the JSON path of the bad value in
// the file's terms (no Go types), and never repeats a huge value whole.
func TestParseErrorMessages(t *testing.T) {
	base := mustMarshal(t, sampleReport())
	edit := func(f func(m map[string]any)) []byte {
		m := toDoc(t, base)
		f(m)
		return fromDoc(t, m)
	}
	huge := strings.Repeat("x", 10<<20)
	for _, c := range []struct {
		name string
		data []byte
		want []string
	}{
		{"array", []byte(`[1, 2]`), []string{"an array, not a JSON object"}},
		{"syntax", []byte("{\n  \"schema_version\": ,\n}"), []string{"line 2, column"}},
		{"truncated", base[:200], []string{"truncated"}},
		{"run is an array", edit(func(m map[string]any) { m["run"] = []any{1} }), []string{"run: want an object, got an array"}},
		{"start is an array", edit(func(m map[string]any) { at(m, "run")["start"] = []any{} }), []string{"run.start: want an RFC 3339 time string, got an array"}},
		{"checks is a string", edit(func(m map[string]any) { at(m, "predictions", 2)["checks"] = "7" }), []string{`predictions[2].checks: want an integer, got the string "7"`}},
		{"fractional checks", edit(func(m map[string]any) { at(m, "predictions", 2)["checks"] = 1.5 }), []string{`predictions[2].checks: "1.5" is not an integer`}},
		{"status", edit(func(m map[string]any) { at(m, "predictions", 1)["status"] = "passed" }), []string{`predictions[1].status: invalid prediction status "passed" (want one of discharged,`}},
		{"huge status", edit(func(m map[string]any) { at(m, "predictions", 1)["status"] = huge }), []string{"predictions[1].status: invalid prediction status \"xxxx", "(10485760 bytes)"}},
		{"huge unknown key", edit(func(m map[string]any) { at(m, "run")[huge] = 1 }), []string{"(10485764 bytes) is not a field of run"}},
		{"huge stat", edit(func(m map[string]any) { at(m, "predictions", 0, "error_stats")["max_abs"] = huge }), []string{"predictions[0].error_stats.max_abs:", "is not a number"}},
		{"stats are a list", edit(func(m map[string]any) { at(m, "predictions", 0)["error_stats"] = []any{1} }), []string{"predictions[0].error_stats: want an object, got an array"}},
		{"flag", edit(func(m map[string]any) { at(m, "predictions", 1)["flags"] = []any{"x", 3} }), []string{"predictions[1].flags[0]: invalid flag", "predictions[1].flags[1]: want a string, got the number 3"}},
		{"missing", edit(func(m map[string]any) { delete(at(m, "kernels", 1), "origin") }), []string{"kernels[1].origin is missing"}},
		{"no entry", edit(func(m map[string]any) { delete(at(m, "kernels", 1), "entry") }), []string{`kernels[1] "rmsnorm_bwd": entry is empty`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.data)
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			msg := err.Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%.2000s", w, msg)
				}
			}
			for _, leak := range []string{"Go value", "struct {", "reports.", "*float64", "json: "} {
				if strings.Contains(msg, leak) {
					t.Errorf("error leaks %q: %.2000s", leak, msg)
				}
			}
			if len(msg) > 4096 {
				t.Errorf("error of %d bytes", len(msg))
			}
		})
	}
}
