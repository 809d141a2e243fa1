package properties

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/ptxprop/ptxprop/properties/outcome"
)

// QuietTB is a TB that records failures instead of failing a real test. It
// lets package falsify run a contract against a mutant and read the verdict,
// lets a runner run contracts outside go test, and lets the harness test
// itself. Use RunQuiet to drive one.
type QuietTB struct {
	name    string
	cfg     *Config
	mu      sync.Mutex
	failed  bool
	skipped bool
	logs    []string
}

// RunQuiet runs f with a fresh QuietTB named name on its own goroutine (so
// FailNow and SkipNow can end it like the testing package does) and returns
// the TB once f has returned or stopped. Contracts run by f see cfg; when
// cfg.Recorder is nil, the TB gets a Recorder of its own (QuietTB.Outcomes).
func RunQuiet(name string, cfg Config, f func(t TB)) *QuietTB {
	if cfg.Recorder == nil {
		cfg.Recorder = &outcome.Recorder{}
	}
	q := &QuietTB{name: name, cfg: &cfg}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				q.mu.Lock()
				q.failed = true
				q.logs = append(q.logs, fmt.Sprintf("panic: %v", r))
				q.mu.Unlock()
			}
		}()
		f(q)
	}()
	<-done
	return q
}

// Config returns the configuration given to RunQuiet.
func (q *QuietTB) Config() *Config { return q.cfg }

// Outcomes returns the outcomes recorded by the run's Recorder.
func (q *QuietTB) Outcomes() map[string]outcome.Outcome { return q.cfg.Recorder.Outcomes() }

// Helper is a no-op.
func (q *QuietTB) Helper() {}

// Name returns the name given to RunQuiet.
func (q *QuietTB) Name() string { return q.name }

// Logf records a line.
func (q *QuietTB) Logf(format string, args ...any) { q.Log(fmt.Sprintf(format, args...)) }

// Log records a line.
func (q *QuietTB) Log(args ...any) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.logs = append(q.logs, strings.TrimSuffix(fmt.Sprint(args...), "\n"))
}

// Errorf records a line and marks the run failed.
func (q *QuietTB) Errorf(format string, args ...any) { q.Logf(format, args...); q.Fail() }

// Error records a line and marks the run failed.
func (q *QuietTB) Error(args ...any) { q.Log(args...); q.Fail() }

// Fatalf records a line, marks the run failed and stops it.
func (q *QuietTB) Fatalf(format string, args ...any) { q.Logf(format, args...); q.FailNow() }

// Fatal records a line, marks the run failed and stops it.
func (q *QuietTB) Fatal(args ...any) { q.Log(args...); q.FailNow() }

// Fail marks the run failed.
func (q *QuietTB) Fail() { q.mu.Lock(); q.failed = true; q.mu.Unlock() }

// FailNow marks the run failed and stops its goroutine.
func (q *QuietTB) FailNow() { q.Fail(); runtime.Goexit() }

// Failed reports whether the run failed.
func (q *QuietTB) Failed() bool { q.mu.Lock(); defer q.mu.Unlock(); return q.failed }

// Skipf records a line and stops the run as skipped.
func (q *QuietTB) Skipf(format string, args ...any) { q.Logf(format, args...); q.SkipNow() }

// Skip records a line and stops the run as skipped.
func (q *QuietTB) Skip(args ...any) { q.Log(args...); q.SkipNow() }

// SkipNow stops the run as skipped.
func (q *QuietTB) SkipNow() { q.mu.Lock(); q.skipped = true; q.mu.Unlock(); runtime.Goexit() }

// Skipped reports whether the run was skipped.
func (q *QuietTB) Skipped() bool { q.mu.Lock(); defer q.mu.Unlock(); return q.skipped }

// Logs returns every line logged.
func (q *QuietTB) Logs() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.logs...)
}
