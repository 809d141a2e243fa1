//go:build cuda

package gpu

import (
	"gorgonia.org/cu"

	"github.com/ptxprop/ptxprop/cudart"
)

// runner runs a request: b.do takes sem and makes the context current;
// onThread's methods, already inside a do, run it directly.
type runner func(func() error) error

var (
	_ cudart.Batcher      = (*Backend)(nil)
	_ cudart.Filler       = (*Backend)(nil)
	_ cudart.Filler       = onThread{}
	_ cudart.DeviceCopier = (*Backend)(nil)
	_ cudart.DeviceCopier = onThread{}
)

// Batch runs f once inside one do, with a cudart.Backend whose methods make
// their driver calls directly: a Device's launch with its checks (fills,
// snapshots, the kernel, guard and input reads) takes sem and sets the
// context current once instead of once per driver call. The Backend given to f is valid
// only until f returns; its Close is refused.
//
// Launches, fills, device copies, uploads and copies back into memory that
// Pinned handed out are only queued inside a batch; a copy back into Go
// memory waits for everything queued before it (and reports a kernel
// fault). When f has queued work after its last wait, the batch records an
// event behind it, gives sem back, and waits for the event outside sem
// (see completer): the next caller queues its own batch meanwhile, so the
// device runs one batch while the host queues the next, instead of idling
// through every batch's round trips. Batch still returns only after all
// its work has completed, with the error of the kernel fault that work
// met, if any. After a failure inside f it waits inside sem
// (cuCtxSynchronize), as the queued uploads must be done before their
// bytes are reused.
func (b *Backend) Batch(f func(cudart.Backend) error) error {
	var done chan Result
	err := b.do(func() error {
		b.batching, b.queued = true, false
		err := f(onThread{b})
		b.batching = false
		if b.async.Load() > 0 {
			return err
		}
		if err != nil {
			_ = b.settle()
			return err
		}
		if !b.queued {
			return nil
		}
		d, err := b.behind()
		if err != nil {
			// No event to wait for: wait here; the work's own fault, if
			// any, is settle's error.
			return b.settle()
		}
		done = d
		return nil
	})
	if done == nil {
		return err
	}
	return b.awaited(done)
}

// settle waits for the device; the stage is then free. After a failed
// wait it is left as it was.
func (b *Backend) settle() error {
	if err := b.check("cuCtxSynchronize", ctxSynchronize()); err != nil {
		return err
	}
	b.idle()
	return nil
}

// idle records that the device has done everything queued so far (a
// synchronous copy returned, or cuCtxSynchronize): nothing queued reads
// the stage any more, and a batch ending now has nothing to wait for.
func (b *Backend) idle() {
	b.stage.drained()
	b.queued = false
}

// onThread is the Backend that Batch hands to its function: fills and
// device-to-device copies, as the Backend declares them, run directly.
type onThread struct{ b *Backend }

// Capabilities are those of a Device's calls inside a batch.
func (t onThread) Capabilities() cudart.Caps { return cudart.CapFill | cudart.CapCopyDtoD }

// run runs a call of the batch's function, already inside the batch's do.
// The call may queue work: the batch waits for it unless a synchronous
// copy (which calls idle) ends the batch.
func (t onThread) run(f func() error) error {
	t.b.queued = true
	return f()
}

func (t onThread) Info() cudart.Info { return t.b.info }
func (t onThread) LoadModule(name string, ptx []byte) (cudart.ModuleHandle, error) {
	return t.b.loadModule(t.run, name, ptx)
}
func (t onThread) UnloadModule(h cudart.ModuleHandle) error { return t.b.unloadModule(t.run, h) }
func (t onThread) Alloc(n int) (uint64, error)              { return t.b.alloc(t.run, n) }
func (t onThread) Free(addr uint64) error                   { return t.b.free(t.run, addr) }
func (t onThread) CopyHtoD(dst uint64, src []byte) error    { return t.b.copyHtoD(t.run, dst, src) }
func (t onThread) CopyDtoH(dst []byte, src uint64) error    { return t.b.copyDtoH(t.run, dst, src) }
func (t onThread) CopyDtoD(dst, src uint64, n int) error    { return t.b.copyDtoD(t.run, dst, src, n) }
func (t onThread) Fill32(addr uint64, words int, v uint32) error {
	return t.b.fill32(t.run, addr, words, v)
}
func (t onThread) Launch(h cudart.ModuleHandle, entry string, g cudart.Geometry, params [][]byte) error {
	return t.b.launch(t.run, h, entry, g, params)
}
func (t onThread) Close() error {
	return opErr("close", "gpu", cudart.Errorf(cudart.ErrInvalid, "Close inside Batch"))
}

// Fill32 sets words 32-bit words from addr to v with cuMemsetD32, with no
// host copy: how a Device writes its canaries and poison.
func (b *Backend) Fill32(addr uint64, words int, v uint32) error {
	return b.fill32(b.do, addr, words, v)
}

func (b *Backend) fill32(run runner, addr uint64, words int, v uint32) error {
	if words <= 0 {
		return nil
	}
	return opErr("fill", "", run(func() error {
		if err := b.Usable(); err != nil {
			return err
		}
		return b.checkf(resultOf(cu.MemsetD32(cu.DevicePtr(addr), v, int64(words))), "cuMemsetD32(%#x, %#x, %d words)", addr, v, words)
	}))
}

// CopyDtoD copies n bytes of device memory from src to dst: how a Device
// snapshots a large input to verify it on the device.
func (b *Backend) CopyDtoD(dst, src uint64, n int) error { return b.copyDtoD(b.do, dst, src, n) }

func (b *Backend) copyDtoD(run runner, dst, src uint64, n int) error {
	if n <= 0 {
		return nil
	}
	return opErr("copy", "", run(func() error {
		if err := b.Usable(); err != nil {
			return err
		}
		return b.checkf(memcpyDtoD(dst, src, n), "cuMemcpyDtoD(%#x, %#x, %d bytes)", dst, src, n)
	}))
}
