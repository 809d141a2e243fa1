//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// lockTimeout bounds the wait for a lock file another process holds.
const lockTimeout = 2 * time.Minute

// lockFile takes a lock by creating name exclusively, polling while another
// process holds it; release removes it. A process that dies holding the lock
// leaves the file behind: after lockTimeout the error names it for removal.
func lockFile(name string) (release func(), err error) {
	deadline := time.Now().Add(lockTimeout)
	wait := time.Millisecond
	for {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(name) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: held for over %v; remove it if no ptxprop process is running", name, lockTimeout)
		}
		time.Sleep(wait)
		wait = min(2*wait, 100*time.Millisecond)
	}
}
