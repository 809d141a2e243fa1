//go:build cuda

package gpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/cudart"
)

// open opens device 0 without the bandwidth measurement. Without a device
// the test is skipped, unless PTXPROP_REQUIRE_GPU is set (as on the GPU
// machine), where it fails.
func open(t *testing.T, cfg Config) *Backend {
	t.Helper()
	if cfg.CopyBytes == 0 {
		cfg.CopyBytes = -1
	}
	b, err := Open(cfg)
	if err != nil {
		if errors.Is(err, cudart.ErrNoDevice) && os.Getenv("PTXPROP_REQUIRE_GPU") == "" {
			t.Skipf("no GPU: %v", err)
		}
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func load(t *testing.T, b *Backend, name, ptx string) cudart.ModuleHandle {
	t.Helper()
	m, err := b.LoadModule(name, []byte(ptx))
	if err != nil {
		t.Fatalf("LoadModule %s: %v", name, err)
	}
	return m
}

func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func grid1(threads int) cudart.Geometry {
	return cudart.Geometry{Grid: cudart.D1((threads + 127) / 128), Block: cudart.D1(128)}
}

func TestInfo(t *testing.T) {
	b := open(t, Config{CopyBytes: 1 << 30})
	info := b.Info()
	p := b.Properties()
	t.Logf("info: %+v", info)
	t.Logf("properties: %+v", p)
	t.Logf("copy bandwidth: %.1f GB/s (read+write, best of 5 copies of %d MiB)", info.CopyBandwidth/1e9, p.CopyBytes>>20)
	if info.Backend != "gpu" || info.Name == "" || info.ComputeCapability == "" || info.SMs <= 0 ||
		info.Driver == "" || info.CUDA == "" {
		t.Errorf("empty Info field: %+v", info)
	}
	// The UUID as nvidia-smi -L and CUDA_VISIBLE_DEVICES spell it, and the
	// PCI address as cuDeviceGetPCIBusId does: what tells devices apart.
	if !regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(info.UUID) ||
		!regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.0$`).MatchString(info.PCIBusID) || info.Ordinal != 0 {
		t.Errorf("device identity: ordinal %d, UUID %q, PCI bus id %q", info.Ordinal, info.UUID, info.PCIBusID)
	}
	if !strings.Contains(info.ComputeCapability, ".") || info.ComputeCapability == "0.0" {
		t.Errorf("compute capability %q", info.ComputeCapability)
	}
	if info.CopyBandwidth < 1e11 { // 100 GB/s: any datacentre GPU does far better
		t.Errorf("copy bandwidth %.3g B/s (error %q)", info.CopyBandwidth, p.CopyError)
	}
	if p.TotalMemory == 0 || p.HeaderVersion == 0 || p.CUDAVersion == 0 {
		t.Errorf("empty properties: %+v", p)
	}
}

// TestParams launches a kernel whose signature mixes 4- and 8-byte
// parameters and checks every bit it writes back, directly and through a
// cudart.Device.
func TestParams(t *testing.T) {
	b := open(t, Config{})
	m := load(t, b, "echo", echoPTX)
	out, err := b.Alloc(6 * 8)
	if err != nil {
		t.Fatal(err)
	}
	const (
		a = uint32(0x89ABCDEF)
		c = uint64(0xDEADBEEFCAFEF00D)
		e = uint32(0x13579BDF)
	)
	bBits := uint32(0xC0490FDB)         // -pi as f32
	dBits := uint64(0x400921FB54442D18) // pi as f64
	params := [][]byte{u32(a), u32(bBits), u64(c), u64(out), u64(dBits), u32(e)}
	if err := b.Launch(m, "echo", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(1)}, params); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 48)
	if err := b.CopyDtoH(raw, out); err != nil {
		t.Fatal(err)
	}
	want := []uint64{uint64(a), uint64(bBits), c, out, dBits, uint64(e)}
	for i, w := range want {
		if got := binary.LittleEndian.Uint64(raw[8*i:]); got != w {
			t.Errorf("slot %d: got %#x, want %#x", i, got, w)
		}
	}

	// The driver's view of the signature, and refusal of a mismatch.
	sizes, err := b.ParamSizes(m, "echo")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("driver-reported parameter sizes: %v (ParamInfo=%v)", sizes, b.Properties().ParamInfo)
	if b.Properties().ParamInfo {
		if fmt.Sprint(sizes) != "[4 4 8 8 8 4]" {
			t.Errorf("parameter sizes %v, want [4 4 8 8 8 4]", sizes)
		}
		bad := [][]byte{u64(uint64(a)), u32(bBits), u64(c), u64(out), u64(dBits), u32(e)}
		err := b.Launch(m, "echo", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(1)}, bad)
		if !errors.Is(err, cudart.ErrInvalid) {
			t.Errorf("8-byte value for a .u32 parameter: got %v, want ErrInvalid", err)
		}
		t.Logf("mismatch refused: %v", err)
		err = b.Launch(m, "echo", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(1)}, params[:5])
		if !errors.Is(err, cudart.ErrInvalid) {
			t.Errorf("5 of 6 parameters: got %v, want ErrInvalid", err)
		}
	}
	if err := b.Free(out); err != nil {
		t.Fatal(err)
	}

	// Through the Device: the Param constructors marshal at real size.
	dev := cudart.New(b, cudart.DefaultOptions())
	mod, err := dev.Load("echo", []byte(echoPTX))
	if err != nil {
		t.Fatal(err)
	}
	buf, err := dev.Alloc(cudart.U64, 6)
	if err != nil {
		t.Fatal(err)
	}
	err = dev.Launch(mod, "echo", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(1)},
		cudart.ScalarU32(a), cudart.ScalarF32(math.Float32frombits(bBits)), cudart.ScalarU64(c),
		cudart.Out(buf), cudart.ScalarF64(math.Float64frombits(dBits)), cudart.ScalarU32(e))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]uint64, 6)
	if err := dev.Read(got, buf); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if i == 3 {
			if got[3] == 0 || got[3]%256 != 0 {
				t.Errorf("pointer slot %#x", got[3])
			}
			continue
		}
		if got[i] != w {
			t.Errorf("device: slot %d: got %#x, want %#x", i, got[i], w)
		}
	}
}

func TestBadPTX(t *testing.T) {
	b := open(t, Config{})
	_, err := b.LoadModule("bad", []byte(badPTX))
	t.Logf("bad PTX: %v", err)
	if !errors.Is(err, ErrInvalidPTX) || !errors.Is(err, cudart.ErrDriver) || !errors.Is(err, cudart.ErrInvalid) {
		t.Fatalf("got %v, want CUDA_ERROR_INVALID_PTX (cudart.ErrDriver, cudart.ErrInvalid)", err)
	}
	var je *JITError
	if !errors.As(err, &je) {
		t.Errorf("no *JITError in %v", err)
	} else if !strings.Contains(je.Log, "frobnicate") && !strings.Contains(je.Log, "line") {
		t.Errorf("JIT log missing or uninformative: %q", je.Log)
	}
	if !strings.HasPrefix(err.Error(), "cudart: load bad: ") {
		t.Errorf("message %q", err)
	}
	// The context is still fine.
	m := load(t, b, "fill", fillPTX)
	if err := b.Launch(m, "nope", grid1(1), nil); !errors.Is(err, ErrNotFound) || !errors.Is(err, cudart.ErrInvalid) {
		t.Errorf("unknown entry: got %v", err)
	}
}

// inChild runs the calling test again in a fresh process of this test
// binary, for a test that leaves CUDA unusable in its process (a kernel
// fault is process-wide). It returns true in that child, where the caller
// runs its body, and false in the parent, after reporting the child's result.
func inChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv("PTXPROP_GPU_CHILD") == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), "PTXPROP_GPU_CHILD="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("child process:\n%s", out)
	switch {
	case err != nil:
		t.Errorf("child process: %v", err)
	case strings.Contains(string(out), "--- SKIP"):
		t.Skip("skipped in the child process")
	case !strings.Contains(string(out), "--- PASS"):
		t.Errorf("child process did not pass")
	}
	return false
}

// TestIllegalAddress runs in a child process: the fault it provokes leaves
// CUDA unusable for the rest of the process.
func TestIllegalAddress(t *testing.T) {
	if !inChild(t) {
		return
	}
	b := open(t, Config{})
	m := load(t, b, "store", storePTX)
	err := b.Launch(m, "store", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(1)}, [][]byte{u64(16)})
	t.Logf("store to 0x10: %v", err)
	if !errors.Is(err, ErrIllegalAddress) || !errors.Is(err, cudart.ErrLaunch) || !errors.Is(err, cudart.ErrOutOfBounds) {
		t.Fatalf("got %v, want CUDA_ERROR_ILLEGAL_ADDRESS (cudart.ErrLaunch, cudart.ErrOutOfBounds)", err)
	}
	if !strings.HasPrefix(err.Error(), "cudart: launch store: ") {
		t.Errorf("message %q", err)
	}
	if !errors.Is(Fault(), ErrIllegalAddress) {
		t.Errorf("Fault() = %v", Fault())
	}
	// CUDA is lost for the process: later calls say so, with the same code.
	_, err = b.Alloc(256)
	t.Logf("alloc after the fault: %v", err)
	if !errors.Is(err, ErrIllegalAddress) {
		t.Errorf("alloc after the fault: got %v", err)
	}
	_, err = Open(Config{CopyBytes: -1})
	t.Logf("open after the fault: %v", err)
	if !errors.Is(err, cudart.ErrNoDevice) || !errors.Is(err, ErrIllegalAddress) {
		t.Errorf("open after the fault: got %v, want ErrNoDevice and ErrIllegalAddress", err)
	}
	if err := b.Free(256); err != nil {
		t.Errorf("Free after the fault: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close after the fault: %v", err)
	}
}

// fillSetup opens a device with fillPTX loaded and an n-float output
// buffer; the device closes when the test ends.
func fillSetup(t *testing.T, n int) (cudart.Device, cudart.Module, cudart.Buffer) {
	t.Helper()
	dev := cudart.New(open(t, Config{}), cudart.DefaultOptions())
	t.Cleanup(func() { dev.Close() })
	m, err := dev.Load("fill", []byte(fillPTX))
	if err != nil {
		t.Fatal(err)
	}
	buf, err := dev.Alloc(cudart.F32, n)
	if err != nil {
		t.Fatal(err)
	}
	return dev, m, buf
}

func TestGuardBand(t *testing.T) {
	dev, m, buf := fillSetup(t, 100)
	if err := dev.Launch(m, "fill", grid1(100), cudart.Out(buf), cudart.ScalarU32(100), cudart.ScalarU32(^uint32(0))); err != nil {
		t.Fatalf("in-bounds launch: %v", err)
	}
	err := dev.Launch(m, "fill", grid1(101), cudart.Out(buf), cudart.ScalarU32(101), cudart.ScalarU32(^uint32(0)))
	t.Logf("one past the end: %v", err)
	if !errors.Is(err, cudart.ErrGuardBand) {
		t.Fatalf("got %v, want ErrGuardBand", err)
	}
}

func TestPoison(t *testing.T) {
	dev, m, buf := fillSetup(t, 300)
	for _, skip := range []uint32{^uint32(0), 37, 299, ^uint32(0), 5} {
		if err := dev.Launch(m, "fill", grid1(300), cudart.Out(buf), cudart.ScalarU32(300), cudart.ScalarU32(skip)); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, 300)
		if err := dev.Read(got, buf); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if uint32(i) == skip {
				if bits := math.Float32bits(v); bits != cudart.PoisonF32 {
					t.Errorf("skip=%d: skipped element holds %#x, want poison %#x", skip, bits, cudart.PoisonF32)
				}
			} else if v != float32(i) {
				t.Errorf("skip=%d: element %d = %v", skip, i, v)
			}
		}
	}
}

// TestWatchdog: a kernel that runs far past the watchdog is reported as
// ErrTimeout in about the watchdog's time, then the device is poisoned, and
// Close still returns (once the kernel ends).
func TestWatchdog(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	b := open(t, Config{})
	opts := cudart.DefaultOptions()
	opts.Watchdog = 300 * time.Millisecond
	dev := cudart.New(b, opts)
	m, err := dev.Load("spin", []byte(spinPTX))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = dev.Launch(m, "spin", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(1)}, cudart.ScalarU64(uint64(3*time.Second)))
	took := time.Since(start)
	t.Logf("spin 3s under a 300ms watchdog: %v after %v", err, took)
	if !errors.Is(err, cudart.ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if took > 2*time.Second {
		t.Errorf("timeout reported after %v", took)
	}
	_, err = dev.Alloc(cudart.F32, 4)
	if !errors.Is(err, cudart.ErrPoisoned) {
		t.Errorf("after the timeout: got %v, want ErrPoisoned", err)
	}
	start = time.Now()
	err = dev.Close()
	t.Logf("Close: %v after %v", err, time.Since(start))
	if err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestCloseWhileHung: Close gives up after CloseWait instead of hanging, and
// the context is destroyed once the kernel ends.
func TestCloseWhileHung(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	b := open(t, Config{CloseWait: 300 * time.Millisecond})
	m := load(t, b, "spin", spinPTX)
	done := make(chan error, 1)
	go func() {
		done <- b.Launch(m, "spin", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(1)}, [][]byte{u64(uint64(2 * time.Second))})
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	err := b.Close()
	t.Logf("Close during a 2s kernel: %v after %v", err, time.Since(start))
	if !errors.Is(err, cudart.ErrTimeout) || time.Since(start) > time.Second {
		t.Errorf("Close: got %v after %v, want ErrTimeout after ~300ms", err, time.Since(start))
	}
	if err := <-done; err != nil {
		t.Errorf("the launch itself: %v", err)
	}
	select {
	case <-b.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the context was not destroyed after the kernel ended")
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := b.Alloc(16); !errors.Is(err, cudart.ErrClosed) {
		t.Errorf("Alloc after Close: %v", err)
	}
}

// TestModuleCache: the same PTX loads once; two texts differing by one
// constant are two modules, and alternating them never runs the stale one.
func TestModuleCache(t *testing.T) {
	b := open(t, Config{})
	dev := cudart.New(b, cudart.DefaultOptions())
	defer dev.Close()
	const n = 1000
	buf, err := dev.Alloc(cudart.U32, n)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[uint32][]byte{1111: []byte(konstPTX(1111)), 2222: []byte(konstPTX(2222))}
	hashes := map[string]uint32{}
	for i := 0; i < 10; i++ {
		k := []uint32{1111, 2222}[i%2]
		m, err := dev.Load("konst", texts[k])
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := hashes[m.Hash]; ok && prev != k {
			t.Fatalf("one hash for two texts")
		}
		hashes[m.Hash] = k
		if err := dev.Launch(m, "konst", grid1(n), cudart.Out(buf), cudart.ScalarU32(n)); err != nil {
			t.Fatal(err)
		}
		got := make([]uint32, n)
		if err := dev.Read(got, buf); err != nil {
			t.Fatal(err)
		}
		for j, v := range got {
			if v != k {
				t.Fatalf("iteration %d (constant %d): element %d = %d: a stale module ran", i, k, j, v)
			}
		}
	}
	s := dev.Stats()
	t.Logf("stats: %v", s)
	if s.ModuleLoads != 2 || s.CacheHits != 8 {
		t.Errorf("module loads %d, cache hits %d; want 2 and 8", s.ModuleLoads, s.CacheHits)
	}
	// The raw backend: two loads of one entry name are two modules.
	m1, m2 := load(t, b, "konst", konstPTX(1111)), load(t, b, "konst", konstPTX(2222))
	raw, err := b.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(raw)
	for i := 0; i < 6; i++ {
		m, k := m1, uint32(1111)
		if i%2 == 1 {
			m, k = m2, 2222
		}
		if err := b.Launch(m, "konst", grid1(n), [][]byte{u64(raw), u32(n)}); err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 4*n)
		if err := b.CopyDtoH(out, raw); err != nil {
			t.Fatal(err)
		}
		if v := binary.LittleEndian.Uint32(out[4*(n-1):]); v != k {
			t.Fatalf("raw iteration %d: got %d, want %d", i, v, k)
		}
	}
	for _, m := range []cudart.ModuleHandle{m1, m2} {
		if err := b.UnloadModule(m); err != nil {
			t.Error(err)
		}
	}
	if err := b.UnloadModule(m1); !errors.Is(err, cudart.ErrInvalid) {
		t.Errorf("second unload: %v", err)
	}
}

// TestConcurrency: many goroutines launch at once on one backend, through a
// Device and on the raw backend.
func TestConcurrency(t *testing.T) {
	b := open(t, Config{})
	dev := cudart.New(b, cudart.DefaultOptions())
	defer dev.Close()
	mod, err := dev.Load("addk", []byte(addkPTX))
	if err != nil {
		t.Fatal(err)
	}
	raw := load(t, b, "addk", addkPTX)
	const workers, iters, n = 16, 20, 777
	var wg sync.WaitGroup
	errs := make(chan error, 3*workers)
	for w := 0; w < workers; w++ {
		wg.Add(3)
		go func(w int) { // batches with page-locked copies, waited for outside sem
			defer wg.Done()
			addr, err := b.Alloc(4 * n)
			if err != nil {
				errs <- err
				return
			}
			defer b.Free(addr)
			up, back := b.Pinned(4*n), b.Pinned(4*n)
			if up == nil || back == nil {
				errs <- fmt.Errorf("batch worker %d: no page-locked memory", w)
				return
			}
			defer b.Unpin(up)
			defer b.Unpin(back)
			for i := 0; i < iters; i++ {
				k := uint32(2<<20 + w*1000 + i)
				for j := 0; j < n; j++ {
					binary.LittleEndian.PutUint32(up[4*j:], k)
				}
				err := b.Batch(func(be cudart.Backend) error {
					if err := be.CopyHtoD(addr, up); err != nil {
						return err
					}
					if err := be.Launch(raw, "addk", grid1(n), [][]byte{u64(addr), u32(n), u32(k)}); err != nil {
						return err
					}
					return be.CopyDtoH(back, addr)
				})
				if err != nil {
					errs <- err
					return
				}
				if err := addkWrote(back, k); err != nil {
					errs <- fmt.Errorf("batch worker %d iter %d: %w", w, i, err)
					return
				}
			}
		}(w)
		go func(w int) { // through the Device
			defer wg.Done()
			buf, err := dev.Alloc(cudart.U32, n)
			if err != nil {
				errs <- err
				return
			}
			defer dev.Free(buf)
			got := make([]uint32, n)
			for i := 0; i < iters; i++ {
				k := uint32(w*1000 + i)
				if err := dev.Launch(mod, "addk", grid1(n), cudart.Out(buf), cudart.ScalarU32(n), cudart.ScalarU32(k)); err != nil {
					errs <- err
					return
				}
				if err := dev.Read(got, buf); err != nil {
					errs <- err
					return
				}
				for j, v := range got {
					if v != uint32(j)+k {
						errs <- fmt.Errorf("device worker %d iter %d: element %d = %d, want %d", w, i, j, v, uint32(j)+k)
						return
					}
				}
			}
		}(w)
		go func(w int) { // the raw backend, concurrently with the Device
			defer wg.Done()
			addr, err := b.Alloc(4 * n)
			if err != nil {
				errs <- err
				return
			}
			defer b.Free(addr)
			out := make([]byte, 4*n)
			for i := 0; i < iters; i++ {
				k := uint32(1<<20 + w*1000 + i)
				if err := b.Launch(raw, "addk", grid1(n), [][]byte{u64(addr), u32(n), u32(k)}); err != nil {
					errs <- err
					return
				}
				if err := b.CopyDtoH(out, addr); err != nil {
					errs <- err
					return
				}
				if err := addkWrote(out, k); err != nil {
					errs <- fmt.Errorf("raw worker %d iter %d: %w", w, i, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s := dev.Stats(); s.Launches != workers*iters {
		t.Errorf("device launches %d, want %d", s.Launches, workers*iters)
	}
}

// addkWrote reports the first 32-bit word of out that is not what addk
// with k writes there (its index plus k).
func addkWrote(out []byte, k uint32) error {
	for j := 0; j < len(out)/4; j++ {
		if v := binary.LittleEndian.Uint32(out[4*j:]); v != uint32(j)+k {
			return fmt.Errorf("element %d = %d, want %d", j, v, uint32(j)+k)
		}
	}
	return nil
}

// TestElapsed: device time of queued launches, with no synchronisation
// between them.
func TestElapsed(t *testing.T) {
	b := open(t, Config{})
	m := load(t, b, "spin", spinPTX)
	g := cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(1)}
	const iters, each = 10, 2 * time.Millisecond
	var first, last time.Time
	d, err := b.Elapsed(iters, func() error {
		if first.IsZero() {
			first = time.Now()
		}
		err := b.Launch(m, "spin", g, [][]byte{u64(uint64(each))})
		last = time.Now()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	host := last.Sub(first)
	t.Logf("%d launches of a %v kernel: device %v; host time to queue them %v", iters, each, d, host)
	if d < iters*each*9/10 || d > time.Second {
		t.Errorf("device time %v for %d×%v", d, iters, each)
	}
	if host > d/2 {
		t.Errorf("queueing took %v of %v: launches were synchronised", host, d)
	}
	// Synchronous again afterwards.
	start := time.Now()
	if err := b.Launch(m, "spin", g, [][]byte{u64(uint64(50 * time.Millisecond))}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 45*time.Millisecond {
		t.Errorf("Launch after Elapsed returned after %v, before its 50ms kernel ended", took)
	}
	// Through a Device, and the launch function's error.
	dev := cudart.New(b, cudart.DefaultOptions())
	mod, err := dev.Load("spin", []byte(spinPTX))
	if err != nil {
		t.Fatal(err)
	}
	d, err = dev.Elapsed(5, func() error { return dev.Launch(mod, "spin", g, cudart.ScalarU64(uint64(each))) })
	t.Logf("through the Device: %v, %v", d, err)
	if err != nil || d < 5*each*9/10 {
		t.Errorf("device Elapsed: %v, %v", d, err)
	}
	boom := errors.New("boom")
	if _, err := dev.Elapsed(3, func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("launch error: got %v", err)
	}
}

func TestSharedMemoryOptIn(t *testing.T) {
	b := open(t, Config{})
	p := b.Properties()
	limit := p.SharedPerBlockOptin
	if limit <= p.SharedPerBlock {
		t.Skipf("no opt-in shared memory (%d, %d)", p.SharedPerBlock, limit)
	}
	limit &^= 1023
	m := load(t, b, "shm", shmPTX)
	out, err := b.Alloc(4)
	if err != nil {
		t.Fatal(err)
	}
	g := cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(32), SharedBytes: limit}
	if err := b.Launch(m, "shm", g, [][]byte{u64(out), u32(uint32(limit))}); err != nil {
		t.Fatalf("%d bytes of dynamic shared memory: %v", limit, err)
	}
	got := make([]byte, 4)
	if err := b.CopyDtoH(got, out); err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint32(got); v != 7 {
		t.Errorf("read back %d from the top of %d bytes of shared memory, want 7", v, limit)
	}
}

func TestCloseTwice(t *testing.T) {
	b := open(t, Config{})
	m := load(t, b, "fill", fillPTX)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for what, err := range map[string]error{
		"launch": b.Launch(m, "fill", grid1(1), [][]byte{u64(0), u32(0), u32(0)}),
		"copy":   b.CopyHtoD(256, []byte{1}),
		"free":   b.Free(256),
	} {
		if !errors.Is(err, cudart.ErrClosed) {
			t.Errorf("%s after Close: %v", what, err)
		}
	}
	if _, err := b.LoadModule("fill", []byte(fillPTX)); !errors.Is(err, cudart.ErrClosed) {
		t.Errorf("load after Close: %v", err)
	}
}

// TestNoDevice runs this binary again with no visible device: Open must
// return ErrNoDevice — the process must not exit in a package init, as
// gorgonia.org/cu's would without the cuInit interposer (cuinit.go).
func TestNoDevice(t *testing.T) {
	if os.Getenv("PTXPROP_GPU_CHILD") == "nodevice" {
		_, err := Open(Config{})
		_, err2 := cudart.Open("gpu", cudart.DefaultOptions())
		fmt.Printf("child: %v | %v\n", err, err2)
		if errors.Is(err, cudart.ErrNoDevice) && errors.Is(err2, cudart.ErrNoDevice) {
			fmt.Println("nodevice-ok")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoDevice$", "-test.v")
	cmd.Env = append(os.Environ(), "PTXPROP_GPU_CHILD=nodevice", "CUDA_VISIBLE_DEVICES=")
	out, err := cmd.CombinedOutput()
	t.Logf("child output:\n%s", out)
	if err != nil || !strings.Contains(string(out), "nodevice-ok") {
		t.Errorf("child without a device: %v", err)
	}
}

var entryRE = regexp.MustCompile(`\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*\(`)

// TestJITDir JIT-compiles every *.ptx file in $PTXPROP_JIT_DIR (e.g. the
// committed kernels/ptx) on this device and reports each entry's parameter
// sizes as the driver sees them. Skipped when the variable is unset.
func TestJITDir(t *testing.T) {
	dir := os.Getenv("PTXPROP_JIT_DIR")
	if dir == "" {
		t.Skip("PTXPROP_JIT_DIR not set")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.ptx"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no PTX in %s (%v)", dir, err)
	}
	b := open(t, Config{})
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := b.LoadModule(filepath.Base(f), text)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, e := range entryRE.FindAllSubmatch(text, -1) {
			sizes, err := b.ParamSizes(m, string(e[1]))
			if err != nil {
				t.Errorf("%s: %s: %v", f, e[1], err)
				continue
			}
			t.Logf("%s: %s: JIT ok, parameter sizes %v", filepath.Base(f), e[1], sizes)
		}
	}
}

// TestElapsedExcludesQueueGaps: launches queued slowly by the host are timed
// back to back on the device (behind the hold kernel), not with the host's
// gaps between them.
func TestElapsedExcludesQueueGaps(t *testing.T) {
	b := open(t, Config{})
	m := load(t, b, "fill", fillPTX)
	out, err := b.Alloc(4 * 1024)
	if err != nil {
		t.Fatal(err)
	}
	const iters, gap = 20, 300 * time.Microsecond
	d, err := b.Elapsed(iters, func() error {
		time.Sleep(gap)
		return b.Launch(m, "fill", grid1(1024), [][]byte{u64(out), u32(1024), u32(0)})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d small launches queued %v apart: device %v", iters, gap, d)
	if d > iters*gap/4 {
		t.Errorf("device time %v includes the host's gaps (%d × %v)", d, iters, gap)
	}
}

// TestBatchFill: Fill32 through Batch, read back in the same hand-off; Close
// is refused inside a batch.
func TestBatchFill(t *testing.T) {
	b := open(t, Config{})
	addr, err := b.Alloc(4 * 1000)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4*1000)
	err = b.Batch(func(be cudart.Backend) error {
		if err := be.(cudart.Filler).Fill32(addr, 1000, 0x7FC0BAD0); err != nil {
			return err
		}
		if err := be.(cudart.Filler).Fill32(addr+4*10, 5, 7); err != nil {
			return err
		}
		if err := be.Close(); !errors.Is(err, cudart.ErrInvalid) {
			t.Errorf("Close inside Batch: %v", err)
		}
		return be.CopyDtoH(got, addr)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		want := uint32(0x7FC0BAD0)
		if i >= 10 && i < 15 {
			want = 7
		}
		if v := binary.LittleEndian.Uint32(got[4*i:]); v != want {
			t.Fatalf("word %d = %#x, want %#x", i, v, want)
		}
	}
}

// TestPinned: page-locked memory from Pinned goes to and from the device
// directly (queued inside Batch), is reused once given back, and nothing
// else is taken for it.
func TestPinned(t *testing.T) {
	b := open(t, Config{})
	const n = 1<<20 + 3
	if b.Pinned(0) != nil || b.Pinned(pinMax+1) != nil {
		t.Error("Pinned(0) or Pinned(pinMax+1) returned memory")
	}
	src, dst := b.Pinned(n), b.Pinned(n)
	if len(src) != n || cap(src) != 2<<20 || dst == nil {
		t.Fatalf("Pinned(%d): len %d cap %d, second nil=%v", n, len(src), cap(src), dst == nil)
	}
	if _, ok := b.pinned(src); !ok {
		t.Fatal("a slice from Pinned is not recognised as pinned")
	}
	if _, ok := b.pinned(make([]byte, n)); ok {
		t.Fatal("Go memory is taken for pinned")
	}
	for i := range src {
		src[i] = byte(i * 7)
	}
	addr, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Batch(func(be cudart.Backend) error {
		if err := be.CopyHtoD(addr, src); err != nil {
			return err
		}
		return be.CopyDtoH(dst, addr)
	})
	if err != nil {
		t.Fatal(err)
	}
	if i := bytesDiff(src, dst); i >= 0 {
		t.Fatalf("byte %d came back as %#x, want %#x", i, dst[i], src[i])
	}
	// Outside Batch, synchronously, and into Go memory from pinned memory.
	for i := range src {
		src[i] = byte(i * 13)
	}
	if err := b.CopyHtoD(addr, src); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	if err := b.CopyDtoH(got, addr); err != nil {
		t.Fatal(err)
	}
	if i := bytesDiff(src, got); i >= 0 {
		t.Fatalf("synchronous copy: byte %d is %#x, want %#x", i, got[i], src[i])
	}
	p := &src[0]
	b.Unpin(src)
	b.Unpin(src)             // given back twice: ignored
	b.Unpin(make([]byte, n)) // not from Pinned: ignored
	again, other := b.Pinned(n), b.Pinned(n-5)
	if &again[0] != p || &other[0] == p {
		t.Errorf("given-back memory not reused exactly once")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if b.Pinned(n) != nil {
		t.Error("Pinned after Close returned memory")
	}
}

func bytesDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestOpenThroughCudart: cudart.Open hands the ordinal and a Config in
// Options.Backend to the backend, and the Device takes the backend's
// declared capabilities.
func TestOpenThroughCudart(t *testing.T) {
	open(t, Config{}) // skips without a GPU
	opts := cudart.DefaultOptions()
	opts.Backend = Config{CopyBytes: -1}
	d, err := cudart.Open("gpu", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if info := d.Info(); d.Capabilities() != Caps || info.Ordinal != 0 || info.CopyBandwidth != 0 {
		t.Errorf("capabilities %v, info %+v; want %v, ordinal 0, no bandwidth measured (CopyBytes -1)", d.Capabilities(), info, Caps)
	}
	opts.Ordinal = 1 << 20
	if _, err := cudart.Open("gpu", opts); !errors.Is(err, cudart.ErrNoDevice) {
		t.Errorf("ordinal %d: %v, want ErrNoDevice", opts.Ordinal, err)
	}
}

// TestBatchWaitsOutsideSem: a batch whose kernel runs for a while gives
// sem back once its work is queued, so another call runs before the batch
// returns, and the batch still returns only after its copy back, into
// page-locked memory, has arrived.
func TestBatchWaitsOutsideSem(t *testing.T) {
	b := open(t, Config{})
	raw := load(t, b, "addk", addkPTX)
	const n = 4096
	addr, err := b.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	dst := b.Pinned(4 * n)
	if dst == nil {
		t.Fatal("Pinned returned no page-locked memory")
	}
	queued, returned := make(chan struct{}), make(chan struct{})
	var berr error
	go func() {
		defer close(returned)
		berr = b.Batch(func(be cudart.Backend) error {
			if err := b.launchHold(300 * time.Millisecond); err != nil {
				return err
			}
			if err := be.Launch(raw, "addk", grid1(n), [][]byte{u64(addr), u32(n), u32(77)}); err != nil {
				return err
			}
			err := be.CopyDtoH(dst, addr)
			close(queued)
			return err
		})
	}()
	<-queued
	start := time.Now()
	if err := b.do(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	select {
	case <-returned:
		t.Errorf("another call waited for the batch's device work (%v): sem was held through it", took)
	default:
		t.Logf("another call ran %v after the batch had queued its work", took)
	}
	<-returned
	if berr != nil {
		t.Fatal(berr)
	}
	if err := addkWrote(dst, 77); err != nil {
		t.Fatalf("after Batch returned: %v", err)
	}
}

// TestBatchFault: a kernel fault in a batch whose copy back is only queued
// is reported by that batch, when its wait happens outside sem.
func TestBatchFault(t *testing.T) {
	if !inChild(t) {
		return
	}
	b := open(t, Config{})
	m := load(t, b, "store", storePTX)
	dst := b.Pinned(256)
	if dst == nil {
		t.Fatal("Pinned returned no page-locked memory")
	}
	addr, err := b.Alloc(256)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Batch(func(be cudart.Backend) error {
		if err := be.Launch(m, "store", cudart.Geometry{Grid: cudart.D1(1), Block: cudart.D1(1)}, [][]byte{u64(16)}); err != nil {
			return err
		}
		return be.CopyDtoH(dst, addr)
	})
	t.Logf("batch with a store to 0x10: %v", err)
	if !errors.Is(err, ErrIllegalAddress) || !errors.Is(err, cudart.ErrOutOfBounds) {
		t.Fatalf("got %v, want CUDA_ERROR_ILLEGAL_ADDRESS", err)
	}
	if !errors.Is(Fault(), ErrIllegalAddress) {
		t.Errorf("Fault() = %v", Fault())
	}
}
