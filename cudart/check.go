package cudart

// Checking a launch's buffers.
//
// A Device has one checker, chosen once from its backend's capabilities
// (checkerFor): a hostChecker, which reads each buffer's guard bands and
// each input back to the host around the kernel, or a deviceChecker
// (devcheck.go), which checks large buffers on the device with the verify
// kernel and brings everything back in one copy. Each launch gets a
// launchCheck from the checker's plan; Launch runs its steps around the
// kernel in the launch's one hand-off.

// checker checks a Device's launches.
type checker interface {
	// plan prepares l's checks, under the Device's lock, taking the pending
	// stores (and the quarantined buffers) it makes and checks itself.
	plan(l *launch) (launchCheck, error)
	// onDevice reports whether lb's contents, an input, are verified on
	// the device (so prepare takes no host snapshot of it).
	onDevice(lb *launchBuf, opts Options) bool
	// retire offers the checker a freed buffer whose guard bands are still
	// to be checked: it returns true if it checks them later and pools the
	// memory then (Free is done), false if Free must check them now.
	retire(buf *buffer) bool
	// close checks what the checker still holds and returns the device
	// memory it kept, for Close to free.
	close() ([]uint64, error)
	// unload releases the modules the checker loaded.
	unload() error
}

// launchCheck is one launch's checks.
type launchCheck interface {
	// detached reports whether the launch flies without the Device's lock,
	// carrying its own pending stores (see fly).
	detached() bool
	// build prepares what before uploads; without the lock when detached.
	build(b Backend)
	// before and after run inside the launch's hand-off, around the kernel.
	before(b Backend) error
	after(b Backend) error
	// land records on the buffers what the hand-off brought back, once it
	// has ended (ok: without an error); without the lock when detached.
	land(ok bool)
	// settle takes back, under the lock, what the check used, given how the
	// hand-off ended, and returns damage it found on buffers freed before.
	settle(err error, timedOut bool) error
}

// checkerFor picks d's checker from its backend's capabilities: checks on
// the device where the backend copies device memory to device memory
// (which snapshots large inputs) and does not trap guard bands itself (a
// trapping backend has reported every touch of one already, and needs no
// verify kernel); checks from the host otherwise.
func checkerFor(d *device) checker {
	if d.caps.Has(CapCopyDtoD) && !d.caps.Has(CapProtect) {
		return &deviceChecker{d: d}
	}
	return hostChecker{}
}

// hostChecker checks every buffer from the host.
type hostChecker struct{}

func (hostChecker) plan(l *launch) (launchCheck, error) { return hostCheck{l}, nil }
func (hostChecker) onDevice(*launchBuf, Options) bool   { return false }
func (hostChecker) retire(*buffer) bool                 { return false }
func (hostChecker) close() ([]uint64, error)            { return nil, nil }
func (hostChecker) unload() error                       { return nil }

// hostCheck snapshots the inputs the host knows nothing of before the
// kernel (lb.snap) and reads back, after it, the guard bands and inputs
// that no verify pass handles.
type hostCheck struct{ l *launch }

func (hostCheck) detached() bool           { return false }
func (hostCheck) build(Backend)            {}
func (hostCheck) land(bool)                {}
func (hostCheck) settle(error, bool) error { return nil }
func (h hostCheck) before(b Backend) error {
	for _, lb := range h.l.bufs {
		if lb.snap != nil {
			if err := b.CopyDtoH(lb.snap, lb.addr); err != nil {
				return err
			}
		}
	}
	return nil
}

func (h hostCheck) after(b Backend) error {
	opts := h.l.opts
	for _, lb := range h.l.bufs {
		if lb.gathered {
			continue
		}
		if opts.CheckGuards && !lb.devGuards {
			// Inputs to verify and outputs up to mirrorMax come back
			// whole, guard bands included: one copy serves both checks,
			// or the check and the Read that usually follows.
			whole := lb.role == RoleIn && opts.VerifyInputs || lb.role != RoleIn && lb.bytes <= mirrorMax
			var err error
			if lb.now, lb.gerr, err = readGuarded(b, lb.buffer, whole); err != nil {
				return err
			}
		}
		if lb.role == RoleIn && opts.VerifyInputs && lb.now == nil && !lb.devInput {
			lb.now = make([]byte, lb.bytes)
			if err := b.CopyDtoH(lb.now, lb.addr); err != nil {
				return err
			}
		}
	}
	return nil
}

// smallBuffer is the size under which a buffer and its guard bands always
// come back in one copy; mirrorMax the largest output read back whole after
// a launch (and kept for Read).
const (
	smallBuffer = 64 << 10
	mirrorMax   = 1 << 20
)

// readGuarded checks buf's guard bands and, for a small buffer or when whole
// is set, returns its contents read in the same copy (nil otherwise). A
// damaged guard band is gerr; err is a failure to read.
func readGuarded(b Backend, buf *buffer, whole bool) (body []byte, gerr, err error) {
	if buf.guard == 0 {
		return nil, nil, nil
	}
	if !whole && buf.pre+buf.bytes+buf.guard > smallBuffer {
		before, after := make([]byte, buf.pre), make([]byte, buf.guard)
		if err := b.CopyDtoH(before, buf.base); err != nil {
			return nil, nil, err
		}
		if err := b.CopyDtoH(after, buf.addr+uint64(buf.bytes)); err != nil {
			return nil, nil, err
		}
		return nil, guardError(buf, before, after), nil
	}
	all := make([]byte, buf.pre+buf.bytes+buf.guard)
	if err := b.CopyDtoH(all, buf.base); err != nil {
		return nil, nil, err
	}
	return all[buf.pre : buf.pre+buf.bytes], guardError(buf, all[:buf.pre], all[buf.pre+buf.bytes:]), nil
}

// checkGuards reads buf's guard bands and reports the first damage.
func checkGuards(b Backend, buf *buffer) error {
	_, gerr, err := readGuarded(b, buf, false)
	if err != nil {
		return err
	}
	return gerr
}

// guardError reports the first overwritten element of buf's guard bands,
// given their contents.
func guardError(buf *buffer, before, after []byte) error {
	want := make([]byte, max(buf.pre, buf.guard))
	pattern(want, buf.kind, true)
	for j := len(before) - 1; j >= 0; j-- { // the byte nearest the start first
		if before[j] != want[j] {
			return Errorf(ErrGuardBand, "%v: guard band before the buffer overwritten, %d element(s) before its start", buf.Buffer, (buf.pre-j+buf.kind.Size()-1)/buf.kind.Size())
		}
	}
	if i := firstDiff(after, want); i >= 0 {
		return Errorf(ErrGuardBand, "%v: guard band after the buffer overwritten at element %d (%d past its end)", buf.Buffer, buf.n+i/buf.kind.Size(), i/buf.kind.Size()+1)
	}
	return nil
}
