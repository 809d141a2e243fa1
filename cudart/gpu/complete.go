//go:build cuda

package gpu

import (
	"runtime"
	"sync"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
)

// completer waits for the ends of batches outside sem. A batch that queued
// work records an event behind it (behind, holding sem) and hands it over;
// one goroutine per Backend, locked to its OS thread with the context
// current, waits for the events in the order they were recorded — the
// order the legacy default stream completes them in — and tells each
// batch's caller. So one thread waits for the device however many batches
// are in flight, and the callers sleep on a channel instead of each
// spinning in the driver.
type completer struct {
	q    chan wait // nil until the first batch needs it; owned by whoever holds sem
	wg   sync.WaitGroup
	mu   sync.Mutex
	free []cuEvent // recorded and waited for: reusable
}

// wait is a batch's event and where its result goes.
type wait struct {
	ev   cuEvent
	done chan Result
}

// completerQueue bounds the batches waited for at once; a batch beyond it
// waits, holding sem, for the oldest to be handed on.
const completerQueue = 256

// behind records an event behind everything queued so far and hands it to
// the completer, starting it on first use; the result arrives on the
// returned channel. Only calls holding sem call it.
func (b *Backend) behind() (chan Result, error) {
	c := &b.comp
	if c.q == nil {
		c.q = make(chan wait, completerQueue)
		c.wg.Add(1)
		go b.complete(c.q)
	}
	c.mu.Lock()
	var ev cuEvent
	have := len(c.free) > 0
	if have {
		ev = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
	}
	c.mu.Unlock()
	if !have {
		var r Result
		if ev, r = eventCreateUntimed(); r != success {
			return nil, b.check("cuEventCreate", r)
		}
	}
	if err := b.check("cuEventRecord", eventRecord(ev)); err != nil {
		c.put(ev)
		return nil, err
	}
	done := make(chan Result, 1)
	c.q <- wait{ev, done}
	return done, nil
}

func (c *completer) put(ev cuEvent) {
	c.mu.Lock()
	c.free = append(c.free, ev)
	c.mu.Unlock()
}

// complete waits for each event handed over until q is closed (by Close,
// holding sem, so no batch adds to it after). The events go back to the
// pool; the context's destruction frees them.
func (b *Backend) complete(q <-chan wait) {
	defer b.comp.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := ctxSetCurrent(b.ctx)
	for w := range q {
		if r == success {
			w.done <- eventSynchronize(w.ev)
		} else {
			w.done <- r
		}
		b.comp.put(w.ev)
	}
}

// awaited returns the result of the batch whose event is on done, as
// Batch's error. After Close it waits up to Config.CloseWait (Close
// waits for the completer before destroying the context, so a batch
// that completes is still told), then gives up as Close does.
func (b *Backend) awaited(done chan Result) error {
	select {
	case r := <-done:
		return b.check("cuEventSynchronize", r)
	case <-b.quit:
	}
	t := time.NewTimer(b.closeWait)
	defer t.Stop()
	select {
	case r := <-done:
		return b.check("cuEventSynchronize", r)
	case <-t.C:
		return cudart.Errorf(cudart.ErrTimeout, "the device had not completed the batch %v after Close (a launch that does not complete?)", b.closeWait)
	}
}

// stop ends the completer once its waits are done: Close calls it
// holding sem for good, before destroying the context.
func (c *completer) stop() {
	if c.q != nil {
		close(c.q)
		c.wg.Wait()
	}
}
