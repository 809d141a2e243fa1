package kernels

// Unreachable is a branch direction of a kernel's committed PTX that no
// valid launch takes: Line is the bra's line in the PTX file, Direction
// "taken" or "not taken", Reason why no launch takes it. The property
// suite fails when the emulator saw a direction left uncovered that no
// Unreachable of the kernel names, and when one names a direction it saw
// taken.
type Unreachable struct {
	Line      int
	Direction string
	Reason    string
}

func init() {
	for _, k := range registry {
		k.Unreachable, k.CoverageGaps = unreachable[k.Name], viewGaps[k.Name]
	}
}

// UnreachableReason returns why direction dir of the branch at PTX line
// is unreachable, or "" when k does not say it is.
func (k *Kernel) UnreachableReason(line int, dir string) string {
	for _, u := range k.Unreachable {
		if u.Line == line && u.Direction == dir {
			return u.Reason
		}
	}
	return ""
}

// KnownGap reports whether direction dir of the branch at PTX line is one
// of k's CoverageGaps.
func (k *Kernel) KnownGap(line int, dir string) bool {
	for _, u := range k.CoverageGaps {
		if u.Line == line && u.Direction == dir {
			return true
		}
	}
	return false
}
