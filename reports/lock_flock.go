//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package reports

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) on name, creating it if needed. The
// kernel releases the lock when the process dies, so a crash leaves no stale
// lock; the file itself is left in place (removing it would race).
func lockFile(name string) (release func(), err error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return func() {
		_ = syscall.Flock(fd, syscall.LOCK_UN)
		f.Close()
	}, nil
}
