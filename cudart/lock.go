package cudart

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// gate is a Device's lock and what goes through it: the goroutines waiting
// for it, the launches in flight without it, the calls at the backend.
type gate struct {
	mu       sync.Mutex
	waiters  atomic.Int32 // goroutines waiting in lock (see unlock)
	lockedAt time.Time    // when mu was last taken (Stats.LockHeld)
	idle     sync.Cond    // on mu: signalled when a launch in flight ends
	// flights counts the launches in flight without the lock; active the
	// calls at the backend (flights included), busy since busySince.
	flights, active int
	busySince       time.Time
}

// lock takes the Device's lock, counting the time spent waiting for it.
func (d *device) lock() {
	if d.mu.TryLock() {
		d.lockedAt = time.Now()
		return
	}
	start := time.Now()
	d.waiters.Add(1)
	d.mu.Lock()
	d.waiters.Add(-1)
	d.lockedAt = time.Now()
	d.stats.LockWait += d.lockedAt.Sub(start)
}

// waitIdle waits on d.idle (which gives the lock up meanwhile): the wait
// does not count as LockHeld.
func (d *device) waitIdle() {
	d.stats.LockHeld += time.Since(d.lockedAt)
	d.idle.Wait()
	d.lockedAt = time.Now()
}

// unlock unlocks d.mu and, when a goroutine waits for it, yields the
// processor once. Unlocking readies the waiter next in line on this
// goroutine's P, where it stays until this goroutine blocks or is
// preempted unless an idle P steals it; while checks keep every P busy with
// their CPU work, nothing does, and the waiter (often on its way to the
// device) loses a time slice. runtime.Gosched runs it at once.
func (d *device) unlock() {
	d.stats.LockHeld += time.Since(d.lockedAt)
	d.mu.Unlock()
	if d.waiters.Load() > 0 {
		runtime.Gosched()
	}
}

// enter and leave bracket a call at the backend, for Stats' Handoffs and
// Busy (the union of the calls' intervals). Callers hold d.mu.
func (d *device) enter() {
	if d.active == 0 {
		d.busySince = time.Now()
	}
	d.active++
	d.stats.Handoffs++
}

func (d *device) leave() {
	if d.active--; d.active == 0 {
		d.stats.Busy += time.Since(d.busySince)
	}
}
