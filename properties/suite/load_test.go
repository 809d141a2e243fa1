package suite

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
)

// TestLoadLines: the end-of-run lines name the host's CPU share and, for a
// backend that has one, the share its one-at-a-time section was held.
func TestLoadLines(t *testing.T) {
	s := cudart.Stats{Launches: 10, Handoffs: 20, Busy: 4 * time.Second, LockWait: time.Second}
	if got := DeviceLoad(s, 0, 10*time.Second); strings.Contains(got, "one-at-a-time") || !strings.Contains(got, "busy 4s = 40% of 10s") {
		t.Errorf("without a section: %q", got)
	}
	if got := DeviceLoad(s, 5*time.Second, 10*time.Second); !strings.HasSuffix(got, "; one-at-a-time section held 5s = 50%") {
		t.Errorf("with a section held 5s of 10s: %q", got)
	}
	if got := HostLoad(8*time.Second, 2, 10*time.Second); got != "host: 8s of CPU = 40% of 2 cores over 10s" {
		t.Errorf("host load: %q", got)
	}
	if runtime.GOOS == "linux" && ProcessCPU() <= 0 {
		t.Error("no CPU time read for this process")
	}
}
