package suite

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ptxprop/ptxprop/properties/outcome"
)

// progressOutput returns the interval of progress lines to out, the
// run's own output (nil: none): every 0 is none, Auto is every 5 seconds
// when out is a terminal and every minute otherwise (a log, or go test's
// pipe, which holds a package's output back until it ends). Nothing else
// is written to: a run whose output is captured (a test's child process, a
// CI log) keeps its progress there, whatever terminal it was started from.
func progressOutput(every time.Duration, out io.Writer) time.Duration {
	if every == 0 || out == nil {
		return 0
	}
	if every == Auto {
		every = time.Minute
		if isTerminal(out) {
			every = 5 * time.Second
		}
	}
	return every
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress prints a line every interval: elapsed time, contract runs done
// and running, and each running one's checks so far.
func (r *runner) progress(w io.Writer, every time.Duration) (stop func()) {
	t := time.NewTicker(every)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			fmt.Fprintln(w, r.progressLine())
		}
	}()
	return func() {
		t.Stop()
		close(done)
	}
}

// progressLine describes the run now, e.g.
// "ptxprop 1m5s: 12 predictions recorded, 2 contract runs running (checks passed of 1000): TestA 310, TestB 12",
// with the launches on each device when there are several ("; launches by
// device 0: 812, 1: 790").
func (r *runner) progressLine() string {
	done, live := 0, []*outcome.LiveRun(nil)
	for _, rec := range r.recorders() {
		done += len(rec.Outcomes())
		live = append(live, rec.Live()...)
	}
	var parts []string
	for _, l := range live {
		n, _ := l.Progress()
		parts = append(parts, fmt.Sprintf("%s %d", l.Name, n))
	}
	line := fmt.Sprintf("ptxprop %v: %s recorded, %s running", time.Since(r.start).Round(time.Second),
		count(done, "prediction", "predictions"), count(len(live), "contract run", "contract runs"))
	if len(live) > 0 {
		line += fmt.Sprintf(" (checks passed of %d): %s", rapidInt("checks"), strings.Join(parts, ", "))
	}
	if len(r.devs) > 1 {
		var devs []string
		for _, d := range r.devs {
			devs = append(devs, fmt.Sprintf("%d: %d", d.Info().Ordinal, d.Stats().Launches))
		}
		line += "; launches by device " + strings.Join(devs, ", ")
	}
	return line
}

// count is n and the noun, singular or plural as n asks: "1 prediction",
// "0 predictions".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
