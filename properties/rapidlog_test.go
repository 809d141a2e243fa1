package properties

import (
	"fmt"
	"os"
	"regexp"
	"testing"
)

// rapidlog.go reads rapid's log as rapid rapidVersion writes it: a change of
// the version in go.mod must come with a look at that format (engine.go's
// checkTB) and this test.
func TestRapidLogFormat(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*pgregory\.net/rapid (\S+)`).FindSubmatch(mod)
	if m == nil || string(m[1]) != rapidVersion {
		t.Fatalf("go.mod requires rapid %s; rapidlog.go reads the log of %s", m[1], rapidVersion)
	}
	// The lines rapid v1.3.0's checkTB writes, from its format strings.
	name := regexp.QuoteMeta("TestX/sub")
	for _, tc := range []struct {
		msg            string
		failed, flaky  bool
		seed           uint64
		failfile, fail string
	}{
		{fmt.Sprintf("[rapid] failed after %v tests: %v\nTo reproduce, specify -run=%q %v\nFailed test output:", 7, "y: too big\nmore", name,
			fmt.Sprintf("-rapid.failfile=%q (or -rapid.seed=%d)", "testdata/rapid/TestX/a.fail", 42)),
			true, false, 42, "testdata/rapid/TestX/a.fail", "y: too big"},
		{fmt.Sprintf("[rapid] panic after %v tests: %v\nTo reproduce, specify -run=%q %v\nTraceback:\n%vFailed test output:", 0, "boom", name,
			fmt.Sprintf("-rapid.seed=%d", 9), "    f.go:1 in f\n"), true, false, 9, "", "boom"},
		{fmt.Sprintf("[rapid] flaky test, can not reproduce a failure\nTo try to reproduce, specify -run=%q %v\nTraceback (%v):\n%vOriginal traceback (%v):\n%vFailed test output:",
			name, fmt.Sprintf("-rapid.seed=%d", 5), "e2", "", "e1", ""), false, true, 5, "", "Traceback (e2):"},
	} {
		c := &captureTB{}
		c.note(tc.msg)
		c.note("[rapid] draw n: 1000")
		l := c.log()
		if l.failed != tc.failed || l.flaky != tc.flaky || l.seed != tc.seed || l.failfile != tc.failfile || l.failure != tc.fail {
			t.Errorf("read %+v from %q", l, tc.msg)
		}
		if len(l.draws) != 1 || l.draws[0] != "n: 1000" {
			t.Errorf("draws %q, want [n: 1000]", l.draws)
		}
	}
}
