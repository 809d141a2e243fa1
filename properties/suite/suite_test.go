package suite_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

const (
	idPass = "SELF-PASS"
	idFail = "SELF-FAIL"
	idSlow = "SELF-SLOW"
	// childEnv names the test a child run of this binary runs.
	childEnv = "SUITE_TEST_CHILD"
)

func init() {
	properties.Register(properties.Prediction{ID: idPass, Title: "suite self-test (passing)", Statement: "x = x"})
	properties.Register(properties.Prediction{ID: idFail, Title: "suite self-test (failing)", Statement: "x ≤ 1"})
	properties.Register(properties.Prediction{ID: idSlow, Title: "suite self-test (slow)", Statement: "checks take a while"})
}

func passing(t properties.TB) {
	properties.Check(t, idPass, func(rt *rapid.T, o *properties.Obs) {
		x := rapid.Float32Range(-1, 1).Draw(rt, "x")
		o.Within("x", []float32{x}, []float64{float64(x)}, []float64{0})
	})
}

func failing(t properties.TB) {
	properties.Check(t, idFail, func(rt *rapid.T, o *properties.Obs) {
		// Every draw fails: rapid favours small values, and under -short a
		// contract run has only a few checks, too few to reach x > 1
		// reliably from [0, 4].
		x := rapid.Float64Range(1.5, 4).Draw(rt, "x")
		o.Ratio("x", x, 1)
	})
}

// slow passes every check, each taking d.
func slow(d time.Duration) func(t properties.TB) {
	return func(t properties.TB) {
		properties.Check(t, idSlow, func(rt *rapid.T, o *properties.Obs) {
			rapid.Int().Draw(rt, "n")
			time.Sleep(d)
			o.Ratio("n", 0, 1)
		})
	}
}

// testConfig is a run of the emulator writing to a fresh report path.
func testConfig(t *testing.T) suite.Config {
	c := suite.Default()
	c.Backend = "emu"
	c.Report = filepath.Join(t.TempDir(), "out", "report.json")
	c.Summary = false
	c.Progress = 0
	c.Checks = 20
	return c
}

// Every setting has its environment twin, read through the lookup it is
// given; flags override the environment; bad values are errors.
func TestLoadReadsEverySetting(t *testing.T) {
	env := map[string]string{
		"PTXPROP_BACKEND": "emu-checked", "PTXPROP_REPORT": "/x/r.json", "PTXPROP_MERGE": "true",
		"PTXPROP_DEADLINE": "45s", "PTXPROP_MAX_ELEMENTS": "4096", "PTXPROP_PROGRESS": "3s",
		"PTXPROP_EMU_ADVERSARIAL": "7", "PTXPROP_CHECKS": "1000", "PTXPROP_SEED": "99",
		"PTXPROP_WATCHDOG": "5s", "PTXPROP_SUMMARY": "false", "PTXPROP_DEVICES": "0,2",
		"PTXPROP_FAILDB": "/x/db", "PTXPROP_SHARD": "1/3", "PTXPROP_SHARD_COUNT": "3", "PTXPROP_SHARD_SPLIT": "2",
		"PTXPROP_SHARD_RUN": "job-7", "PTXPROP_LOOPS": "4", "PTXPROP_EMU_SCHEDULE": "11",
		"PTXPROP_CONTEXTS": "3", "PTXPROP_TARGETED": "0.3", "PTXPROP_GUIDED": "0.4", "PTXPROP_COVERAGE": "false",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := suite.Load(lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := suite.Config{Backend: "emu-checked", Report: "/x/r.json", Merge: true, Deadline: 45 * time.Second,
		MaxElements: 4096, Progress: 3 * time.Second, EmuAdversarial: 7, EmuSchedule: 11, Checks: 1000, Seed: 99,
		Watchdog: 5 * time.Second, Summary: false, Devices: suite.Devices{Ordinals: []int{0, 2}},
		FailDB: "/x/db", Shard: "1/3", ShardCount: 3, ShardSplit: 2, ShardRun: "job-7", Loops: 4,
		Contexts: 3, Targeted: 0.3, Guided: 0.4, Coverage: false}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Load = %+v\nwant   %+v", c, want)
	}
	// Every setting is in the table: each one moved its field away from
	// the default.
	if len(suite.Settings()) != len(env) {
		t.Errorf("%d settings, the test sets %d", len(suite.Settings()), len(env))
	}
	for _, s := range suite.Settings() {
		if _, ok := env[s.Env]; !ok || s.Env != suite.EnvName(s.Name) {
			t.Errorf("setting %s: %s not tested", s.Name, s.Env)
		}
	}
	if _, err := suite.Load(func(k string) (string, bool) { return "sometimes", k == "PTXPROP_MERGE" }); err == nil ||
		!strings.Contains(err.Error(), "PTXPROP_MERGE") {
		t.Errorf("a bad value: err = %v, want one naming PTXPROP_MERGE", err)
	}
	if _, err := suite.Load(func(k string) (string, bool) { return "cpu", k == "PTXPROP_BACKEND" }); err == nil {
		t.Error("backend cpu accepted")
	}
}

// The package documentation lists every setting with its flag and its
// environment twin.
func TestDocListsSettings(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range suite.Settings() {
		row := regexp.MustCompile(`(?m)^//\s+-ptxprop\.` + regexp.QuoteMeta(s.Name) + `\s+` + s.Env + `\s+` + regexp.QuoteMeta(s.Default) + `\s`)
		if !row.Match(doc) {
			t.Errorf("doc.go has no table row for -ptxprop.%s %s %s", s.Name, s.Env, s.Default)
		}
	}
}

// reportAlone fails t when anything but the report lies in its folder (a
// lock or temporary file left behind).
func reportAlone(t *testing.T, report string) {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Dir(report))
	for _, e := range ents {
		if e.Name() != filepath.Base(report) {
			t.Errorf("left beside the report: %s", e.Name())
		}
	}
}

// A run writes its own report: a stale or corrupt file at the path does not
// fail a finished run, and no lock file is left beside it.
func TestRunReplacesCorruptReport(t *testing.T) {
	c := testConfig(t)
	os.MkdirAll(filepath.Dir(c.Report), 0o755)
	os.WriteFile(c.Report, []byte(`{"schema_version": "1", "run": {`), 0o644)
	rep, err := suite.Run(context.Background(), c, []suite.Job{{Name: "TestPass", Run: passing}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := reports.Read(c.Report)
	if err != nil {
		t.Fatalf("the run's report: %v", err)
	}
	if p := got.Prediction(idPass); p == nil || p.Status != reports.Discharged || p.Checks != ranChecks(20) {
		t.Errorf("prediction = %+v, want discharged after %d checks", p, ranChecks(20))
	}
	if len(got.Predictions) != len(rep.Predictions) || len(got.Predictions) == 0 {
		t.Errorf("report on disk has %d predictions, Run returned %d", len(got.Predictions), len(rep.Predictions))
	}
	reportAlone(t, c.Report)
}

// With merge, a file that is not this run's (unreadable, or another
// commit's) is refused with a message naming both files, and kept.
func TestMergeRefusesAnotherRunsReport(t *testing.T) {
	c := testConfig(t)
	c.Merge = true
	os.MkdirAll(filepath.Dir(c.Report), 0o755)
	corrupt := []byte(`{"schema_version": "1", "run": {`)
	os.WriteFile(c.Report, corrupt, 0o644)
	_, err := suite.Run(context.Background(), c, []suite.Job{{Name: "TestPass", Run: passing}})
	if err == nil || !strings.Contains(err.Error(), "not merging into "+c.Report) {
		t.Fatalf("err = %v, want a refusal to merge", err)
	}
	if b, _ := os.ReadFile(c.Report); string(b) != string(corrupt) {
		t.Errorf("the refused file was changed")
	}
	m := regexp.MustCompile(`this run's report is (\S+)$`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("err = %v: names no file for this run's report", err)
	}
	if _, err := reports.Read(m[1]); err != nil {
		t.Errorf("this run's report beside the refused one: %v", err)
	}

	// Another commit's report.
	other := reports.New(reports.NewRun(reports.BackendEmu))
	other.Run.GitCommit = "0000000"
	other.Run.Device = "ptxprop PTX emulator (warp 32)"
	other.UpsertPrediction(reports.Prediction{ID: "X-OTHER", Status: reports.Skipped}) // a report holds at least one
	if err := reports.Write(c.Report, other); err != nil {
		t.Fatal(err)
	}
	_, err = suite.Run(context.Background(), c, []suite.Job{{Name: "TestPass", Run: passing}})
	if err == nil || !strings.Contains(err.Error(), `commit "0000000"`) {
		t.Errorf("merging into another commit's report: err = %v", err)
	}
}

// With merge into this run's own report, predictions that ran replace
// theirs and the rest are kept.
func TestMergeKeepsOtherPredictions(t *testing.T) {
	c := testConfig(t)
	t.Chdir(t.TempDir()) // rapid writes fail files under testdata/ here
	if _, err := suite.Run(context.Background(), c, []suite.Job{{Name: "TestFail", Run: failing}}); err != nil {
		t.Fatal(err)
	}
	first, err := reports.Read(c.Report)
	if err != nil {
		t.Fatal(err)
	}
	first.UpsertPrediction(reports.Prediction{ID: "X-KEPT", Status: reports.Discharged, Checks: 5})
	if err := reports.Write(c.Report, first); err != nil {
		t.Fatal(err)
	}
	c.Merge = true
	if _, err := suite.Run(context.Background(), c, []suite.Job{{Name: "TestPass", Run: passing}}); err != nil {
		t.Fatal(err)
	}
	got, err := reports.Read(c.Report)
	if err != nil {
		t.Fatal(err)
	}
	if got.Prediction("X-KEPT") == nil {
		t.Error("merge dropped a prediction this run did not run")
	}
	reportAlone(t, c.Report)
}

// A falsified prediction's report shows the failing ratio, every failing
// run, a command that can be pasted (anchored -run, no "(or …)"), and the
// run records the seed it used.
func TestReportOfAFailure(t *testing.T) {
	c := testConfig(t)
	t.Chdir(t.TempDir()) // rapid writes fail files under testdata/ here
	rep, err := suite.Run(context.Background(), c, []suite.Job{
		{Name: "TestFailA", Run: failing},
		{Name: "TestFailB", Run: failing},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Prediction(idFail)
	if p == nil || p.Status != reports.Falsified {
		t.Fatalf("prediction = %+v", p)
	}
	if p.ErrorStats == nil || !(p.ErrorStats.MaxRatio > 1) {
		t.Fatalf("error stats = %+v, want the failing ratio (> 1)", p.ErrorStats)
	}
	if es := p.ErrorStats; es.MaxAbs != nil || es.MaxRel != nil || es.MaxULP != nil {
		t.Errorf("element statistics of a scalar comparison: %v %v %v, want none", es.MaxAbs, es.MaxRel, es.MaxULP)
	}
	if p.ChecksFailed != 2 || !strings.Contains(p.Reason, "TestFailA") || !strings.Contains(p.Reason, "TestFailB") {
		t.Errorf("checks failed %d, reason %q: want both failing runs", p.ChecksFailed, p.Reason)
	}
	if p.Reproduction == nil {
		t.Fatal("no reproduction")
	}
	cmd := p.Reproduction.Command
	if !regexp.MustCompile(`^-run '\^TestFail[AB]\$' -rapid\.(seed=\d+ -ptxprop\.backend=emu -ptxprop\.loops=1|failfile=\S+ -ptxprop\.backend=emu)$`).MatchString(cmd) {
		t.Errorf("reproduction = %q, want one pasteable command", cmd)
	}
	if want := "-run '^(TestFailA|TestFailB)$' -ptxprop.backend=emu"; p.Rerun != want {
		t.Errorf("rerun = %q, want %q", p.Rerun, want)
	}
	if rep.Run.RapidSeed == nil || *rep.Run.RapidSeed == 0 {
		t.Errorf("run seed = %v, want the seed used", rep.Run.RapidSeed)
	}
}

// A cancelled run ends like a deadline: finished predictions as they ended,
// running ones inconclusive with their checks, the report written, an
// error saying why.
func TestRunCancelled(t *testing.T) {
	c := testConfig(t)
	c.Checks = 100000
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(500*time.Millisecond, func() { cancel(errors.New("enough")) })
	// The runner learns of the cancellation asynchronously and says so
	// ("ending the run"); TestLate's contract starts after that line, so
	// after the run ended: not run, and listed.
	ended := make(chan struct{})
	c.Output = &lineWatch{pattern: "ending the run", seen: ended}
	start := time.Now()
	late := func(t properties.TB) {
		select {
		case <-ended:
		case <-time.After(30 * time.Second): // never said: run it, and fail below
		}
		passing(t)
	}
	rep, err := suite.Run(ctx, c, []suite.Job{{Name: "TestSlow", Run: slow(10 * time.Millisecond)}, {Name: "TestLate", Run: late}})
	if err == nil || !strings.Contains(err.Error(), "enough") {
		t.Errorf("err = %v, want the cause", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the run took %v after being cancelled at 0.5s", d)
	}
	got, rerr := reports.Read(c.Report)
	if rerr != nil {
		t.Fatal(rerr)
	}
	for _, r := range []*reports.Report{rep, got} {
		p := r.Prediction(idSlow)
		if p == nil || p.Status != reports.Inconclusive || p.Checks == 0 || !strings.Contains(p.Reason, "enough") {
			t.Errorf("slow prediction = %+v, want inconclusive with its checks", p)
		}
		if r.Run.Stopped != "enough" || !r.Partial() {
			t.Errorf("run stopped = %q, partial %v; want the cause, partial", r.Run.Stopped, r.Partial())
		}
		if p := r.Prediction(idPass); p == nil || p.Status != reports.NotRun {
			t.Errorf("prediction never started = %+v, want not_run", p)
		}
	}
}

// lineWatch is an output that closes seen once a write contains pattern.
type lineWatch struct {
	mu      sync.Mutex
	pattern string
	seen    chan struct{}
	done    bool
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done && strings.Contains(string(p), w.pattern) {
		w.done = true
		close(w.seen)
	}
	return len(p), nil
}

// goTestCommand names the package, not the temporary binary.
func TestCommandLine(t *testing.T) {
	root := t.TempDir()
	pkg := filepath.Join(root, "properties")
	os.MkdirAll(pkg, 0o755)
	t.Chdir(pkg)
	prefix, cmd := suite.GoTestCommand([]string{"/tmp/go-build123/b001/properties.test", "-test.paniconexit0", "-test.timeout=10m0s", "-test.run=^TestX$", "-rapid.checks=10"}, root)
	if prefix != "go test ./properties" {
		t.Errorf("prefix = %q", prefix)
	}
	if got := strings.Join(cmd, " "); got != "go test ./properties -test.run=^TestX$ -rapid.checks=10" {
		t.Errorf("command line = %q", got)
	}
	prefix, _ = suite.GoTestCommand([]string{"./bin/properties.test", "-test.v"}, root)
	if prefix != "./bin/properties.test" {
		t.Errorf("a built binary's prefix = %q", prefix)
	}
}

// The default report is out/contract-report.json at the module root,
// wherever in the module the run starts (where the ptxprop command looks).
func TestDefaultReportPath(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644)
	sub := filepath.Join(root, "a", "b")
	os.MkdirAll(sub, 0o755)
	t.Chdir(sub)
	if got, want := suite.DefaultReportPath(), filepath.Join(root, "out", "contract-report.json"); got != want {
		t.Errorf("DefaultReportPath() = %q, want %q", got, want)
	}
}

// childRun starts this test binary as a ptxprop run of test name, with
// args, and returns the command (stdout piped) and the report path.
func childRun(t *testing.T, name string, args ...string) (*exec.Cmd, *bufio.Scanner, string) {
	t.Helper()
	cmd, report := childCmd(t, name, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out), report
}

// childCmd is the command of a child run of this test binary: test name
// on the emulator with args, writing its report to the path it returns,
// with none of this process's PTXPROP_ settings. Skipped under -short.
func childCmd(t *testing.T, name string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a child run")
	}
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^" + name + "$", "-ptxprop.report=" + report,
		"-ptxprop.backend=emu", "-ptxprop.summary=false"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PTXPROP_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, childEnv+"="+name)
	return cmd, report
}

// TestChildSlow is the child run of the signal and progress tests.
func TestChildSlow(t *testing.T) {
	if os.Getenv(childEnv) != "TestChildSlow" {
		t.Skip("run as a child by TestInterrupt and TestProgress")
	}
	t.Run("done", func(t *testing.T) { passing(suite.T(t)) })
	slow(20 * time.Millisecond)(suite.T(t))
}

// SIGINT (and SIGTERM) end the run as the deadline does: the report holds
// the finished predictions, the running one inconclusive with its checks,
// and the exit code is non-zero.
func TestInterrupt(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd, out, report := childRun(t, "TestChildSlow", "-ptxprop.checks=100000", "-ptxprop.progress=100ms")
		for out.Scan() { // the first progress line: the slow contract is running
			if strings.Contains(out.Text(), "TestChildSlow ") {
				break
			}
		}
		cmd.Process.Signal(sig)
		go func() {
			for out.Scan() {
			}
		}()
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != suite.ExitInterrupted {
			t.Errorf("%v: exit %v, want %d", sig, err, suite.ExitInterrupted)
		}
		rep, err := reports.Read(report)
		if err != nil {
			t.Fatalf("%v: report: %v", sig, err)
		}
		if p := rep.Prediction(idSlow); p == nil || p.Status != reports.Inconclusive || p.Checks == 0 || !strings.Contains(p.Reason, "interrupted by SIG") {
			t.Errorf("%v: running prediction = %+v, want inconclusive with its checks", sig, p)
		}
		if !strings.HasPrefix(rep.Run.Stopped, "interrupted by SIG") {
			t.Errorf("%v: run stopped = %q", sig, rep.Run.Stopped)
		}
		if p := rep.Prediction(idPass); p == nil || p.Status != reports.Discharged {
			t.Errorf("%v: finished prediction = %+v, want discharged", sig, p)
		} else if want := "go test ./properties/suite -run '^TestChildSlow$/^done$' -ptxprop.backend=emu"; p.Rerun != want {
			t.Errorf("%v: rerun = %q, want %q", sig, p.Rerun, want)
		}
	}
}

// progressRE matches a progress line of TestChildSlow at 30 checks while
// its slow contract runs: its "done" subtest recorded one prediction.
var progressRE = regexp.MustCompile(`^ptxprop (\d+[hms])+: 1 prediction recorded, 1 contract run running \(checks passed of 30\): TestChildSlow \d+$`)

// Progress lines say what runs, the checks it has passed, and the time
// elapsed, while the run goes on.
func TestProgress(t *testing.T) {
	cmd, out, _ := childRun(t, "TestChildSlow", "-ptxprop.checks=30", "-ptxprop.progress=100ms")
	seen := 0
	for out.Scan() {
		if progressRE.MatchString(out.Text()) {
			seen++
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("child: %v", err)
	}
	if seen < 2 {
		t.Errorf("%d progress lines over a 0.6s run at 100ms, want several", seen)
	}
}

// The reproduction's -run pattern selects exactly the failing test: each
// element anchored (TestX does not also run TestXFD), subtests included,
// quoted for the shell.
func TestReproArgs(t *testing.T) {
	for _, tc := range []struct{ name, failfile, want string }{
		{"TestRMSNormBackwardRowWarp", "", "-run '^TestRMSNormBackwardRowWarp$' -rapid.seed=7"},
		{"TestA/sub_1", "testdata/rapid/TestA/sub_1/x.fail", "-run '^TestA$/^sub_1$' -rapid.failfile=testdata/rapid/TestA/sub_1/x.fail"},
		{"TestB/x.y(1)", "", `-run '^TestB$/^x\.y\(1\)$' -rapid.seed=7`},
		{"TestC", "it's.fail", `-run '^TestC$' -rapid.failfile='it'\''s.fail'`},
	} {
		if got := suite.ReproArgs(tc.name, 7, tc.failfile); got != tc.want {
			t.Errorf("ReproArgs(%q, %q) = %q, want %q", tc.name, tc.failfile, got, tc.want)
		}
	}
}

// The reproduction command is one line to paste: the package's go test (or
// the test binary with -test.run), and the settings that shape the case.
func TestReproCommand(t *testing.T) {
	c := suite.Default()
	if got, want := suite.Repro(c, "go test ./properties", "TestX", 0, "testdata/rapid/TestX/a.fail"),
		"go test ./properties -run '^TestX$' -rapid.failfile=testdata/rapid/TestX/a.fail"; got != want {
		t.Errorf("repro = %q, want %q", got, want)
	}
	c.Backend, c.MaxElements = "emu-checked", 4096
	if got, want := suite.Repro(c, "../bin/properties.test", "TestX", 12, ""),
		"../bin/properties.test -test.run '^TestX$' -rapid.seed=12 -ptxprop.backend=emu-checked -ptxprop.max-elements=4096 -ptxprop.loops=1"; got != want {
		t.Errorf("repro = %q, want %q", got, want)
	}
}

// TestChildNone is a child run in which no contract runs.
func TestChildNone(t *testing.T) {
	if os.Getenv(childEnv) != "TestChildNone" {
		t.Skip("run as a child by TestNoContractNoReport")
	}
}

// A run in which no contract ran (go test -run picked other tests) leaves
// the report at the path as it was.
func TestNoContractNoReport(t *testing.T) {
	cmd, out, report := childRun(t, "TestChildNone")
	for out.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("child: %v", err)
	}
	if _, err := os.Stat(report); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("report written by a run of no contract: %v", err)
	}
}

// suite.Run in a plain program (testdata/outside: no go test, no
// testing.Init, no flag.Parse) runs its checks: rapid's testing.Short used to
// panic before the first one and the prediction was recorded discharged
// with 0 checks. The summary goes to the writer given, a failure's
// reproduction is the run's command with the failing seed, and no fail
// file lands in the working directory.
func TestRunOutsideGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	dir := t.TempDir()
	src, err := filepath.Abs("testdata/outside")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "outside")
	if out, err := exec.Command("go", "build", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, filepath.Join(dir, "report.json"))
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PTXPROP_") && !strings.HasPrefix(kv, "RAPID_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"result OUT-PASS discharged 20\n", "result OUT-FAIL falsified"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if !regexp.MustCompile(`(?m)^repro ptxprop verify -ptxprop.backend=emu -ptxprop.seed=\d+ -ptxprop.loops=1 'my kernel.yaml'$`).MatchString(s) {
		t.Errorf("reproduction is not the run's command with the seed:\n%s", s)
	}
	if !strings.Contains(s, "OUT-FAIL") || !strings.Contains(s, "outside (failing)") {
		t.Errorf("no summary on the writer given:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "testdata")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a fail file directory was written in the working directory: %v", err)
	}
}

// A Run's reproduction is its command: the settings that shape the cases,
// the failing check's seed, then the arguments, quoted.
func TestRunReproCommand(t *testing.T) {
	c := suite.Default()
	c.Command, c.CommandArgs, c.MaxElements = "ptxprop verify", []string{"a.yaml", "b c.yaml"}, 4096
	if got, want := suite.RunRepro(c, "a/RMS-FWD-001", 42), "ptxprop verify -ptxprop.max-elements=4096 -ptxprop.seed=42 -ptxprop.loops=1 a.yaml 'b c.yaml'"; got != want {
		t.Errorf("repro = %q, want %q", got, want)
	}
	// A run ended at check 7 without shrinking (liveness) replays 7 checks:
	// the flags still before the files.
	if got, want := suite.RunRerun(c, "a/RMS-FWD-001", 42, 7), "ptxprop verify -ptxprop.max-elements=4096 -ptxprop.seed=42 -ptxprop.loops=1 -ptxprop.checks=7 a.yaml 'b c.yaml'"; got != want {
		t.Errorf("rerun = %q, want %q", got, want)
	}
}

// ranChecks is the number of checks rapid runs in a contract run given
// -rapid.checks=n: a fifth of them under -short.
func ranChecks(n int) int {
	if testing.Short() {
		return n / 5
	}
	return n
}

// TestChildStubborn is the child run of TestSignalsEndTheProcess: a
// contract run, then a test that does not heed the run's end, then tests
// that start after it.
func TestChildStubborn(t *testing.T) {
	if os.Getenv(childEnv) != "TestChildStubborn" {
		t.Skip("run as a child by TestSignalsEndTheProcess")
	}
	t.Run("done", func(t *testing.T) { passing(suite.T(t)) })
	t.Run("slow", func(t *testing.T) { slow(20 * time.Millisecond)(suite.T(t)) })
	t.Run("stubborn", func(t *testing.T) {
		time.Sleep(time.Minute) // no check of the run's end
	})
}

// TestChildLater is a test of the child run that starts after the
// interruption: it must end at once.
func TestChildLater(t *testing.T) {
	if os.Getenv(childEnv) != "TestChildStubborn" {
		t.Skip("run as a child by TestSignalsEndTheProcess")
	}
	suite.T(t)
	time.Sleep(time.Minute)
}

// interrupted starts TestChildStubborn, waits until its slow contract has
// passed checks, sends it sig count times (each after the previous one's
// notice, when wait) and returns the output, the report, the time from
// the first signal to the exit and the exit error.
func interrupted(t *testing.T, sig syscall.Signal, count int) (string, *reports.Report, time.Duration, error) {
	t.Helper()
	cmd, out, report := childRun(t, "TestChildStubborn", "-test.run=^TestChild(Stubborn|Later)$", "-ptxprop.checks=100000",
		"-ptxprop.progress=100ms", "-test.v")
	var lines []string
	// A progress line with the slow contract running and past its first
	// check (on a loaded machine the first lines may show it at 0).
	passed := regexp.MustCompile(`TestChildStubborn/slow [1-9]`)
	stuck := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	found := false
	for !found && out.Scan() {
		lines = append(lines, out.Text())
		found = passed.MatchString(out.Text())
	}
	if !stuck.Stop() || !found {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%v ×%d: the slow contract passed no check within a minute:\n%s", sig, count, strings.Join(lines, "\n"))
	}
	start := time.Now()
	cmd.Process.Signal(sig)
	for i := 1; i < count && out.Scan(); {
		lines = append(lines, out.Text())
		// The first signal's notice, then the second's: the signal
		// before has been taken.
		if strings.Contains(out.Text(), "ending the run") || strings.Contains(out.Text(), "again: still ending") {
			cmd.Process.Signal(sig)
			i++
		}
	}
	for out.Scan() {
		lines = append(lines, out.Text())
	}
	err := cmd.Wait()
	took := time.Since(start)
	rep, rerr := reports.Read(report)
	if rerr != nil {
		t.Errorf("%v ×%d: no report: %v\n%s", sig, count, rerr, strings.Join(lines, "\n"))
	}
	return strings.Join(lines, "\n"), rep, took, err
}

// After SIGINT or SIGTERM the process exits with 130 and the report within
// the shutdown grace, whatever still runs: contract runs stop at their
// next check, a test that starts afterwards ends at once, and one that does
// not heed the end is abandoned. A second signal (timeout(1) signals the
// child, then its process group) does not kill the process before the
// report is written, and a third exits at once.
func TestSignalsEndTheProcess(t *testing.T) {
	for _, c := range []struct {
		sig   syscall.Signal
		count int
		want  string // in the output
	}{
		{syscall.SIGINT, 1, "the run had not ended 5s after SIGINT"},
		{syscall.SIGTERM, 2, "SIGTERM again: still ending the run"},
		{syscall.SIGINT, 3, "SIGINT a third time"},
	} {
		out, rep, took, err := interrupted(t, c.sig, c.count)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != suite.ExitInterrupted {
			t.Errorf("%v ×%d: exit %v, want status %d\n%s", c.sig, c.count, err, suite.ExitInterrupted, out)
		}
		if took > 8*time.Second {
			t.Errorf("%v ×%d: the process took %v to exit", c.sig, c.count, took)
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%v ×%d: output lacks %q:\n%s", c.sig, c.count, c.want, out)
		}
		if strings.Contains(out, "=== RUN   TestChildLater") && !strings.Contains(out, "--- SKIP: TestChildLater") {
			t.Errorf("%v ×%d: a test started after the signal ran on:\n%s", c.sig, c.count, out)
		}
		if rep == nil {
			continue
		}
		if p := rep.Prediction(idSlow); p == nil || p.Status != reports.Inconclusive || p.Checks == 0 {
			t.Errorf("%v ×%d: running prediction = %+v, want inconclusive with its checks", c.sig, c.count, p)
		}
		if p := rep.Prediction(idPass); p == nil || p.Status != reports.Discharged {
			t.Errorf("%v ×%d: finished prediction = %+v, want discharged", c.sig, c.count, p)
		}
	}
}
