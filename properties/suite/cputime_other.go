//go:build !unix

package suite

import "time"

// ProcessCPU is 0 where getrusage is not available.
func ProcessCPU() time.Duration { return 0 }
