package cudart

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memBackend is a Backend over host memory whose "kernels" are Go functions,
// so the Device's own machinery can be tested without PTX. It implements
// every optional interface and declares the capabilities caps: a Device
// must use exactly those. Its calls are serialised as the GPU backend's
// are: one lock, held for each call and for a whole Batch.
type memBackend struct {
	caps    Caps
	mu      sync.Mutex
	mem     map[uint64][]byte
	next    uint64
	loads   int
	kernels map[string]func(b *memBackend, params [][]byte) error
	block   chan struct{}
	pins    *pinPool // CapPinned's memory
	// batches counts Batch calls, bypass the calls (other than loading
	// modules) made outside one when the backend declares CapBatch: a
	// Device must make every such call through Batch. dtod counts
	// device-to-device copies (the snapshots of large inputs).
	batches, bypass, dtod int
	// beforeBatch, if set, runs at the start of every Batch, before the
	// lock is taken.
	beforeBatch func()
	// undeclared counts the calls of optional methods whose capability the
	// backend does not declare: a Device must make none.
	undeclared atomic.Int32
}

// declared counts a call of an optional method of capability c.
func (m *memBackend) declared(c Caps) {
	if !m.caps.Has(c) {
		m.undeclared.Add(1)
	}
}

// testCaps are the capabilities newMem gives its backends; the tests that
// rerun the Device tests over other kinds of backend set them.
var testCaps Caps

// testPins, if set, is the page-locked memory of newMem's backends.
var testPins *pinPool

func newMem() *memBackend {
	m := &memBackend{caps: testCaps, mem: map[uint64][]byte{}, next: 1 << 20, kernels: map[string]func(*memBackend, [][]byte) error{}, pins: testPins}
	m.kernels[verifyEntry] = goVerify
	made = append(made, m)
	return m
}

// made are the backends newMem made, for rerun's checks.
var made []*memBackend

// direct is the Backend a memBackend's Batch hands out: its calls without
// the lock, not counted as bypassing Batch.
type direct struct{ m *memBackend }

func (m *memBackend) Info() Info         { return Info{Backend: "mem", Name: "test"} }
func (m *memBackend) Capabilities() Caps { return m.caps }

// call runs f as one call from outside a Batch.
func (m *memBackend) call(f func(direct) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.caps.Has(CapBatch) {
		m.bypass++
	}
	return f(direct{m})
}

func (m *memBackend) LoadModule(name string, ptx []byte) (ModuleHandle, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return direct{m}.LoadModule(name, ptx)
}
func (m *memBackend) UnloadModule(ModuleHandle) error { return nil }
func (m *memBackend) Alloc(n int) (a uint64, err error) {
	err = m.call(func(d direct) error { a, err = d.Alloc(n); return err })
	return a, err
}
func (m *memBackend) Free(a uint64) error { return m.call(func(d direct) error { return d.Free(a) }) }
func (m *memBackend) CopyHtoD(dst uint64, src []byte) error {
	return m.call(func(d direct) error { return d.CopyHtoD(dst, src) })
}
func (m *memBackend) CopyDtoH(dst []byte, src uint64) error {
	return m.call(func(d direct) error { return d.CopyDtoH(dst, src) })
}
func (m *memBackend) CopyDtoD(dst, src uint64, n int) error {
	m.declared(CapCopyDtoD)
	return m.call(func(d direct) error { return d.CopyDtoD(dst, src, n) })
}
func (m *memBackend) Fill32(addr uint64, words int, v uint32) error {
	m.declared(CapFill)
	return m.call(func(d direct) error { return d.Fill32(addr, words, v) })
}
func (m *memBackend) Launch(h ModuleHandle, entry string, g Geometry, p [][]byte) error {
	return m.call(func(d direct) error { return d.Launch(h, entry, g, p) })
}
func (m *memBackend) Batch(f func(Backend) error) error {
	m.declared(CapBatch)
	if m.beforeBatch != nil {
		m.beforeBatch()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.batches++
	return f(direct{m})
}
func (m *memBackend) Pinned(n int) []byte { m.declared(CapPinned); return m.pins.Pinned(n) }
func (m *memBackend) Unpin(b []byte)      { m.declared(CapPinned); m.pins.Unpin(b) }
func (m *memBackend) Close() error        { return nil }

// The other optional methods only count their calls.
func (m *memBackend) Protect(addr uint64, n int, what string) { m.declared(CapProtect) }
func (m *memBackend) Unprotect(addr uint64)                   { m.declared(CapProtect) }
func (m *memBackend) Label(addr uint64, n int, name string)   { m.declared(CapProtect) }
func (m *memBackend) WriteCounts(addr uint64, n, elem int) ([]uint32, error) {
	m.declared(CapWriteCounts)
	return make([]uint32, n/elem), nil
}
func (m *memBackend) Elapsed(iters int, launch func() error) (time.Duration, error) {
	m.declared(CapTimer)
	return time.Duration(iters), nil
}
func (m *memBackend) Abort()                            { m.declared(CapAbort) }
func (m *memBackend) SetSeed(int64)                     { m.declared(CapSchedule) }
func (m *memBackend) SetInstructionLimit(n int64) int64 { m.declared(CapInstructionLimit); return 0 }

func (d direct) Info() Info         { return d.m.Info() }
func (d direct) Capabilities() Caps { return d.m.caps &^ (CapBatch | CapPinned | CapTimer) }
func (d direct) LoadModule(name string, ptx []byte) (ModuleHandle, error) {
	d.m.loads++
	return string(ptx), nil
}
func (d direct) UnloadModule(ModuleHandle) error { return nil }
func (d direct) Alloc(n int) (uint64, error) {
	m := d.m
	a := m.next
	m.mem[a] = make([]byte, n)
	m.next += uint64(n+255) &^ 255
	return a, nil
}
func (d direct) Free(a uint64) error                   { delete(d.m.mem, a); return nil }
func (d direct) CopyHtoD(dst uint64, src []byte) error { copy(d.m.at(dst), src); return nil }
func (d direct) CopyDtoH(dst []byte, src uint64) error { copy(dst, d.m.at(src)); return nil }
func (d direct) CopyDtoD(dst, src uint64, n int) error {
	d.m.declared(CapCopyDtoD)
	d.m.dtod++
	copy(d.m.at(dst)[:n], d.m.at(src)[:n])
	return nil
}
func (d direct) Fill32(addr uint64, words int, v uint32) error {
	d.m.declared(CapFill)
	b := d.m.at(addr)
	for i := 0; i < words; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return nil
}
func (d direct) Launch(h ModuleHandle, entry string, g Geometry, p [][]byte) error {
	if d.m.block != nil {
		<-d.m.block
	}
	return d.m.kernels[entry](d.m, p)
}
func (d direct) Close() error { return nil }

// at returns the slice of memory starting at address a.
func (m *memBackend) at(a uint64) []byte {
	for base, b := range m.mem {
		if a >= base && a < base+uint64(len(b)) {
			return b[a-base:]
		}
	}
	return nil
}

// deviceTests are the Device tests that the tests below rerun over other
// kinds of backend.
var deviceTests = map[string]func(*testing.T){
	"RoundTrip": TestLaunchRoundTrip, "Poisoned": TestUnwrittenOutputStaysPoisoned,
	"GuardBand": TestGuardBandOverrun, "GuardBandLarge": TestGuardBandOverrunLarge,
	"InputModified": TestInputModified, "InputModifiedWithoutShadow": TestInputModifiedWithoutShadow,
	"Params": TestParamsMarshalledAtRealSize, "Watchdog": TestWatchdog, "BadArguments": TestBadArguments,
	"View": TestViewAtOffset,
}

// rerun runs the Device tests over backends declaring caps, and checks
// that none of their calls bypassed Batch where they batch.
func rerun(t *testing.T, caps Caps) {
	testCaps, made = caps, nil
	defer func() { testCaps = 0 }()
	for name, f := range deviceTests {
		t.Run(name, f)
	}
	for _, b := range made {
		if b.bypass != 0 || b.undeclared.Load() != 0 {
			t.Errorf("%d backend calls bypassed Batch, %d called undeclared methods", b.bypass, b.undeclared.Load())
		}
	}
}

// gpuCaps are the GPU backend's capabilities that bear on checking.
const gpuCaps = CapFill | CapCopyDtoD | CapBatch | CapPinned

// TestBatched reruns the Device tests over a backend that fills and batches,
// and checks that no call bypassed Batch and that a launch with its checks
// is one hand-off.
func TestBatched(t *testing.T) {
	rerun(t, CapFill|CapBatch)
	testCaps = CapFill | CapBatch
	defer func() { testCaps = 0 }()
	d, m, x, y := setup(t, scaleKernel(0))
	b := d.Backend().(*memBackend)
	before := b.batches
	if err := d.Launch(m, "scale", Geometry{Grid: D1(1), Block: D1(8)}, In(x), Out(y), ScalarU32(8), ScalarF32(2)); err != nil {
		t.Fatal(err)
	}
	if n := b.batches - before; n != 1 {
		t.Errorf("a checked launch took %d hand-offs, want 1", n)
	}
	if b.bypass != 0 {
		t.Errorf("%d backend calls bypassed Batch", b.bypass)
	}
}

// TestGPULike reruns the Device tests, and the concurrent launches, over a
// backend declaring the GPU's capabilities: checked on the device, in one
// batch per launch, with page-locked memory; no call bypasses Batch.
func TestGPULike(t *testing.T) {
	rerun(t, gpuCaps)
	testCaps = gpuCaps
	defer func() { testCaps = 0 }()
	mb := concurrentCheckedLaunches(t)
	if mb.bypass != 0 || mb.batches == 0 {
		t.Errorf("%d backend calls bypassed Batch (%d batches)", mb.bypass, mb.batches)
	}
}

func ptr(p []byte) uint64 { return binary.LittleEndian.Uint64(p) }

func f32At(b []byte, i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])) }
func putF32(b []byte, i int, v float32) {
	binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
}

// scale(x, y, n, a): y[i] = a·x[i] for i < n (optionally off by one).
func scaleKernel(extra int) func(*memBackend, [][]byte) error {
	return func(m *memBackend, p [][]byte) error {
		x, y := m.at(ptr(p[0])), m.at(ptr(p[1]))
		n := int(binary.LittleEndian.Uint32(p[2]))
		a := math.Float32frombits(binary.LittleEndian.Uint32(p[3]))
		for i := 0; i < n+extra; i++ {
			putF32(y, i, a*f32At(x, i))
		}
		return nil
	}
}

func setup(t *testing.T, k func(*memBackend, [][]byte) error) (Device, Module, Buffer, Buffer) {
	t.Helper()
	mb := newMem()
	mb.kernels["scale"] = k
	d := New(mb, DefaultOptions())
	t.Cleanup(func() { d.Close() })
	m, err := d.Load("scale", []byte("ptx"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := d.Alloc(F32, 8)
	if err != nil {
		t.Fatal(err)
	}
	y, _ := d.Alloc(F32, 8)
	if err := d.Write(x, []float32{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	return d, m, x, y
}

func TestLaunchRoundTrip(t *testing.T) {
	d, m, x, y := setup(t, scaleKernel(0))
	if err := d.Launch(m, "scale", Geometry{Grid: D1(1), Block: D1(8)}, In(x), Out(y), ScalarU32(8), ScalarF32(2)); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 8)
	if err := d.Read(got, y); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != float32(2*(i+1)) {
			t.Fatalf("y[%d] = %g", i, v)
		}
	}
}

func TestUnwrittenOutputStaysPoisoned(t *testing.T) {
	d, m, x, y := setup(t, scaleKernel(0))
	// A full launch first, so the poison seen afterwards is the launch's own.
	for _, n := range []uint32{8, 7} {
		if err := d.Launch(m, "scale", Geometry{Grid: D1(1), Block: D1(8)}, In(x), Out(y), ScalarU32(n), ScalarF32(2)); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]float32, 8)
	d.Read(got, y)
	if math.Float32bits(got[7]) != PoisonF32 {
		t.Fatalf("unwritten element = %08x, want poison %08x", math.Float32bits(got[7]), PoisonF32)
	}
}

func TestGuardBandOverrun(t *testing.T) {
	d, m, x, y := setup(t, scaleKernel(1))
	err := d.Launch(m, "scale", Geometry{Grid: D1(1), Block: D1(8)}, In(x), Out(y), ScalarU32(8), ScalarF32(2))
	if !errors.Is(err, ErrGuardBand) {
		t.Fatalf("err = %v, want ErrGuardBand", err)
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Op != "launch" || ce.Name != "scale" {
		t.Fatalf("err = %#v, want a *Error for launch scale", err)
	}
}

func TestInputModified(t *testing.T) {
	d, m, x, y := setup(t, func(mb *memBackend, p [][]byte) error {
		putF32(mb.at(ptr(p[0])), 3, 0) // writes its input
		return scaleKernel(0)(mb, p)
	})
	err := d.Launch(m, "scale", Geometry{Grid: D1(1), Block: D1(8)}, In(x), Out(y), ScalarU32(8), ScalarF32(2))
	if !errors.Is(err, ErrInputModified) {
		t.Fatalf("err = %v, want ErrInputModified", err)
	}
	if !strings.Contains(err.Error(), "element 3 changed") {
		t.Errorf("err = %v, want it to name element 3", err)
	}
}

// An input the host never wrote in full (here: partly) is snapshotted
// before the launch instead of compared with the host's copy of what was
// written.
func TestInputModifiedWithoutShadow(t *testing.T) {
	d, m, x, y := setup(t, func(mb *memBackend, p [][]byte) error {
		putF32(mb.at(ptr(p[0])), 3, 0)
		return scaleKernel(0)(mb, p)
	})
	if err := d.Write(x, []float32{1, 2, 3, 4, 5, 6, 7}); err != nil {
		t.Fatal(err)
	}
	err := d.Launch(m, "scale", Geometry{Grid: D1(1), Block: D1(8)}, In(x), Out(y), ScalarU32(8), ScalarF32(2))
	if !errors.Is(err, ErrInputModified) || !strings.Contains(err.Error(), "element 3") {
		t.Fatalf("err = %v, want ErrInputModified at element 3", err)
	}
}

// A large buffer's guards are read separately from its contents.
func TestGuardBandOverrunLarge(t *testing.T) {
	mb := newMem()
	mb.kernels["fill"] = func(mb *memBackend, p [][]byte) error {
		y := mb.at(ptr(p[0]))
		for i := 0; i <= 1<<15; i++ { // one past the end
			putF32(y, i, 1)
		}
		return nil
	}
	d := New(mb, DefaultOptions())
	defer d.Close()
	m, _ := d.Load("fill", []byte("fill"))
	y, _ := d.Alloc(F32, 1<<15)
	err := d.Launch(m, "fill", Geometry{Grid: D1(1), Block: D1(1)}, Out(y))
	if !errors.Is(err, ErrGuardBand) || !strings.Contains(err.Error(), "1 past its end") {
		t.Fatalf("err = %v, want ErrGuardBand 1 past the end", err)
	}
}

func TestParamsMarshalledAtRealSize(t *testing.T) {
	var sizes []int
	d, m, x, y := setup(t, func(mb *memBackend, p [][]byte) error {
		for _, b := range p {
			sizes = append(sizes, len(b))
		}
		return nil
	})
	d.SetOptions(Options{})
	err := d.Launch(m, "scale", Geometry{Grid: D1(1), Block: D1(1)}, In(x), Out(y), ScalarU32(1), ScalarF32(1), ScalarF64(1), ScalarU64(1), ScalarI32(-1))
	if err != nil {
		t.Fatal(err)
	}
	want := []int{8, 8, 4, 4, 8, 8, 4}
	for i := range want {
		if sizes[i] != want[i] {
			t.Fatalf("param sizes %v, want %v", sizes, want)
		}
	}
}

func TestModuleCacheKeyedByText(t *testing.T) {
	mb := newMem()
	d := New(mb, DefaultOptions())
	defer d.Close()
	a1, _ := d.Load("k", []byte("theta=1e4"))
	b1, _ := d.Load("k", []byte("theta=1e6"))
	a2, _ := d.Load("k", []byte("theta=1e4"))
	if a1.Hash != a2.Hash || a1.Hash == b1.Hash || mb.loads != 2 {
		t.Fatalf("hashes %s %s %s, loads %d", a1.Hash[:8], b1.Hash[:8], a2.Hash[:8], mb.loads)
	}
	if s := d.Stats(); s.ModuleLoads != 2 || s.CacheHits != 1 {
		t.Fatalf("stats %v", s)
	}
}

// A launch that outlives the watchdog fails with a *TimeoutError at once,
// and every later call of the Device it left unusable is a liveness
// failure too.
func TestWatchdog(t *testing.T) {
	mb := newMem()
	mb.kernels["hang"] = func(*memBackend, [][]byte) error { return nil }
	mb.block = make(chan struct{})
	defer close(mb.block)
	opts := DefaultOptions()
	opts.Watchdog = 50 * time.Millisecond
	d := New(mb, opts)
	m, _ := d.Load("hang", []byte("x"))
	start := time.Now()
	err := d.Launch(m, "hang", Geometry{Grid: D1(3), Block: D1(1)})
	var te *TimeoutError
	if !errors.Is(err, ErrTimeout) || !errors.As(err, &te) || te.What != "hang" || te.Limit != opts.Watchdog || !strings.Contains(te.Detail, "grid=(3,1,1)") {
		t.Fatalf("err = %v, want ErrTimeout as a *TimeoutError for hang within %v", err, opts.Watchdog)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the timeout took %v to report", took)
	}
	_, err = d.Alloc(F32, 1)
	if !errors.Is(err, ErrPoisoned) || !errors.Is(err, ErrTimeout) {
		t.Fatalf("after the timeout: %v, want ErrPoisoned and ErrTimeout", err)
	}
}

func TestWatchReentrantLock(t *testing.T) {
	var mu sync.Mutex
	err := Watch(50*time.Millisecond, "launcher", func() error {
		mu.Lock()
		mu.Lock() // the upstream self-deadlock
		return nil
	})
	var te *TimeoutError
	if !errors.Is(err, ErrTimeout) || !errors.As(err, &te) || te.What != "launcher" {
		t.Fatalf("err = %v, want ErrTimeout as a *TimeoutError for launcher", err)
	}
}

// TestHostKind: every host slice Write takes has its Kind and length, and
// any other value, a slice of an unsupported element type too, is invalid.
func TestHostKind(t *testing.T) {
	for _, c := range []struct {
		host any
		kind Kind
		n    int
	}{
		{[]float32{1, 2, 3}, F32, 3}, {[]float64{1}, F64, 1}, {[]int32{}, I32, 0},
		{[]uint32{1, 2}, U32, 2}, {[]int64{1, 2, 3, 4}, I64, 4}, {[]uint64{1}, U64, 1},
	} {
		if kind, n, err := HostKind(c.host); kind != c.kind || n != c.n || err != nil {
			t.Errorf("HostKind(%T len %d) = %v, %d, %v; want %v, %d, nil", c.host, c.n, kind, n, err, c.kind, c.n)
		}
	}
	for _, host := range []any{[]int16{1}, []byte{1}, float32(1), nil} {
		if _, _, err := HostKind(host); !errors.Is(err, ErrInvalid) {
			t.Errorf("HostKind(%T) error %v, want ErrInvalid", host, err)
		}
	}
}

func TestBadArguments(t *testing.T) {
	d, m, x, _ := setup(t, scaleKernel(0))
	if _, err := d.Alloc(F32, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("Alloc 0: %v", err)
	}
	if err := d.Write(x, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}); !errors.Is(err, ErrInvalid) {
		t.Errorf("oversized write: %v", err)
	}
	if err := d.Write(x, []int32{1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("kind mismatch: %v", err)
	}
	if err := d.Launch(m, "scale", Geometry{Grid: D1(1), Block: D1(2048)}); !errors.Is(err, ErrInvalid) {
		t.Errorf("block 2048: %v", err)
	}
	d.Free(x)
	if err := d.Launch(m, "scale", Geometry{Grid: D1(1), Block: D1(1)}, In(x)); !errors.Is(err, ErrInvalid) {
		t.Errorf("freed buffer: %v", err)
	}
	if _, err := Open("nope", DefaultOptions()); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown backend: %v", err)
	}
}

// goVerify does what verifyPTX does, on a memBackend.
func goVerify(m *memBackend, p [][]byte) error {
	tab, n, out := m.at(ptr(p[0])), int(binary.LittleEndian.Uint32(p[1])), m.at(ptr(p[2]))
	for i := 0; i < n; i++ {
		d := tab[32*i:]
		addr, ref := binary.LittleEndian.Uint64(d), binary.LittleEndian.Uint64(d[8:])
		words, mode := int(binary.LittleEndian.Uint32(d[16:])), binary.LittleEndian.Uint32(d[20:])
		pat := binary.LittleEndian.Uint64(d[24:])
		src := m.at(addr)
		switch mode {
		case 1:
			copy(m.at(ref)[:4*words], src[:4*words])
			continue
		case 2:
			for j := 0; j < words; j++ {
				binary.LittleEndian.PutUint32(src[4*j:], uint32(pat>>(32*(j&1))))
			}
			continue
		}
		var refs []byte
		if ref != 0 {
			refs = m.at(ref)
		}
		for j := 0; j < words; j++ {
			w := binary.LittleEndian.Uint32(src[4*j:])
			want := uint32(pat >> (32 * (j & 1)))
			if refs != nil {
				want = binary.LittleEndian.Uint32(refs[4*j:])
			}
			if w != want {
				v := out[8*i:]
				binary.LittleEndian.PutUint32(v, min(binary.LittleEndian.Uint32(v), uint32(j)))
				binary.LittleEndian.PutUint32(v[4:], max(binary.LittleEndian.Uint32(v[4:]), uint32(j+1)))
			}
		}
	}
	return nil
}

// TestFreedBufferChecked: a buffer damaged by a launch it was not passed to
// is caught once it is freed, by the next launch's verify pass, and its
// memory is not reused.
func TestFreedBufferChecked(t *testing.T) {
	mb := newMem()
	var victim uint64
	mb.kernels["touch"] = func(m *memBackend, p [][]byte) error {
		victim = ptr(p[0])
		return nil
	}
	mb.kernels["wild"] = func(m *memBackend, p [][]byte) error {
		putF32(m.at(victim), 8, 1) // one past the end of the victim's 8 elements
		return nil
	}
	mb.caps = CapCopyDtoD
	d := New(mb, DefaultOptions())
	defer d.Close()
	m, _ := d.Load("k", []byte("k"))
	a, _ := d.Alloc(F32, 8)
	b, _ := d.Alloc(F32, 8)
	g := Geometry{Grid: D1(1), Block: D1(1)}
	if err := d.Launch(m, "touch", g, Out(a)); err != nil {
		t.Fatal(err)
	}
	aAddr := victim
	if err := d.Launch(m, "wild", g, Out(b)); err != nil {
		t.Fatalf("the launch that damaged another buffer: %v (its own buffers are intact)", err)
	}
	if err := d.Free(a); err != nil {
		t.Fatalf("Free: %v (the check is the next launch's)", err)
	}
	err := d.Launch(m, "touch", g, Out(b))
	if !errors.Is(err, ErrGuardBand) || !strings.Contains(err.Error(), "found after it was freed") {
		t.Fatalf("err = %v, want the freed buffer's damaged guard band", err)
	}
	c, _ := d.Alloc(F32, 8)
	if err := d.Launch(m, "touch", g, Out(c)); err != nil {
		t.Fatal(err)
	}
	if victim == aAddr {
		t.Fatal("the damaged buffer's memory was reused")
	}
}

// TestDeviceChecked reruns the Device tests over a backend that copies device
// to device, so that every launch's stores, guard bands and inputs go
// through ptxprop_verify's passes (here goVerify).
func TestDeviceChecked(t *testing.T) { rerun(t, CapCopyDtoD) }

// TestConcurrentCheckedLaunches: on a device-checking backend a launch is in
// flight without the Device's lock. Goroutines launching side by side, each
// on its own buffers (small and large, so both the gathered and the
// device-compared paths run) and all reading one shared input, get their
// own results; a launch passed a buffer in flight waits for it.
func TestConcurrentCheckedLaunches(t *testing.T) {
	testCaps = CapCopyDtoD | CapBatch
	defer func() { testCaps = 0 }()
	concurrentCheckedLaunches(t)
}

// concurrentCheckedLaunches runs TestConcurrentCheckedLaunches over a
// backend declaring testCaps, and returns that backend.
func concurrentCheckedLaunches(t *testing.T) *memBackend {
	mb := newMem()
	// A random delay first, so that batches reach the lock in another order
	// than their launches were planned in.
	mb.beforeBatch = func() { time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond) }
	// add(x, s, y, n): y[i] = x[i] + s[0]
	mb.kernels["add"] = func(m *memBackend, p [][]byte) error {
		x, s, y := m.at(ptr(p[0])), m.at(ptr(p[1])), m.at(ptr(p[2]))
		n := int(binary.LittleEndian.Uint32(p[3]))
		for i := 0; i < n; i++ {
			putF32(y, i, f32At(x, i)+f32At(s, 0))
		}
		return nil
	}
	d, m := loadK(t, mb)
	shared, _ := d.Alloc(F32, 1)
	if err := d.Write(shared, []float32{0.5}); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 6, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			if err := addRounds(d, m, shared, w, rounds); err != nil {
				t.Error(err) // safe from any goroutine
			}
		})
	}
	wg.Wait()
	if s := d.Stats(); s.Launches != workers*rounds || s.MaxFlights < 2 {
		t.Errorf("%d launches, at most %d in flight at once; want %d, several", s.Launches, s.MaxFlights, workers*rounds)
	}
	return mb
}

// addRounds is one goroutine of TestConcurrentCheckedLaunches: rounds of
// alloc, write, add, read and compare, free, on buffers of its own and (one
// round in eight) the shared one.
func addRounds(d Device, m Module, shared Buffer, w, rounds int) error {
	own, err := d.Alloc(F32, 1)
	if err == nil {
		err = d.Write(own, []float32{0.5})
	}
	if err != nil {
		return err
	}
	for r := 0; r < rounds; r++ {
		n := 1 + (w*rounds+r)%5*7000 // up to 28 001 elements: past the 64 KiB of a gathered buffer
		x, err := d.Alloc(F32, n)
		if err != nil {
			return err
		}
		y, err := d.Alloc(F32, n)
		if err != nil {
			return err
		}
		in := make([]float32, n)
		for i := range in {
			in[i] = float32(w*1000 + r + i)
		}
		if err := d.Write(x, in); err != nil {
			return err
		}
		s := own
		if r%8 == 0 {
			s = shared // sometimes in flight in another goroutine's launch: wait for it
		}
		if err := d.Launch(m, "add", Geometry{Grid: D1(1), Block: D1(1)}, In(x), In(s), Out(y), ScalarU32(uint32(n))); err != nil {
			return err
		}
		got := make([]float32, n)
		if err := d.Read(got, y); err != nil {
			return err
		}
		for i := range got {
			if got[i] != in[i]+0.5 {
				return fmt.Errorf("worker %d round %d: y[%d] = %v, want %v", w, r, i, got[i], in[i]+0.5)
			}
		}
		if err := errors.Join(d.Free(x), d.Free(y)); err != nil {
			return err
		}
	}
	return nil
}

// pinPool is a fake cudart.Pinner: it hands out buffers full of 0xDD and
// fills them with 0xDD again when they are given back, so a Device that
// relied on their first contents, or kept a view of one past Unpin (a
// mirror not copied out), would see garbage; it counts those out.
type pinPool struct {
	mu   sync.Mutex
	out  map[*byte]bool
	gave int
}

func (p *pinPool) Pinned(n int) []byte {
	if p == nil {
		return nil
	}
	b := bytes.Repeat([]byte{0xDD}, n+rand.IntN(64))[:n]
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.out == nil {
		p.out = map[*byte]bool{}
	}
	p.out[&b[:1][0]] = true
	p.gave++
	return b
}

func (p *pinPool) Unpin(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.out[&b[:1][0]] {
		panic("Unpin of a slice not handed out, or given back twice")
	}
	delete(p.out, &b[:1][0])
	for i := range b[:cap(b)] {
		b[:cap(b)][i] = 0xDD
	}
}

// outstanding returns how many buffers are out, and how many were handed out.
func (p *pinPool) outstanding() (int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.out), p.gave
}

// TestDeviceCheckedPinned reruns the Device tests, and the concurrent
// launches, over a device-checking backend with page-locked memory
// (Pinner): every launch's upload and copy back live in it, every buffer is
// given back, and nothing read later comes from one given back.
func TestDeviceCheckedPinned(t *testing.T) {
	pool := &pinPool{}
	testPins = pool
	defer func() { testPins = nil }()
	rerun(t, CapCopyDtoD|CapPinned)
	if _, gave := pool.outstanding(); gave == 0 {
		t.Fatal("no launch used page-locked memory")
	}
	t.Run("Concurrent", func(t *testing.T) {
		cp := &pinPool{}
		testPins, testCaps = cp, CapCopyDtoD|CapPinned|CapBatch
		defer func() { testCaps = 0 }()
		concurrentCheckedLaunches(t)
		if out, gave := cp.outstanding(); out != 0 || gave == 0 {
			t.Errorf("%d of %d page-locked buffers not given back", out, gave)
		}
	})
}

// TestStagedInputNeedsNoSnapshot: a large input written in full before a
// launch is compared with the words the pre pass copied into it, without a
// snapshot; launched again unchanged (nothing staged), it is snapshotted.
// Either way a kernel that stores into it is caught.
func TestStagedInputNeedsNoSnapshot(t *testing.T) {
	mb := newMem()
	mb.caps = CapCopyDtoD
	poke := false
	mb.kernels["copy"] = func(m *memBackend, p [][]byte) error {
		x, y := m.at(ptr(p[0])), m.at(ptr(p[1]))
		n := int(binary.LittleEndian.Uint32(p[2]))
		copy(y[:4*n], x[:4*n])
		if poke {
			putF32(x, 7, 1)
		}
		return nil
	}
	d, m := loadK(t, mb)
	const n = 20000 // 80 KB: compared on the device
	x, _ := d.Alloc(F32, n)
	y, _ := d.Alloc(F32, n)
	if err := d.Write(x, make([]float32, n)); err != nil {
		t.Fatal(err)
	}
	launch := func() error {
		return d.Launch(m, "copy", Geometry{Grid: D1(1), Block: D1(1)}, In(x), Out(y), ScalarU32(n))
	}
	// The first launch loads the verify module and allocates the arena in
	// a call of its own, which makes the pending stores the old way.
	if err := launch(); err != nil {
		t.Fatal(err)
	}
	mb.dtod = 0
	if err := d.Write(x, make([]float32, n)); err != nil {
		t.Fatal(err)
	}
	if err := launch(); err != nil || mb.dtod != 0 {
		t.Fatalf("written in full: err %v, %d snapshots (want none)", err, mb.dtod)
	}
	if err := launch(); err != nil || mb.dtod != 1 {
		t.Fatalf("launched again: err %v, %d snapshots (want 1)", err, mb.dtod)
	}
	poke = true
	if err := launch(); !errors.Is(err, ErrInputModified) {
		t.Fatalf("snapshotted input stored to: err %v", err)
	}
	if err := d.Write(x, make([]float32, n)); err != nil {
		t.Fatal(err)
	}
	if err := launch(); !errors.Is(err, ErrInputModified) || mb.dtod != 2 {
		t.Fatalf("staged input stored to: err %v, %d snapshots (want 2)", err, mb.dtod)
	}
}

// TestLockHeld: Stats.LockHeld counts the time a call held the Device's
// lock (an allocation that reaches the backend, slowly), not a launch in
// flight (which gives the lock up) nor a call waiting for that launch's
// buffer (which waits on the lock's condition, the lock given up too).
func TestLockHeld(t *testing.T) {
	mb := newMem()
	mb.caps = CapCopyDtoD | CapBatch
	mb.kernels["copy"] = func(m *memBackend, p [][]byte) error {
		copy(m.at(ptr(p[1]))[:4], m.at(ptr(p[0]))[:4])
		return nil
	}
	// Batches (a checked launch's whole flight, but also an allocation)
	// first sleep for sleep nanoseconds and then, once armed, wait for gate
	// to close.
	var sleep atomic.Int64
	var armed atomic.Bool
	gate := make(chan struct{})
	mb.beforeBatch = func() {
		time.Sleep(time.Duration(sleep.Load()))
		if armed.Load() {
			<-gate
		}
	}
	d, m := loadK(t, mb)
	x, _ := d.Alloc(F32, 1)
	y, _ := d.Alloc(F32, 1)
	if err := d.Write(x, []float32{2}); err != nil {
		t.Fatal(err)
	}
	// A first launch loads the verify module and makes an arena, both
	// under the lock: after it, a launch only flies.
	g1 := Geometry{Grid: D1(1), Block: D1(1)}
	if err := d.Launch(m, "copy", g1, In(x), Out(y)); err != nil {
		t.Fatal(err)
	}

	const slow = 30 * time.Millisecond
	before := d.Stats()
	sleep.Store(int64(slow))
	z, err := d.Alloc(F32, 1<<20) // a new size class: the backend allocates, under the lock
	sleep.Store(0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(z)
	if held := d.Stats().LockHeld - before.LockHeld; held < slow {
		t.Errorf("an allocation held the Device's lock %v at the backend; LockHeld grew by %v", slow, held)
	}

	const stall = 100 * time.Millisecond
	before = d.Stats()
	armed.Store(true) // from here on only the launch reaches the backend
	launched, written := make(chan error, 1), make(chan error, 1)
	go func() { launched <- d.Launch(m, "copy", g1, In(x), Out(y)) }()
	for d.Stats().Launches == before.Launches { // counted under the lock it gives up to fly: in flight, y busy
		time.Sleep(time.Millisecond)
	}
	go func() { written <- d.Write(y, []float32{3}) }() // waits for the launch
	time.Sleep(stall)
	close(gate)
	if err := errors.Join(<-launched, <-written); err != nil {
		t.Fatal(err)
	}
	if held := d.Stats().LockHeld - before.LockHeld; held <= 0 || held >= stall/2 {
		t.Errorf("the Device's lock was held %v while a launch stalled %v in flight and a write waited for it; want more than 0, well under the stall", held, stall)
	}
}

// loadK opens a device on b with its module "k" loaded; the device closes
// when the test ends.
func loadK(t *testing.T, b Backend) (Device, Module) {
	t.Helper()
	d := New(b, DefaultOptions())
	t.Cleanup(func() { d.Close() })
	m, err := d.Load("k", []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	return d, m
}
