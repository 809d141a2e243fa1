//go:build linux

package suite_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// These tests run child processes on a pseudo-terminal, as a person runs
// go test or make from a shell: the terminal is the child's controlling
// terminal and, unless a test captures them, its stdin, stdout and stderr.
// CI has no terminal of its own, so without them it never sees how a run
// behaves on one.

// openPTY opens a pseudo-terminal and returns its master end, which the
// test reads what is shown from and types into, and the terminal itself.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no /dev/ptmx: this system has no pseudo-terminals")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	rc, err := master.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n uint32
	var ioctlErr error
	err = rc.Control(func(fd uintptr) {
		var unlock int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
			ioctlErr = fmt.Errorf("unlocking the pseudo-terminal: %w", e)
			return
		}
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
			ioctlErr = fmt.Errorf("numbering the pseudo-terminal: %w", e)
		}
	})
	if err = errors.Join(err, ioctlErr); err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, tty
}

// terminalRun is a child process started on a pseudo-terminal.
type terminalRun struct {
	cmd    *exec.Cmd
	master *os.File
	shown  chan string // the lines the terminal shows, closed when it is closed
	exited chan error  // cmd.Wait's error, once
}

// startOnTerminal starts cmd in a session of its own whose controlling
// terminal is a fresh pseudo-terminal, as a shell runs a command: stdin,
// and stdout and stderr unless cmd sets them, on the terminal. The process
// group is killed when the test ends, should cmd still run.
func startOnTerminal(t *testing.T, cmd *exec.Cmd) *terminalRun {
	t.Helper()
	master, tty := openPTY(t)
	cmd.Stdin = tty
	if cmd.Stdout == nil {
		cmd.Stdout = tty
	}
	if cmd.Stderr == nil {
		cmd.Stderr = tty
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child's copies keep it open
	r := &terminalRun{cmd: cmd, master: master, shown: make(chan string, 1<<16), exited: make(chan error, 1)}
	go func() {
		// Reading the master ends with EIO once no process has the terminal open.
		sc := bufio.NewScanner(master)
		for sc.Scan() {
			r.shown <- strings.TrimRight(sc.Text(), "\r")
		}
		close(r.shown)
	}()
	go func() { r.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the session leader's group: it and its children
	})
	return r
}

// wait returns the child's exit code, or fails the test if it runs longer
// than limit.
func (r *terminalRun) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case err := <-r.exited:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return r.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.exited
		t.Fatalf("%v still running after %v; killed", r.cmd.Args, limit)
		return -1
	}
}

// rest returns the lines the terminal shows from now until it is closed.
func (r *terminalRun) rest() []string {
	var lines []string
	for l := range r.shown {
		lines = append(lines, l)
	}
	return lines
}

// anyProgress matches any progress line.
var anyProgress = regexp.MustCompile(`^ptxprop (\d+[hms])+: \d+ predictions? recorded, \d+ contract runs? running`)

// A run started from a terminal whose output is captured (a test's child
// run, go test's pipe, a log) prints its progress to that output, and
// nothing to the terminal.
func TestProgressOnCapturedOutput(t *testing.T) {
	cmd, _ := childCmd(t, "TestChildSlow", "-ptxprop.checks=30", "-ptxprop.progress=100ms")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cmd.Stdout, cmd.Stderr = pw, pw
	run := startOnTerminal(t, cmd)
	pw.Close()
	captured, err := io.ReadAll(pr)
	if err != nil {
		t.Fatal(err)
	}
	if code := run.wait(t, time.Minute); code != 0 {
		t.Errorf("child exit %d, want 0; its output:\n%s", code, captured)
	}
	seen := 0
	for _, l := range strings.Split(string(captured), "\n") {
		if progressRE.MatchString(l) {
			seen++
		}
	}
	if seen < 2 {
		t.Errorf("%d progress lines in the captured output over a 0.6s run at 100ms, want several; it was:\n%s", seen, captured)
	}
	if shown := run.rest(); len(shown) > 0 {
		t.Errorf("the terminal shows %d lines, want none (the output is captured):\n%s", len(shown), strings.Join(shown, "\n"))
	}
}

// A run whose output is the terminal prints its progress there.
func TestProgressOnTerminal(t *testing.T) {
	cmd, _ := childCmd(t, "TestChildSlow", "-ptxprop.checks=30", "-ptxprop.progress=100ms")
	run := startOnTerminal(t, cmd)
	if code := run.wait(t, time.Minute); code != 0 {
		t.Errorf("child exit %d, want 0", code)
	}
	seen := 0
	shown := run.rest()
	for _, l := range shown {
		if progressRE.MatchString(l) {
			seen++
		}
	}
	if seen < 2 {
		t.Errorf("the terminal shows %d progress lines over a 0.6s run at 100ms, want several; it shows:\n%s", seen, strings.Join(shown, "\n"))
	}
}

// Ctrl-C typed on the terminal ends a run promptly (the deadline's way),
// with exit status 130 and the report of what was done.
func TestCtrlCOnTerminal(t *testing.T) {
	cmd, report := childCmd(t, "TestChildSlow", "-ptxprop.checks=100000", "-ptxprop.progress=100ms")
	run := startOnTerminal(t, cmd)
	for l := range run.shown { // the slow contract is running
		if anyProgress.MatchString(l) && strings.Contains(l, "TestChildSlow ") {
			break
		}
	}
	typed := time.Now()
	if _, err := run.master.Write([]byte{0x03}); err != nil { // the terminal's intr character: SIGINT to its foreground group
		t.Fatal(err)
	}
	go run.rest() // keep reading what the terminal shows
	const limit = 10 * time.Second
	if code := run.wait(t, limit); code != suite.ExitInterrupted {
		t.Errorf("exit %d after Ctrl-C, want %d", code, suite.ExitInterrupted)
	}
	t.Logf("the run ended %v after Ctrl-C", time.Since(typed).Round(time.Millisecond))
	rep, err := reports.Read(report)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	if p := rep.Prediction(idSlow); p == nil || p.Status != reports.Inconclusive || !strings.Contains(p.Reason, "interrupted by SIGINT") {
		t.Errorf("running prediction = %+v, want inconclusive, interrupted by SIGINT", p)
	}
}

// This package's own signal and progress tests pass when go test runs on a
// terminal, promptly, and their child runs show nothing there.
func TestChildRunTestsOnTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child run")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^(TestProgress|TestInterrupt)$", "-test.count=1", "-test.timeout=90s")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, childEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	run := startOnTerminal(t, cmd)
	var shown []string
	read := make(chan struct{})
	go func() { shown = run.rest(); close(read) }()
	code := run.wait(t, 2*time.Minute)
	<-read
	if code != 0 {
		t.Errorf("go test -run '^(TestProgress|TestInterrupt)$' on a terminal: exit %d, want 0; the terminal shows:\n%s", code, strings.Join(shown, "\n"))
	}
	flood := 0
	for _, l := range shown {
		if anyProgress.MatchString(l) {
			flood++
		}
	}
	if flood > 0 {
		t.Errorf("the terminal shows %d progress lines of child runs, want none", flood)
	}
}

// Auto progress is every 5 seconds when the run's output is a terminal
// and every minute when it is anything else, whatever terminal the process
// has; an explicit interval is kept.
func TestProgressInterval(t *testing.T) {
	_, tty := openPTY(t)
	defer tty.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	for _, tc := range []struct {
		name  string
		every time.Duration
		out   io.Writer
		want  time.Duration
	}{
		{"auto, terminal", suite.Auto, tty, 5 * time.Second},
		{"auto, pipe", suite.Auto, pw, time.Minute},
		{"auto, buffer", suite.Auto, &bytes.Buffer{}, time.Minute},
		{"100ms, pipe", 100 * time.Millisecond, pw, 100 * time.Millisecond},
		{"off, terminal", 0, tty, 0},
		{"auto, no output", suite.Auto, nil, 0},
	} {
		if got := suite.ProgressInterval(tc.every, tc.out); got != tc.want {
			t.Errorf("%s: interval %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Progress lines count in words that agree with the number: "1 prediction",
// "2 predictions", "1 contract run", "0 contract runs".
func TestProgressLineWording(t *testing.T) {
	start := time.Now().Add(-65 * time.Second)
	rec := &outcome.Recorder{}
	if got, want := suite.ProgressLine(rec, start), "ptxprop 1m5s: 0 predictions recorded, 0 contract runs running"; got != want {
		t.Errorf("progress line = %q, want %q", got, want)
	}
	rec.Record(outcome.Outcome{ID: idPass, Status: outcome.Discharged, Checks: 1})
	a := rec.Begin(idSlow, "TestA")
	a.Pass(outcome.ErrorStats{})
	want := regexp.MustCompile(`^ptxprop 1m5s: 1 prediction recorded, 1 contract run running \(checks passed of \d+\): TestA 1$`)
	if got := suite.ProgressLine(rec, start); !want.MatchString(got) {
		t.Errorf("progress line = %q, want it to match %s", got, want)
	}
	rec.Record(outcome.Outcome{ID: idFail, Status: outcome.Falsified, Checks: 1})
	rec.Begin(idSlow, "TestB")
	want = regexp.MustCompile(`^ptxprop 1m5s: 2 predictions recorded, 2 contract runs running \(checks passed of \d+\): TestA 1, TestB 0$`)
	if got := suite.ProgressLine(rec, start); !want.MatchString(got) {
		t.Errorf("progress line = %q, want it to match %s", got, want)
	}
}
