//go:build cuda

package gpu

import "github.com/ptxprop/ptxprop/cudart"

// Grouped batches (Config.Combine).
//
// A checked launch waits for the device once, in its copy back; with many
// goroutines checking side by side, each waits in turn for a device that
// does a few microseconds of work behind tens of microseconds of latency.
// With Combine, Batch queues its function, and whichever caller takes sem
// runs every queued function — its own and those of the callers that
// arrived meanwhile — then waits for the device once for the whole group
// and delivers the copies back (cudart.LaterReader: the Device's verify
// pass brings its verdicts back that way). A caller whose function another
// caller ran only waits for its group to end.
//
// A kernel fault is reported by the one wait, so every batch of the group
// gets it (a fault leaves CUDA unusable in the process anyway; see Fault).

var (
	_ cudart.LaterReader = laterThread{}
	_ cudart.Filler      = laterThread{}
)

// batchReq is a batch waiting to run in a group.
type batchReq struct {
	f    func(cudart.Backend) error
	err  error
	done chan struct{} // closed once the group that ran f has ended
}

// laterRead is a copy back queued in the stage, at offset at, for dst.
type laterRead struct {
	dst []byte
	at  int
}

// batchGrouped queues f and returns its error once a group has run it.
func (b *Backend) batchGrouped(f func(cudart.Backend) error) error {
	q := &batchReq{f: f, done: make(chan struct{})}
	b.pendMu.Lock()
	b.pending = append(b.pending, q)
	b.pendMu.Unlock()
	b.waiting.Add(1) // for holding: a caller is waiting for sem
	defer b.waiting.Add(-1)
	for {
		select {
		case <-q.done:
			return q.err
		case b.sem <- struct{}{}:
			b.waiting.Add(-1) // not waiting while it runs the group
			b.runGroup()
			b.waiting.Add(1)
		case <-b.quit:
			b.pendMu.Lock()
			taken := true
			for i, p := range b.pending {
				if p == q {
					b.pending = append(b.pending[:i], b.pending[i+1:]...)
					taken = false
					break
				}
			}
			b.pendMu.Unlock()
			if !taken {
				return cudart.ErrClosed
			}
			<-q.done // a group is running it
			return q.err
		}
	}
}

// runGroup runs every queued batch, holding sem (which it gives back), then
// waits for the device once and delivers the copies back.
func (b *Backend) runGroup() {
	b.pendMu.Lock()
	group := b.pending
	b.pending = nil
	b.pendMu.Unlock()
	if len(group) == 0 {
		<-b.sem
		return
	}
	err := b.holding(func() error {
		for _, q := range group {
			b.batching = true
			q.err = call(func() error { return q.f(laterThread{onThread{b}}) })
			b.batching = false
		}
		if b.async.Load() > 0 && len(b.reads) == 0 {
			return nil // Elapsed is queueing: nothing to wait for
		}
		return b.settle()
	})
	for _, q := range group {
		if q.err == nil {
			q.err = err
		}
		close(q.done)
	}
}

// settle waits for the device, then delivers the copies back and frees the
// stage. After a failed wait the copies back are dropped: their bytes are
// not known to have arrived.
func (b *Backend) settle() error {
	err := b.check("cuCtxSynchronize", ctxSynchronize())
	if err != nil {
		b.reads = nil
		return err
	}
	b.deliver()
	return nil
}

// deliver copies the queued copies back from the stage to their
// destinations; the stream must have passed them. The stage is then free.
func (b *Backend) deliver() {
	for _, r := range b.reads {
		copy(r.dst, b.stage.buf[r.at:r.at+len(r.dst)])
	}
	b.reads = nil
	b.stage.used = 0
}

// laterThread is the Backend that a grouped batch's function gets: an
// onThread whose copies back can wait for the group's end.
type laterThread struct{ onThread }

// CopyDtoHLater queues a copy of len(dst) bytes from src into the stage;
// the group's end delivers it. A copy too large for the stage is made at
// once.
func (t laterThread) CopyDtoHLater(dst []byte, src uint64) error {
	b := t.b
	if len(dst) == 0 {
		return nil
	}
	if err := b.Usable(); err != nil {
		return err
	}
	if p, ok := b.pinned(dst); ok && b.async.Load() == 0 { // directly into it; the group's wait completes it
		return b.checkf(memcpyDtoHAsync(p, src, len(dst)), dtoh, src, len(dst))
	}
	_, p, ok, err := b.staged(len(dst))
	if err != nil {
		return err
	}
	if !ok {
		return b.download(dst, src)
	}
	at := b.stage.used
	if err := b.checkf(memcpyDtoHAsync(p, src, len(dst)), dtoh, src, len(dst)); err != nil {
		return err
	}
	b.reads = append(b.reads, laterRead{dst: dst, at: at})
	b.stage.queue(at, len(dst))
	return nil
}
