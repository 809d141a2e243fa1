//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) on name, creating it if needed, and
// removes it on release, so no lock file outlives an Update. The kernel
// releases the lock when the process dies, so a crash leaves no stale lock,
// only at worst an empty file that the next Update takes over and removes.
//
// Removing a lock file races with a process that opened it before the
// removal and is waiting for the lock: it would then hold a lock on a file
// no longer at name while a third process creates and locks a new one. So
// whoever gets the lock checks that the file it locked is still the one at
// name, and starts over if not. The holder removes name before unlocking,
// so a lock on a file that is still at name is the only one.
func lockFile(name string) (release func(), err error) {
	for {
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
		held, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		now, err := os.Stat(name)
		switch {
		case err == nil && os.SameFile(held, now):
			return func() {
				_ = os.Remove(name)
				_ = syscall.Flock(fd, syscall.LOCK_UN)
				f.Close()
			}, nil
		case err == nil || errors.Is(err, fs.ErrNotExist):
			f.Close() // removed by the previous holder: try again
		default:
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
	}
}
