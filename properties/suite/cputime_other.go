//go:build !unix

package suite

import "time"

func processCPU() time.Duration { return 0 }
