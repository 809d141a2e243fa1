package emu

import (
	"fmt"
	"strings"

	"github.com/ptxprop/ptxprop/cudart"
)

// Fault is an error found while running a kernel. It wraps one of the
// cudart sentinels (ErrOutOfBounds, ErrRace, ErrDeadlock, ErrTimeout,
// ErrLaunch), so errors.Is works on it.
type Fault struct {
	Code   error  // the cudart sentinel
	Kernel string // entry name
	PC     int    // index of the instruction in the decoded kernel; -1 if none
	Line   int    // PTX source line; 0 if none
	Inst   string // the instruction as PTX text
	CTA    [3]uint32
	Thread [3]uint32 // threadIdx of the faulting thread (first lane for warp-wide faults)
	Lane   int
	Space  string // "global", "shared", "local", "const", "param"
	Addr   uint64 // faulting address in Space (0 if none)
	Size   int    // access size in bytes
	Detail string // what went wrong, with the buffer name
}

func (f *Fault) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %s", f.Code, f.Detail)
	if f.Kernel != "" {
		fmt.Fprintf(&b, "\n\tkernel %s", f.Kernel)
		if f.Line > 0 {
			fmt.Fprintf(&b, ", PTX line %d", f.Line)
		}
		if f.PC >= 0 {
			fmt.Fprintf(&b, " (pc %d)", f.PC)
		}
		if f.Inst != "" {
			fmt.Fprintf(&b, ": %s", f.Inst)
		}
	}
	if f.Lane >= 0 {
		fmt.Fprintf(&b, "\n\tblockIdx (%d,%d,%d) threadIdx (%d,%d,%d) lane %d", f.CTA[0], f.CTA[1], f.CTA[2], f.Thread[0], f.Thread[1], f.Thread[2], f.Lane)
	}
	if f.Space != "" {
		fmt.Fprintf(&b, "\n\t%s address %#x, %d bytes", f.Space, f.Addr, f.Size)
	}
	return b.String()
}

// Unwrap returns the cudart sentinel.
func (f *Fault) Unwrap() error { return f.Code }

var _ error = (*Fault)(nil)

// decodeError is a load-time error at a PTX line.
func decodeError(kernel string, line int, inst string, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if inst != "" {
		return cudart.Errorf(cudart.ErrInvalid, "kernel %s, PTX line %d: %s: %s", kernel, line, msg, inst)
	}
	return cudart.Errorf(cudart.ErrInvalid, "kernel %s, PTX line %d: %s", kernel, line, msg)
}

// laneRanges formats a lane mask as "0-15,20".
func laneRanges(m uint32) string {
	var parts []string
	for l := 0; l < 32; {
		if m&(1<<l) == 0 {
			l++
			continue
		}
		s := l
		for l < 32 && m&(1<<l) != 0 {
			l++
		}
		if l-1 == s {
			parts = append(parts, fmt.Sprint(s))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s, l-1))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}
