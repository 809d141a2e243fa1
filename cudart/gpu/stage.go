//go:build cuda

package gpu

import (
	"unsafe"
)

// stage is page-locked host memory (cuMemHostAlloc) that copies between the
// host and the device go through. From pageable Go memory the driver copies
// through a bounce buffer of its own, in pieces, and every copy waits for
// it; from page-locked memory the copy engine reads and writes the host
// memory directly. Inside Batch an upload is only queued
// (cuMemcpyHtoDAsync): its bytes stay in the stage, after those of the
// uploads queued before it, until the stream has passed it, so a checked
// launch's uploads, its kernels and the copy back wait for the device once.
//
//	buf: | queued uploads (used bytes) | free |
//
// used returns to 0 at every point where the stream is known to be idle (a
// synchronous copy returned, or cuCtxSynchronize). The stage grows (to at
// most stageMax) when a copy does not fit, after waiting for the queued
// uploads; copies larger than stageMax, or every copy once page-locked
// memory could not be had, go directly from Go memory as before.
type stage struct {
	p      unsafe.Pointer
	buf    []byte
	used   int
	failed bool // cuMemHostAlloc failed once: copy directly from now on
}

const (
	htod     = "cuMemcpyHtoD(%#x, %d bytes)"
	dtoh     = "cuMemcpyDtoH(%#x, %d bytes)"
	stageMin = 1 << 20
	stageMax = 64 << 20
)

// queue marks n bytes at offset at, just handed to a queued copy, in use
// until the stream is known to have passed them (rounded up to 256 bytes
// for the next copy's alignment).
func (s *stage) queue(at, n int) {
	s.used = min(at+(n+255)&^255, len(s.buf))
}

// drained marks the stage free: the stream is idle, so no queued copy
// reads its bytes any more.
func (s *stage) drained() { s.used = 0 }

// free releases the page-locked memory. The context must be current.
func (s *stage) free() {
	if s.p != nil {
		memFreeHost(s.p)
	}
	s.p, s.buf, s.used = nil, nil, 0
}

// staged returns n bytes of the stage at offset used (the first byte past
// the queued copies), growing the stage first when they do not fit, or
// ok=false when the copy should go directly. Only calls holding sem call it.
func (b *Backend) staged(n int) (buf []byte, p unsafe.Pointer, ok bool, err error) {
	s := &b.stage
	if n > stageMax || s.failed {
		return nil, nil, false, nil
	}
	at := s.used
	if at+n > len(s.buf) {
		if s.used > 0 { // wait for the queued copies: their bytes are about to be reused or freed
			if err := b.settle(); err != nil {
				return nil, nil, false, err
			}
			at = 0
		}
		if n > len(s.buf) {
			size := min(max(stageMin, 2*len(s.buf), n), stageMax)
			s.free()
			q, r := memHostAlloc(size)
			if r != success {
				if err := b.checkf(r, "cuMemHostAlloc(%d bytes)", size); Fault() != nil {
					return nil, nil, false, err
				}
				s.failed = true
				return nil, nil, false, nil
			}
			s.p, s.buf = q, unsafe.Slice((*byte)(q), size)
		}
	}
	return s.buf[at : at+n], unsafe.Add(s.p, at), true, nil
}

// upload copies src to dst: queued when the backend only queues (inside
// Batch, or while Elapsed queues), else synchronously. From memory Pinned
// handed out it goes directly (its owner keeps it unchanged until Batch
// returns, after the batch's wait; not while Elapsed queues, as
// nothing waits then), else through the stage.
func (b *Backend) upload(dst uint64, src []byte) error {
	queue := b.batching || b.async.Load() > 0
	p, direct := b.pinned(src)
	if !direct || b.async.Load() > 0 {
		// After the queued copies' bytes even when copying synchronously:
		// the stream may not have read them yet.
		buf, sp, ok, err := b.staged(len(src))
		if err != nil {
			return err
		}
		if !ok {
			return b.checkf(memcpyHtoD(dst, src), htod, dst, len(src))
		}
		copy(buf, src)
		p = sp
		if queue {
			b.stage.queue(b.stage.used, len(src))
		}
	}
	if queue {
		return b.checkf(memcpyHtoDAsync(dst, p, len(src)), htod, dst, len(src))
	}
	r := memcpyHtoDPtr(dst, p, len(src))
	if r == success { // synchronous, after everything queued before it
		b.idle()
	}
	return b.checkf(r, htod, dst, len(src))
}

// download copies len(dst) bytes from src, after all the work queued before
// it: directly into memory Pinned handed out (inside Batch only queued:
// the bytes are there once Batch has returned), else through the stage,
// waiting for it.
func (b *Backend) download(dst []byte, src uint64) error {
	p, direct := b.pinned(dst)
	if direct && b.batching {
		return b.checkf(memcpyDtoHAsync(p, src, len(dst)), dtoh, src, len(dst))
	}
	var buf []byte
	if !direct {
		// After the queued copies' bytes: the stream may not have read
		// them yet.
		var ok bool
		var err error
		if buf, p, ok, err = b.staged(len(dst)); err != nil {
			return err
		}
		if !ok {
			return b.checkf(memcpyDtoH(dst, src), dtoh, src, len(dst))
		}
	}
	if err := b.checkf(memcpyDtoHPtr(p, src, len(dst)), dtoh, src, len(dst)); err != nil {
		return err
	}
	copy(dst, buf) // none when direct
	b.idle()       // synchronous, after everything queued before it
	return nil
}
