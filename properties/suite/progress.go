package suite

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ptxprop/ptxprop/properties/outcome"
)

// progressOutput picks where progress lines go and how often: with
// Progress Auto, every 5 seconds to out when it is a terminal, else to the
// terminal the run was started from (go test holds a package's output back
// until it ends), else every minute to out (a CI log). An explicit interval
// keeps the same choice of writer.
func progressOutput(every time.Duration, out io.Writer) (io.Writer, time.Duration) {
	if every == 0 {
		return nil, 0
	}
	w, tty := out, isTerminal(out)
	if !tty {
		if f, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			w, tty = f, true
		}
	}
	if every == Auto {
		every = time.Minute
		if tty {
			every = 5 * time.Second
		}
	}
	return w, every
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
// "ptxprop 1m5s: 12 predictions done, 2 contract runs running (of 1000 checks each): TestA 310, TestB 12",
// with the launches on each device when there are several.
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
	line := fmt.Sprintf("ptxprop %v: %d predictions recorded, %d contract runs running", time.Since(r.start).Round(time.Second), done, len(live))
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
