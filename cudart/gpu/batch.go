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
// Launches and uploads inside a batch are only queued; the copies back wait
// for them (and report a kernel fault), and the batch ends with one
// cuCtxSynchronize, so Batch still returns after all its work has completed.
func (b *Backend) Batch(f func(cudart.Backend) error) error {
	return b.do(func() error {
		b.batching = true
		err := f(onThread{b})
		b.batching = false
		if b.async.Load() > 0 {
			return err
		}
		// Also after a failure: the uploads queued from the stage must be
		// done before its bytes are reused.
		serr := b.settle()
		if err != nil {
			return err
		}
		return serr
	})
}

// settle waits for the device; the stage is then free. After a failed
// wait it is left as it was.
func (b *Backend) settle() error {
	if err := b.check("cuCtxSynchronize", ctxSynchronize()); err != nil {
		return err
	}
	b.stage.drained()
	return nil
}

// onThread is the Backend that Batch hands to its function: fills and
// device-to-device copies, as the Backend declares them, run directly.
type onThread struct{ b *Backend }

// Capabilities are those of a Device's calls inside a batch.
func (t onThread) Capabilities() cudart.Caps { return cudart.CapFill | cudart.CapCopyDtoD }

func direct(f func() error) error { return f() }

func (t onThread) Info() cudart.Info { return t.b.info }
func (t onThread) LoadModule(name string, ptx []byte) (cudart.ModuleHandle, error) {
	return t.b.loadModule(direct, name, ptx)
}
func (t onThread) UnloadModule(h cudart.ModuleHandle) error { return t.b.unloadModule(direct, h) }
func (t onThread) Alloc(n int) (uint64, error)              { return t.b.alloc(direct, n) }
func (t onThread) Free(addr uint64) error                   { return t.b.free(direct, addr) }
func (t onThread) CopyHtoD(dst uint64, src []byte) error    { return t.b.copyHtoD(direct, dst, src) }
func (t onThread) CopyDtoH(dst []byte, src uint64) error    { return t.b.copyDtoH(direct, dst, src) }
func (t onThread) CopyDtoD(dst, src uint64, n int) error    { return t.b.copyDtoD(direct, dst, src, n) }
func (t onThread) Fill32(addr uint64, words int, v uint32) error {
	return t.b.fill32(direct, addr, words, v)
}
func (t onThread) Launch(h cudart.ModuleHandle, entry string, g cudart.Geometry, params [][]byte) error {
	return t.b.launch(direct, h, entry, g, params)
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
