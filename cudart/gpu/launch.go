//go:build cuda

package gpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
)

// Launch runs entry of m with params, each passed to cuLaunchKernel at its
// own size (1 to 8 bytes, as cudart.Backend specifies; gorgonia.org/cu's
// launch cannot pass larger ones, see launchKernel), and waits for the kernel
// to complete (cuCtxSynchronize), so a kernel fault is reported by the launch
// that caused it. During Elapsed the wait is skipped and the launch is only
// queued.
//
// When the driver reports kernel parameter sizes (cuFuncGetParamInfo, CUDA
// 12.4+ drivers), a params list that does not match the kernel's signature in
// count or in any size is refused with cudart.ErrInvalid before launching.
// Dynamic shared memory beyond the default per-block limit is opted into
// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) on demand.
func (b *Backend) Launch(h cudart.ModuleHandle, entry string, g cudart.Geometry, params [][]byte) error {
	return b.launch(b.do, h, entry, g, params)
}

func (b *Backend) launch(run runner, h cudart.ModuleHandle, entry string, g cudart.Geometry, params [][]byte) error {
	m, err := b.module(h)
	if err != nil {
		return opErr("launch", entry, err)
	}
	for i, p := range params {
		if len(p) == 0 || len(p) > maxParamBytes {
			return opErr("launch", entry, cudart.Errorf(cudart.ErrInvalid, "parameter %d is %d bytes (1 to %d)", i, len(p), maxParamBytes))
		}
	}
	if g.SharedBytes < 0 {
		return opErr("launch", entry, cudart.Errorf(cudart.ErrInvalid, "bad geometry %v", g))
	}
	grid, block := dims(g.Grid), dims(g.Block)
	return opErr("launch", entry, run(func() error {
		if m.unloaded {
			return cudart.Errorf(cudart.ErrInvalid, "module %s was unloaded", m.name)
		}
		if err := b.Usable(); err != nil {
			return err
		}
		f, err := b.function(m, entry)
		if err != nil {
			return err
		}
		if err := f.checkParams(params); err != nil {
			return err
		}
		if g.SharedBytes > f.maxShared {
			r := funcSetMaxDynamicShared(f.h, g.SharedBytes)
			if err := b.checkf(r, "cuFuncSetAttribute(max dynamic shared memory, %d bytes)", g.SharedBytes); err != nil {
				return err
			}
			f.maxShared = g.SharedBytes
		}
		if err := b.checkf(launchKernel(f.h, grid, block, g.SharedBytes, params), "cuLaunchKernel(%v)", g); err != nil {
			return err
		}
		if b.async.Load() > 0 || b.batching {
			return nil
		}
		return b.check("cuCtxSynchronize", ctxSynchronize())
	}))
}

// dims returns a Dim3 with zero extents read as 1.
func dims(d cudart.Dim3) [3]uint32 {
	out := [3]uint32{d.X, d.Y, d.Z}
	for i := range out {
		if out[i] == 0 {
			out[i] = 1
		}
	}
	return out
}

// function looks entry up in m (once). Only calls holding sem call it.
func (b *Backend) function(m *module, entry string) (*function, error) {
	if f, ok := m.funcs[entry]; ok {
		return f, nil
	}
	h, r := moduleFunction(m.h, entry)
	if r != success {
		err := b.check("cuModuleGetFunction", r)
		if r == ErrNotFound {
			return nil, fmt.Errorf("no entry %q in module %s: %w", entry, m.name, err)
		}
		return nil, err
	}
	f := &function{h: h}
	if n, ok := m.nparams[entry]; ok && hasParamInfo() {
		f.params = paramSizes(h, n)
	}
	m.funcs[entry] = f
	return f, nil
}

// paramSizes returns the size of each of the n parameters of h that its PTX
// declares, asking the driver for those indices only, or nil when the
// driver refuses one (then there is nothing to check against).
func paramSizes(h cuFunction, n int) []int {
	sizes := make([]int, 0, n)
	for i := 0; i < n; i++ {
		_, size, r := funcParamInfo(h, i)
		if r != success {
			return nil
		}
		sizes = append(sizes, size)
	}
	return sizes
}

// ParamSizes returns the parameter sizes the driver reports for entry of m,
// or nil when it cannot tell (drivers before CUDA 12.4).
func (b *Backend) ParamSizes(h cudart.ModuleHandle, entry string) ([]int, error) {
	m, err := b.module(h)
	if err != nil {
		return nil, opErr("params", entry, err)
	}
	var sizes []int
	err = b.do(func() error {
		if err := b.Usable(); err != nil {
			return err
		}
		f, err := b.function(m, entry)
		if err == nil {
			sizes = append([]int(nil), f.params...)
		}
		return err
	})
	return sizes, opErr("params", entry, err)
}

func (f *function) checkParams(params [][]byte) error {
	if f.params == nil {
		return nil
	}
	if len(params) != len(f.params) {
		return cudart.Errorf(cudart.ErrInvalid, "the kernel takes %d parameters (sizes %v), got %d", len(f.params), f.params, len(params))
	}
	for i, p := range params {
		if len(p) != f.params[i] {
			return cudart.Errorf(cudart.ErrInvalid, "parameter %d is %d bytes, the kernel expects %d (sizes %v)", i, len(p), f.params[i], f.params)
		}
	}
	return nil
}

// Elapsed returns the device time of iters calls of launch, measured with
// CUDA events. The launches are only queued meanwhile (every Launch on this
// backend skips its synchronisation), behind a hold kernel that spins on the
// device's global timer, so the queue fills while the device waits and the
// events time the kernels back to back, not the host's gaps between
// launches (which, for a small kernel, are longer than the kernel). If
// queueing took longer than the hold, the measurement is repeated with a
// hold twice as long as the queueing took (up to three tries, holds of at
// most 2 s). A kernel fault during the loop is reported when the stop event
// is waited for. launch's own error stops the loop and is returned as it is.
func (b *Backend) Elapsed(iters int, launch func() error) (time.Duration, error) {
	if iters <= 0 {
		return 0, opErr("elapsed", "", cudart.Errorf(cudart.ErrInvalid, "%d iterations", iters))
	}
	hold := 2 * time.Millisecond
	for try := 0; ; try++ {
		el, queued, err := b.elapsedOnce(iters, launch, hold)
		if err != nil || queued < hold || try == 2 || hold >= 2*time.Second {
			return el, err
		}
		hold = min(2*queued, 2*time.Second)
	}
}

// elapsedOnce queues the hold, the start event, the launches and the stop
// event, and returns the device time between the events and the host time
// the queueing took.
func (b *Backend) elapsedOnce(iters int, launch func() error, hold time.Duration) (time.Duration, time.Duration, error) {
	var start, stop cuEvent
	err := b.do(func() error {
		if err := b.Usable(); err != nil {
			return err
		}
		if err := b.launchHold(hold); err != nil {
			return err
		}
		var r Result
		if start, r = eventCreate(); r != success {
			return b.check("cuEventCreate", r)
		}
		if stop, r = eventCreate(); r != success {
			eventDestroy(start)
			return b.check("cuEventCreate", r)
		}
		if r = eventRecord(start); r != success {
			eventDestroy(start)
			eventDestroy(stop)
			return b.check("cuEventRecord", r)
		}
		return nil
	})
	if err != nil {
		return 0, 0, opErr("elapsed", "", err)
	}
	t0 := time.Now()
	lerr := b.queue(iters, launch)
	queued := time.Since(t0)
	var ms float64
	err = b.do(func() error {
		defer func() {
			eventDestroy(start)
			eventDestroy(stop)
		}()
		if lerr != nil {
			ctxSynchronize() // drain what was queued; its fault, if any, was sticky and is reported next time
			return nil
		}
		if err := b.check("cuEventRecord", eventRecord(stop)); err != nil {
			return err
		}
		if err := b.check("cuEventSynchronize", eventSynchronize(stop)); err != nil {
			return err
		}
		var r Result
		ms, r = eventElapsed(start, stop)
		return b.check("cuEventElapsedTime", r)
	})
	if lerr != nil {
		return 0, queued, lerr
	}
	if err != nil {
		return 0, queued, opErr("elapsed", "", err)
	}
	return time.Duration(ms * float64(time.Millisecond)), queued, nil
}

// holdPTX is the hold kernel: one thread spinning until the device's global
// timer (nanoseconds) has advanced by its parameter.
const holdPTX = `.version 7.0
.target sm_70
.address_size 64

.visible .entry ptxprop_hold(.param .u64 ns)
{
	.reg .pred %p;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [ns];
	mov.u64 %rd2, %globaltimer;
	add.s64 %rd3, %rd2, %rd1;
$L_spin:
	mov.u64 %rd4, %globaltimer;
	setp.lt.u64 %p, %rd4, %rd3;
	@%p bra $L_spin;
	ret;
}
`

// launchHold queues the hold kernel for d, loading it on first use. It runs
// inside a do.
func (b *Backend) launchHold(d time.Duration) error {
	if b.hold == nil {
		h, elog, ilog, r := moduleLoad([]byte(holdPTX))
		if r != success {
			_ = b.check("cuModuleLoadDataEx", r)
			return &JITError{Code: r, Log: elog + ilog}
		}
		b.hold = &module{owner: b, name: "hold", h: h, funcs: map[string]*function{}}
	}
	f, err := b.function(b.hold, "ptxprop_hold")
	if err != nil {
		return err
	}
	ns := make([]byte, 8)
	binary.LittleEndian.PutUint64(ns, uint64(d.Nanoseconds()))
	return b.check("cuLaunchKernel(hold)", launchKernel(f.h, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, [][]byte{ns}))
}

// queue calls launch iters times with launches made asynchronous.
func (b *Backend) queue(iters int, launch func() error) error {
	b.async.Add(1)
	defer b.async.Add(-1)
	for i := 0; i < iters; i++ {
		if err := launch(); err != nil {
			return err
		}
	}
	return nil
}

// measureCopy measures device-to-device copy bandwidth (bytes read plus
// bytes written per second, best of five timed copies after one warm-up,
// from a source set beforehand),
// with copies of size bytes, or a quarter of that while memory runs out. It
// runs inside a do and returns the size it used.
func measureCopy(size int) (float64, int, error) {
	var err error
	for s := size; s >= 1<<20 || s == size; s /= 4 {
		var bw float64
		if bw, err = measureCopyOf(s); err == nil {
			return bw, s, nil
		}
		if !errors.Is(err, ErrOutOfMemory) {
			break
		}
	}
	return 0, 0, fmt.Errorf("copy bandwidth: %w", err)
}

func measureCopyOf(size int) (float64, error) {
	src, r := memAlloc(size)
	if r != success {
		return 0, fmt.Errorf("cuMemAlloc(%d): %w", size, r)
	}
	defer memFree(src)
	dst, r := memAlloc(size)
	if r != success {
		return 0, fmt.Errorf("cuMemAlloc(%d): %w", size, r)
	}
	defer memFree(dst)
	// The source is written first: copying never-written memory is what
	// compute-sanitizer's initcheck reports, once per byte range.
	if r := memsetD32(src, 0x3f800000, size/4); r != success {
		return 0, fmt.Errorf("cuMemsetD32: %w", r)
	}
	start, r := eventCreate()
	if r != success {
		return 0, fmt.Errorf("cuEventCreate: %w", r)
	}
	defer eventDestroy(start)
	stop, r := eventCreate()
	if r != success {
		return 0, fmt.Errorf("cuEventCreate: %w", r)
	}
	defer eventDestroy(stop)
	best := math.Inf(1)
	for i := 0; i < 6; i++ {
		for _, step := range []struct {
			name string
			r    func() Result
		}{
			{"cuEventRecord", func() Result { return eventRecord(start) }},
			{"cuMemcpyDtoD", func() Result { return memcpyDtoD(dst, src, size) }},
			{"cuEventRecord", func() Result { return eventRecord(stop) }},
			{"cuEventSynchronize", func() Result { return eventSynchronize(stop) }},
		} {
			if r := step.r(); r != success {
				return 0, fmt.Errorf("%s: %w", step.name, r)
			}
		}
		ms, r := eventElapsed(start, stop)
		if r != success {
			return 0, fmt.Errorf("cuEventElapsedTime: %w", r)
		}
		if i > 0 && ms < best { // the first copy warms up
			best = ms
		}
	}
	if best <= 0 {
		return 0, fmt.Errorf("copy of %d bytes timed at %v ms", size, best)
	}
	return 2 * float64(size) / (best * 1e-3), nil
}
