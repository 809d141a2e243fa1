//go:build unix

package suite

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user and system) the process has used, or 0
// when the system cannot tell: a run's share of the host's cores (HostLoad),
// and the benchmarks' CPU time per check.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
