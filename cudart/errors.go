package cudart

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors: every error returned by a Device wraps exactly one of
// these (or a backend's own code wrapped by ErrDriver), so callers can use
// errors.Is; a failed Load wraps ErrLoad as well as the backend's cause.
var (
	ErrNoDevice      = errors.New("no device")
	ErrInvalid       = errors.New("invalid argument")
	ErrDriver        = errors.New("driver error")
	ErrLaunch        = errors.New("launch failed")
	ErrTimeout       = errors.New("watchdog: launch did not complete")
	ErrDeadlock      = errors.New("deadlock")
	ErrOutOfBounds   = errors.New("out-of-bounds access")
	ErrGuardBand     = errors.New("guard band overwritten")
	ErrInputModified = errors.New("input buffer modified")
	ErrRace          = errors.New("data race")
	ErrUnsupported   = errors.New("not supported by this backend")
	ErrClosed        = errors.New("device closed")
	ErrPoisoned      = errors.New("device unusable after an earlier timeout")
	ErrLoad          = errors.New("module not loaded")
	ErrParams        = errors.New("launch parameters do not match the entry")
)

// Setup reports whether err is a failure to set a launch up rather than a
// fault of a kernel that ran: a module that does not load, an entry the
// module lacks, parameters or a geometry the entry cannot take, or a device
// that is closed, absent or unusable. Such a failure says nothing of what a
// kernel computes.
func Setup(err error) bool {
	for _, code := range []error{ErrLoad, ErrParams, ErrInvalid, ErrNoDevice, ErrClosed, ErrPoisoned, ErrUnsupported} {
		if errors.Is(err, code) {
			return true
		}
	}
	return false
}

// TimeoutError is a liveness failure: a launch, or a call under Watch, that
// did not complete within its limit. errors.Is(err, ErrTimeout) holds for
// it, and for every later error of the Device it left unusable
// (ErrPoisoned), so a caller can tell a hang from a wrong result at once.
type TimeoutError struct {
	What   string        // the kernel entry, or the operation Watch ran
	Limit  time.Duration // the watchdog's limit
	Detail string        // the launch's geometry; may be empty
}

func (e *TimeoutError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%v: %s did not complete within %v (%s)", ErrTimeout, e.What, e.Limit, e.Detail)
	}
	return fmt.Sprintf("%v: %s did not complete within %v", ErrTimeout, e.What, e.Limit)
}

// Is makes a TimeoutError match ErrTimeout.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// Error is an error from a device operation: "cudart: launch rmsnorm_fwd: …".
type Error struct {
	Op   string // "launch", "alloc", "load", "copy", …
	Name string // kernel entry or buffer; may be empty
	Err  error
}

func (e *Error) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("cudart: %s %s: %v", e.Op, e.Name, e.Err)
	}
	return fmt.Sprintf("cudart: %s: %v", e.Op, e.Err)
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) && ce.Op == op && ce.Name == name {
		return err
	}
	return &Error{Op: op, Name: name, Err: err}
}

// Errorf builds an error wrapping code (one of the sentinels) with a message;
// backends use it so their errors stay testable with errors.Is.
func Errorf(code error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", code, fmt.Sprintf(format, args...))
}
