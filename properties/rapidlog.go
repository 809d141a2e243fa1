package properties

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// This file is the one place that reads rapid's log: the seed and fail file
// of a failure, whether it was flaky, and the labelled draws of the minimal
// case. rapid v1.3.0 offers them through no API; TestRapidLogFormat pins the
// format to the version in go.mod.

// rapidVersion is the rapid version whose log format this file reads.
const rapidVersion = "v1.3.0"

var (
	reFailed   = regexp.MustCompile(`(?s)^\[rapid\] (?:failed|panic) after (\d+) tests: (.*?)\nTo reproduce, specify -run=(.*?)\n`)
	reFlaky    = regexp.MustCompile(`(?s)^\[rapid\] flaky test, can not reproduce a failure\nTo try to reproduce, specify -run=(.*?)\n`)
	reFailfile = regexp.MustCompile(`-rapid\.failfile="([^"]*)"`)
	reSeed     = regexp.MustCompile(`-rapid\.seed=(\d+)`)
	reDraw     = regexp.MustCompile(`^\[rapid\] draw (.*?): (.*)$`)
	reTooFew   = regexp.MustCompile(`^\[rapid\] only generated (\d+) valid tests from (\d+) total`)
)

// rapidLog is what rapid said about one rapid.Check.
type rapidLog struct {
	failed, flaky bool
	failure       string // the first line of the failure, as rapid gave it
	seed          uint64 // the failing check's seed (0: not given)
	failfile      string
	draws         []string // "label: value" lines of the minimal case
	// tooFew is rapid's "only generated N valid tests from M total" (""
	// when it did not say so), with N and M: the draws the implementation
	// refused (properties.ErrShapeRefused) or the property discarded were
	// too many for the checks asked.
	tooFew       string
	valid, total int
}

// captureTB keeps what rapid says to one loop's TB (loopTB), and whether
// the loop failed or was skipped.
type captureTB struct {
	mu         sync.Mutex
	l          rapidLog
	replaying  bool
	failed     bool
	skipped    bool
	skipReason string
}

func (c *captureTB) log() rapidLog {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.l
	l.draws = append([]string(nil), c.l.draws...)
	return l
}

// skip returns why the loop was skipped, and whether it was.
func (c *captureTB) skip() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.skipReason, c.skipped
}

func (c *captureTB) note(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := reTooFew.FindStringSubmatch(msg); m != nil {
		c.l.tooFew = firstLine(msg)
		c.l.valid, _ = strconv.Atoi(m[1])
		c.l.total, _ = strconv.Atoi(m[2])
		return
	}
	if m := reFailed.FindStringSubmatch(msg); m != nil {
		c.l.failed = true
		c.l.failure = firstLine(m[2])
		c.repro(m[3])
		return
	}
	if m := reFlaky.FindStringSubmatch(msg); m != nil {
		c.l.flaky = true
		if i := strings.Index(msg, "Traceback"); i >= 0 {
			c.l.failure = firstLine(msg[i:])
		}
		c.repro(m[1])
		return
	}
	if c.replaying {
		if m := reDraw.FindStringSubmatch(msg); m != nil {
			c.l.draws = append(c.l.draws, m[1]+": "+m[2])
		} else if !strings.HasPrefix(msg, "[rapid]") && c.l.failure == "" {
			c.l.failure = firstLine(msg)
		}
	}
}

// repro reads the fail file and seed from rapid's "To reproduce" arguments;
// the draws logged after them are the minimal case's.
func (c *captureTB) repro(args string) {
	if m := reFailfile.FindStringSubmatch(args); m != nil {
		c.l.failfile = m[1]
	}
	if m := reSeed.FindStringSubmatch(args); m != nil {
		c.l.seed, _ = strconv.ParseUint(m[1], 10, 64)
	}
	c.replaying, c.l.draws = true, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// fromRapid reports whether a panic value is rapid's own control flow (an
// invalid draw, a stopped check) rather than the property's.
func fromRapid(r any) bool {
	return r != nil && strings.HasPrefix(fmt.Sprintf("%T", r), "rapid.")
}

// reproArgs returns the go test arguments that replay a failing run (the
// runner's Recorder.Repro usually makes the whole command): the anchored
// -run pattern and the fail file or, without one, the failing check's seed.
func reproArgs(name string, seed uint64, failfile string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	args := "-run '" + strings.Join(parts, "/") + "'"
	if failfile != "" {
		return args + " -rapid.failfile='" + strings.ReplaceAll(failfile, "'", `'\''`) + "'"
	}
	return args + fmt.Sprintf(" -rapid.seed=%d", seed)
}
