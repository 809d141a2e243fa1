//go:build !unix

package properties_test

import "time"

// processCPU is 0 where getrusage is not available: the benchmark then
// reports no cpu-µs/check.
func processCPU() time.Duration { return 0 }
