package cudart

import "time"

// Watch runs f and returns its error, or an error wrapping ErrTimeout if f has
// not returned within limit — the liveness check for a launcher (Go code) that
// may deadlock, such as one that re-takes its own lock. A timed-out f keeps its
// goroutine; the caller should treat the state f touched as lost.
func Watch(limit time.Duration, op string, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return &Error{Op: op, Err: &TimeoutError{What: op, Limit: limit}}
	}
}
