package cudart

import (
	"bytes"
	"encoding/binary"
	"time"

	"github.com/ptxprop/ptxprop/cudart/internal/staging"
)

// launch is one Launch on its way through the phases.
type launch struct {
	m     Module
	entry string
	g     Geometry
	raw   [][]byte     // the parameters, marshalled
	bufs  []*launchBuf // each buffer once, with the widest role it is passed in
	opts  Options
	seq   int  // the launch's number (Stats.Launches)
	alone bool // no other launch was in flight when it started
}

// launchBuf is one buffer of a launch and what the launch does to it.
type launchBuf struct {
	*buffer
	role Role
	snap []byte // an input's contents before the launch, where the host holds no copy of them (allocated before)
	now  []byte // after the launch: a small buffer's contents (read with its guard bands) or an input's
	// nowCopy holds now where the device check copied it out of
	// page-locked memory (one share: it becomes the mirror, or goes back
	// after the check).
	nowCopy *staging.Copy
	gerr    error // its guard bands after the launch
	// Checked on the device: the guard bands (devGuards) and, for an input,
	// the contents against a snapshot at snapAt in the arena (devInput).
	devGuards, devInput bool
	snapAt              uint64
	// staged: the input's contents before the kernel are the words the pre
	// pass scattered into it from stagedAt (an offset in the staged data),
	// and snapAt is their address in the arena: no snapshot is taken.
	staged   bool
	stagedAt int
	inErr    error
	// gathered: the buffer and its guard bands come back in the verify
	// pass's copy (small buffers checked on the device).
	gathered bool
	// freed: not a parameter but a buffer freed since the last launch,
	// whose guard bands this launch's verify pass checks one last time.
	freed bool
}

// Launch runs in five phases, all but the hand-off under the Device's lock.
func (d *device) Launch(m Module, entry string, g Geometry, params ...Param) error {
	d.lock()
	defer d.unlock()
	l, err := d.admit(m, entry, g, params) // valid, and no launch in flight uses its buffers
	if err != nil {
		return wrap("launch", entry, err)
	}
	d.prepare(l)              // outputs' mirrors dropped and poison queued; inputs to snapshot chosen
	c, err := d.check.plan(l) // from the host, or with the verify kernel around the kernel
	if err != nil {
		return wrap("launch", entry, err)
	}
	if err := d.fly(l, c); err != nil { // one hand-off under the watchdog
		return wrap("launch", entry, err)
	}
	return wrap("launch", entry, d.verdict(l)) // guard bands, inputs, mirrors
}

// admit checks a launch's arguments and marshals its parameters, once no
// launch in flight uses any of its buffers.
func (d *device) admit(m Module, entry string, g Geometry, params []Param) (*launch, error) {
	if err := d.usable("launch", entry); err != nil {
		return nil, err
	}
	if m.h == nil {
		return nil, Errorf(ErrInvalid, "module not loaded")
	}
	if g.Grid.Count() <= 0 || g.Block.Count() <= 0 || g.Block.Count() > 1024 || g.SharedBytes < 0 {
		return nil, Errorf(ErrInvalid, "bad geometry %v", g)
	}
	var raw [][]byte
	var bufs []*buffer
	for {
		var err error
		if raw, bufs, err = d.marshal(params); err != nil {
			return nil, err
		}
		busy := false
		for _, buf := range bufs {
			busy = busy || buf != nil && buf.busy
		}
		if !busy {
			break
		}
		d.waitIdle()
		if err := d.usable("launch", entry); err != nil {
			return nil, err
		}
	}
	l := &launch{m: m, entry: entry, g: g, raw: raw, opts: d.opts}
	seen := map[uint64]*launchBuf{}
	for i, buf := range bufs {
		if buf == nil {
			continue
		}
		if lb := seen[buf.id]; lb != nil {
			if lb.role != params[i].Role {
				lb.role = RoleInOut
			}
			continue
		}
		lb := &launchBuf{buffer: buf, role: params[i].Role}
		seen[buf.id] = lb
		l.bufs = append(l.bufs, lb)
	}
	return l, nil
}

// marshal lays params out at their real sizes.
func (d *device) marshal(params []Param) ([][]byte, []*buffer, error) {
	out := make([][]byte, len(params))
	bufs := make([]*buffer, len(params))
	for i, p := range params {
		if p.IsBuffer() {
			buf, ok := d.live(p.Buf)
			if !ok {
				return nil, nil, Errorf(ErrInvalid, "param %d: %v is not live", i, p.Buf)
			}
			if p.Off < 0 || p.Off > buf.n {
				return nil, nil, Errorf(ErrInvalid, "param %d: offset %d outside %v", i, p.Off, p.Buf)
			}
			if p.Role < RoleIn || p.Role > RoleInOut {
				return nil, nil, Errorf(ErrInvalid, "param %d: %v has no role", i, p.Buf)
			}
			b := make([]byte, 8)
			binary.LittleEndian.PutUint64(b, buf.addr+uint64(p.Off*buf.kind.Size()))
			out[i], bufs[i] = b, buf
			continue
		}
		switch p.Kind.Size() {
		case 4:
			b := make([]byte, 4)
			binary.LittleEndian.PutUint32(b, uint32(p.Bits))
			out[i] = b
		case 8:
			b := make([]byte, 8)
			binary.LittleEndian.PutUint64(b, p.Bits)
			out[i] = b
		default:
			return nil, nil, Errorf(ErrInvalid, "param %d: invalid kind %v", i, p.Kind)
		}
	}
	return out, bufs, nil
}

// prepare drops the mirrors of the buffers the launch may write, queues the
// poison of its outputs, and allocates the snapshots of the inputs whose
// contents the host does not know and that are not verified on the device.
func (d *device) prepare(l *launch) {
	for _, lb := range l.bufs {
		switch {
		case lb.role != RoleIn:
			lb.mirror.Release()
			lb.shadowOK, lb.mirror = false, nil
			if lb.role == RoleOut && l.opts.Poison && d.queuedPoison(lb.buffer) < 0 {
				d.fill(lb.base, lb.addr, lb.bytes, lb.kind, false)
			}
		case l.opts.VerifyInputs && !lb.shadowOK && !d.check.onDevice(lb, l.opts):
			lb.snap = make([]byte, lb.bytes)
		}
	}
}

// fly makes the launch's one hand-off — its check's steps before the
// kernel, the kernel, the steps after it — under the watchdog. A check
// that carries its own pending stores flies without the lock (other
// goroutines' calls go on, except on this launch's buffers); any other
// hand-off makes every pending store first, under the lock.
func (d *device) fly(l *launch, c launchCheck) error {
	d.stats.Launches++
	// Launches started meanwhile, or still in flight from before, may store
	// into this launch's buffers' guard bands after its check.
	l.seq, l.alone = d.stats.Launches, d.flights == 0
	f := func(b Backend) error {
		if err := c.before(b); err != nil {
			return err
		}
		if err := b.Launch(l.m.h, l.entry, l.g, l.raw); err != nil {
			return err
		}
		return c.after(b)
	}
	var err error
	var timedOut bool
	d.enter()
	if c.detached() {
		for _, lb := range l.bufs {
			lb.busy = true
		}
		d.flights++
		d.stats.MaxFlights = max(d.stats.MaxFlights, d.flights)
		d.unlock()
		c.build(d.b)
		err, timedOut = d.watch(l, d.batch(f))
		c.land(err == nil)
		d.lock()
		d.flights--
		for _, lb := range l.bufs {
			lb.busy = false
		}
		d.idle.Broadcast()
	} else {
		err, timedOut = d.watch(l, d.handoff(f))
	}
	d.leave()
	if timedOut {
		d.poisoned = err
	}
	if serr := c.settle(err, timedOut); err == nil {
		err = serr
	}
	return err
}

// watch makes call, which launches l, under the watchdog (none if
// l.opts.Watchdog is 0), and returns its error and whether the watchdog
// fired and the launch could not be stopped. It touches no device state: a
// launch in flight runs it without the lock.
func (d *device) watch(l *launch, call func() error) (err error, timedOut bool) {
	wd := l.opts.Watchdog
	if wd <= 0 {
		return call(), false
	}
	done := make(chan error, 1)
	goRun(func() { done <- call() })
	t := time.NewTimer(wd)
	defer t.Stop()
	select {
	case err := <-done:
		return err, false
	case <-t.C:
	}
	err = &TimeoutError{What: l.entry, Limit: wd, Detail: l.g.String()}
	if d.caps.Has(CapAbort) {
		d.b.(Aborter).Abort()
		select {
		case <-done:
			return err, false
		case <-time.After(5 * time.Second):
		}
	}
	return err, true
}

// runners are goroutines kept to make the watchdog's calls: a new
// goroutine's stack would grow to the depth of a checked launch on every
// call.
var runners = make(chan func())

// goRun runs f on an idle runner, or on a new one, which stays for further
// calls until it has been idle for a second.
func goRun(f func()) {
	select {
	case runners <- f:
		return
	default:
	}
	go func() {
		f()
		t := time.NewTimer(time.Second)
		defer t.Stop()
		for {
			select {
			case f := <-runners:
				f()
				t.Reset(time.Second)
			case <-t.C:
				return
			}
		}
	}()
}

// verdict reports what the checks found on the launch's buffers — a
// damaged guard band first, then a modified input — and keeps the outputs
// that came back as their mirrors.
func (d *device) verdict(l *launch) error {
	opts := l.opts
	for _, lb := range l.bufs {
		if lb.gerr != nil && opts.CheckGuards {
			return lb.gerr
		}
		if opts.CheckGuards && l.alone && d.stats.Launches == l.seq {
			lb.checkedAt = l.seq
		}
		if lb.role != RoleIn && lb.now != nil { // its mirror was dropped before the launch
			if lb.mirror = lb.nowCopy; lb.mirror == nil {
				lb.mirror = staging.Keep(lb.now)
			}
		}
	}
	if !opts.VerifyInputs {
		return nil
	}
	for _, lb := range l.bufs {
		if lb.role != RoleIn {
			continue
		}
		if lb.devInput {
			if lb.inErr != nil {
				return lb.inErr
			}
			continue
		}
		want := lb.snap
		if want == nil { // shadowOK: the mirror holds what the host wrote in full
			want = lb.mirror.Bytes()
		}
		if !bytes.Equal(lb.now, want) {
			k := firstDiff(lb.now, want) / lb.kind.Size()
			return Errorf(ErrInputModified, "%v element %d changed", lb.Buffer, k)
		}
		if lb.snap == nil {
			lb.nowCopy.Release()
		}
	}
	return nil
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
