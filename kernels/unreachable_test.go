package kernels

import (
	"fmt"
	"strings"
	"testing"
)

// Every explanation names a conditional branch of its own entry in the
// committed PTX, once per direction, with a reason: what a `make ptx` that
// moves lines breaks is caught here before a coverage run.
func TestUnreachableNamesBranches(t *testing.T) {
	for _, k := range registry {
		if len(k.Unreachable) == 0 {
			continue
		}
		lines := strings.Split(string(k.PTX), "\n")
		first, last := -1, len(lines)
		for i, l := range lines {
			if strings.Contains(l, ".entry "+k.Entry+"(") {
				first = i + 1
			} else if first > 0 && i+1 > first && strings.Contains(l, ".entry ") {
				last = i
				break
			}
		}
		if first < 0 {
			t.Fatalf("%s: no .entry %s in %s", k.Name, k.Entry, k.PTXFile)
		}
		seen := map[string]bool{}
		for _, u := range k.Unreachable {
			key := fmt.Sprint(u.Line, u.Direction)
			switch {
			case seen[key]:
				t.Errorf("%s: line %d %s listed twice", k.Name, u.Line, u.Direction)
			case u.Direction != "taken" && u.Direction != "not taken":
				t.Errorf("%s: line %d: direction %q", k.Name, u.Line, u.Direction)
			case u.Reason == "":
				t.Errorf("%s: line %d %s has no reason", k.Name, u.Line, u.Direction)
			case u.Line < first || u.Line > last:
				t.Errorf("%s: line %d is outside entry %s (lines %d–%d)", k.Name, u.Line, k.Entry, first, last)
			default:
				if l := strings.TrimSpace(lines[u.Line-1]); !strings.HasPrefix(l, "@") || !strings.Contains(l, " bra") {
					t.Errorf("%s: line %d is no conditional branch: %q", k.Name, u.Line, l)
				}
			}
			seen[key] = true
		}
	}
}
