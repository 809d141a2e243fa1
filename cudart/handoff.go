package cudart

import "github.com/ptxprop/ptxprop/cudart/internal/staging"

// Hand-offs: every call that reaches the backend makes the pending stores
// first, in one batch where the backend batches.

// exec runs f against the backend in one hand-off where the backend batches
// calls, after making the pending stores. Callers hold d.mu; f must not
// touch the device's state (under the watchdog it may outlive the call).
func (d *device) exec(f func(Backend) error) error {
	d.enter()
	err := d.handoff(f)()
	d.leave()
	return err
}

// batch returns the call that runs f in one hand-off, without the pending
// stores: a launch checked on the device, whose own pending stores its
// verify pass makes.
func (d *device) batch(f func(Backend) error) func() error {
	if d.caps.Has(CapBatch) {
		bb := d.b.(Batcher)
		return func() error { return bb.Batch(f) }
	}
	return func() error { return f(d.b) }
}

// handoff returns the call exec makes, taking the pending stores with it:
// the watchdog runs it on another goroutine, which must not touch the
// device.
func (d *device) handoff(f func(Backend) error) func() error {
	stores := d.stores.TakeAll()
	fill := d.caps.Has(CapFill)
	run := d.batch(func(b Backend) error {
		for _, s := range stores {
			if err := d.make(b, s, fill); err != nil {
				return err
			}
		}
		return f(b)
	})
	// The Writes' data go back once the batch has ended (the backend may
	// copy from them until then), by whoever ran it: under the watchdog a
	// call that timed out may still be running.
	return func() error {
		err := run()
		for _, s := range stores {
			s.Ref.Release()
		}
		return err
	}
}

// make makes one pending store on b: a pattern with Fill32 where the
// backend fills, else a copy.
func (d *device) make(b Backend, s staging.Store, fill bool) error {
	if fill && s.Raw == nil {
		f, ok := b.(Filler)
		if !ok {
			return Errorf(ErrInvalid, "the batch of backend %s declares fill without Fill32", d.b.Info().Backend)
		}
		return f.Fill32(s.Addr, s.Words, s.V)
	}
	return b.CopyHtoD(s.Addr, s.Bytes())
}
