package kernels

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// fakeBackend is a cudart.Backend with memory but no processor: launches
// are recorded, not run. It tests the launchers' plumbing (validation,
// allocation, argument order, geometry, aliasing, freeing) without a device.
type fakeBackend struct {
	next     uint64
	mem      map[uint64][]byte
	launches []fakeLaunch
	failOn   string // entry whose launch fails
}

type fakeLaunch struct {
	entry  string
	g      cudart.Geometry
	params [][]byte
}

func newFake() *fakeBackend { return &fakeBackend{next: 1 << 20, mem: map[uint64][]byte{}} }

func (f *fakeBackend) Info() cudart.Info         { return cudart.Info{Backend: "fake", Name: "fake"} }
func (f *fakeBackend) Capabilities() cudart.Caps { return 0 }
func (f *fakeBackend) LoadModule(name string, ptx []byte) (cudart.ModuleHandle, error) {
	return name, nil
}
func (f *fakeBackend) UnloadModule(cudart.ModuleHandle) error { return nil }
func (f *fakeBackend) Alloc(n int) (uint64, error) {
	a := f.next
	f.mem[a] = make([]byte, n)
	f.next += uint64(n+255)/256*256 + 256
	return a, nil
}
func (f *fakeBackend) Free(a uint64) error {
	if _, ok := f.mem[a]; !ok {
		return fmt.Errorf("free of unknown %#x", a)
	}
	delete(f.mem, a)
	return nil
}
func (f *fakeBackend) find(a uint64, n int) ([]byte, error) {
	for base, m := range f.mem {
		if a >= base && a+uint64(n) <= base+uint64(len(m)) {
			return m[a-base : a-base+uint64(n)], nil
		}
	}
	return nil, fmt.Errorf("no allocation holds [%#x, +%d)", a, n)
}
func (f *fakeBackend) CopyHtoD(dst uint64, src []byte) error {
	m, err := f.find(dst, len(src))
	if err == nil {
		copy(m, src)
	}
	return err
}
func (f *fakeBackend) CopyDtoH(dst []byte, src uint64) error {
	m, err := f.find(src, len(dst))
	if err == nil {
		copy(dst, m)
	}
	return err
}
func (f *fakeBackend) Launch(m cudart.ModuleHandle, entry string, g cudart.Geometry, params [][]byte) error {
	f.launches = append(f.launches, fakeLaunch{entry, g, params})
	if entry == f.failOn {
		return cudart.Errorf(cudart.ErrLaunch, "fake failure")
	}
	return nil
}
func (f *fakeBackend) Close() error { return nil }

func fakeDevice(t *testing.T) (cudart.Device, *fakeBackend) {
	fb := newFake()
	dev := cudart.New(fb, cudart.DefaultOptions())
	t.Cleanup(func() { dev.Close() })
	return dev, fb
}

func f32s(n int) []float32 { return make([]float32, n) }

// hostCalls builds one well-formed host-level call per implementation for
// a shape, and a description of the launches it must make.
type hostCall struct {
	name    string
	run     func(cudart.Device) error
	entries []string
}

func hostCalls(rows, hidden int) []hostCall {
	n := rows * hidden
	heads, hd := 2, hidden/2
	hd -= hd % 2
	nh := rows * heads * hd
	bwd := func() *op.RMSNormBackwardArgs {
		return &op.RMSNormBackwardArgs{Rows: rows, Hidden: hidden, X: f32s(n), Gamma: f32s(hidden), RMS: f32s(rows), DY: f32s(n), DX: f32s(n), DGamma: f32s(hidden)}
	}
	pos := make([]uint32, rows)
	return []hostCall{
		{"RMSNormFwd", func(d cudart.Device) error {
			return RMSNormFwd.RMSNormForward(d, &op.RMSNormForwardArgs{Rows: rows, Hidden: hidden, Eps: 1e-5, X: f32s(n), Gamma: f32s(hidden), Y: f32s(n)})
		}, []string{"rmsnorm_fwd"}},
		{"RMSNormFwd+rms", func(d cudart.Device) error {
			return RMSNormFwd.RMSNormForward(d, &op.RMSNormForwardArgs{Rows: rows, Hidden: hidden, Eps: 1e-5, X: f32s(n), Gamma: f32s(hidden), Y: f32s(n), RMS: f32s(rows)})
		}, []string{"rmsnorm_fwd_rms"}},
		{"RMSNormBwdWarp32", func(d cudart.Device) error { return RMSNormBwdWarp32.RMSNormBackward(d, bwd()) },
			[]string{"rmsnorm_bwd_warp32", "colsum_f32"}},
		{"RMSNormBwdWarp", func(d cudart.Device) error { return RMSNormBwdWarp.RMSNormBackward(d, bwd()) },
			[]string{"rmsnorm_bwd_rowwarp", "colsum_f32"}},
		{"RMSNormBwdChunk", func(d cudart.Device) error { return RMSNormBwdChunk.RMSNormBackward(d, bwd()) },
			[]string{"rmsnorm_bwd_chunk", "colsum_f32"}},
		{"FusedResidualRMSNorm", func(d cudart.Device) error {
			return FusedResidualRMSNormFwd.FusedResidualRMSNorm(d, &op.FusedResidualRMSNormArgs{Rows: rows, Hidden: hidden, Eps: 1e-6,
				Residual: f32s(n), X: f32s(n), Gamma: f32s(hidden), ResidualOut: f32s(n), Y: f32s(n)})
		}, []string{"fused_residual_rmsnorm"}},
		{"LayerNormFwd", func(d cudart.Device) error {
			return LayerNormFwd.LayerNormForward(d, &op.LayerNormForwardArgs{Rows: rows, Hidden: hidden, Eps: 1e-5, X: f32s(n), Gamma: f32s(hidden), Beta: f32s(hidden), Y: f32s(n)})
		}, []string{"layernorm_fwd"}},
		{"LayerNormFwd+stats", func(d cudart.Device) error {
			return LayerNormFwd.LayerNormForward(d, &op.LayerNormForwardArgs{Rows: rows, Hidden: hidden, Eps: 1e-5, X: f32s(n), Gamma: f32s(hidden), Beta: f32s(hidden), Y: f32s(n), Mean: f32s(rows), Rstd: f32s(rows)})
		}, []string{"layernorm_fwd_stats"}},
		{"LayerNormBwd", func(d cudart.Device) error {
			return LayerNormBwd.LayerNormBackward(d, &op.LayerNormBackwardArgs{Rows: rows, Hidden: hidden, X: f32s(n), Gamma: f32s(hidden), DY: f32s(n),
				Mean: f32s(rows), Rstd: f32s(rows), DX: f32s(n), DGamma: f32s(hidden), DBeta: f32s(hidden)})
		}, []string{"layernorm_bwd_chunk", "colsum_f32", "colsum_f32"}},
		{"PerHeadRMSNorm", func(d cudart.Device) error {
			return PerHeadRMSNormFwd.PerHeadRMSNorm(d, &op.PerHeadRMSNormArgs{Rows: rows, Heads: heads, HeadDim: hd, Eps: 1e-6, X: f32s(nh), Gamma: f32s(hd), Y: f32s(nh)})
		}, []string{"per_head_rmsnorm"}},
		{"RoPEFwd", func(d cudart.Device) error {
			return RoPEFwd.RoPEForward(d, &op.RoPEForwardArgs{Rows: rows, Heads: heads, HeadDim: hd, Theta: 1e4, Pos: 3, X: f32s(nh), Y: f32s(nh)})
		}, []string{"rope_neox_fwd"}},
		{"RoPEFwdBatched", func(d cudart.Device) error {
			return RoPEFwdBatched.RoPEForward(d, &op.RoPEForwardArgs{Rows: rows, Heads: heads, HeadDim: hd, Theta: 1e4, Positions: pos, X: f32s(nh), Y: f32s(nh)})
		}, []string{"rope_neox_fwd_batched"}},
		{"RoPEBwd", func(d cudart.Device) error {
			return RoPEBwd.RoPEBackward(d, &op.RoPEBackwardArgs{Rows: rows, Heads: heads, HeadDim: hd, Theta: 1e4, Positions: pos, DY: f32s(nh), DX: f32s(nh)})
		}, []string{"rope_neox_bwd_batched"}},
		{"SoftmaxFwd", func(d cudart.Device) error {
			return SoftmaxFwd.SoftmaxForward(d, &op.SoftmaxForwardArgs{Rows: rows, Hidden: hidden, X: f32s(n), Y: f32s(n)})
		}, []string{"softmax_fwd"}},
		{"SoftmaxBwd", func(d cudart.Device) error {
			return SoftmaxBwd.SoftmaxBackward(d, &op.SoftmaxBackwardArgs{Rows: rows, Hidden: hidden, Y: f32s(n), DY: f32s(n), DX: f32s(n)})
		}, []string{"softmax_bwd"}},
		{"ColSum", func(d cudart.Device) error {
			return ColSum.ColumnSum(d, &ColumnSumArgs{Rows: rows, Cols: hidden, Partial: f32s(n), Out: f32s(hidden)})
		}, []string{"colsum_f32"}},
	}
}

// TestHostPlumbing runs every host-level launcher on the fake device: it
// must launch the documented entries with the descriptors' geometry and
// free every buffer it allocated.
func TestHostPlumbing(t *testing.T) {
	for _, c := range hostCalls(7, 32) {
		dev, fb := fakeDevice(t)
		if err := c.run(dev); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got []string
		for _, l := range fb.launches {
			got = append(got, l.entry)
		}
		if strings.Join(got, ",") != strings.Join(c.entries, ",") {
			t.Errorf("%s launched %v, want %v", c.name, got, c.entries)
		}
		if n := dev.Stats().LiveBuffers; n != 0 {
			t.Errorf("%s left %d buffers allocated", c.name, n)
		}
		// The Device keeps freed memory for reuse; closing it must return
		// every backend allocation.
		if err := dev.Close(); err != nil {
			t.Errorf("%s: close: %v", c.name, err)
		}
		if len(fb.mem) != 0 {
			t.Errorf("%s left %d backend allocations after Close", c.name, len(fb.mem))
		}
	}
}

// TestHostLaunchFailure: a failing launch is returned wrapped with the
// kernel's name, keeps its cudart code, and frees everything.
func TestHostLaunchFailure(t *testing.T) {
	for _, c := range hostCalls(3, 8) {
		dev, fb := fakeDevice(t)
		fb.failOn = c.entries[len(c.entries)-1]
		err := c.run(dev)
		if !errors.Is(err, cudart.ErrLaunch) {
			t.Errorf("%s: %v, want an error wrapping ErrLaunch", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), "kernels: "+fb.failOn) {
			t.Errorf("%s: %q does not name the kernel", c.name, err)
		}
		if n := dev.Stats().LiveBuffers; n != 0 {
			t.Errorf("%s left %d buffers after a failure", c.name, n)
		}
	}
}

func u32At(p []byte) uint32 { return binary.LittleEndian.Uint32(p) }

// TestChunkedLaunch checks the chunked backward's launches for a shape:
// grid ChunkBlocks, chunk ChunkRows, shared memory by AccSharedMax, then
// colsum over the block rows.
func TestChunkedLaunch(t *testing.T) {
	for _, s := range []op.Shape{{Rows: 1000, Hidden: 896}, {Rows: 100, Hidden: 8193}, {Rows: 3, Hidden: 33}} {
		dev, fb := fakeDevice(t)
		n := s.Rows * s.Hidden
		err := RMSNormBwdChunk.RMSNormBackward(dev, &op.RMSNormBackwardArgs{Rows: s.Rows, Hidden: s.Hidden, X: f32s(n), Gamma: f32s(s.Hidden),
			RMS: f32s(s.Rows), DY: f32s(n), DX: f32s(n), DGamma: f32s(s.Hidden)})
		if err != nil {
			t.Fatal(err)
		}
		k, r := fb.launches[0], fb.launches[1]
		if int(k.g.Grid.X) != ChunkBlocks(s.Rows) || int(k.g.Block.X) != ChunkThreads(s.Hidden) {
			t.Errorf("%v: chunk kernel geometry %v", s, k.g)
		}
		if wantSh := map[bool]int{true: 4 * s.Hidden, false: 0}[s.Hidden <= AccSharedMax]; k.g.SharedBytes != wantSh {
			t.Errorf("%v: %d bytes of shared memory, want %d", s, k.g.SharedBytes, wantSh)
		}
		if got := u32At(k.params[8]); int(got) != ChunkRows(s.Rows) {
			t.Errorf("%v: chunk parameter %d, want %d", s, got, ChunkRows(s.Rows))
		}
		if got := u32At(r.params[2]); int(got) != ChunkBlocks(s.Rows) {
			t.Errorf("%v: colsum over %d rows, want %d", s, got, ChunkBlocks(s.Rows))
		}
		if int(r.g.Grid.X) != ceilDiv(s.Hidden, 32) || r.g.Block != (cudart.Dim3{X: 32, Y: 8, Z: 1}) {
			t.Errorf("%v: colsum geometry %v", s, r.g)
		}
	}
}

// TestFusedAlias: with Alias the kernel gets one device buffer for
// residual and residual_out; without, two.
func TestFusedAlias(t *testing.T) {
	for _, alias := range []bool{false, true} {
		dev, fb := fakeDevice(t)
		n := 4 * 8
		err := FusedResidualRMSNormFwd.FusedResidualRMSNorm(dev, &op.FusedResidualRMSNormArgs{Rows: 4, Hidden: 8, Eps: 1e-6,
			Residual: f32s(n), X: f32s(n), Gamma: f32s(8), Alias: alias, ResidualOut: f32s(n), Y: f32s(n)})
		if err != nil {
			t.Fatal(err)
		}
		p := fb.launches[0].params
		same := string(p[0]) == string(p[3])
		if same != alias {
			t.Errorf("Alias=%v: residual and residual_out share a buffer: %v", alias, same)
		}
	}
}

// TestHostValidation: malformed arguments are rejected with ErrInvalid
// before anything is allocated, never with a panic.
func TestHostValidation(t *testing.T) {
	cases := []struct {
		name, want string
		run        func(cudart.Device) error
	}{
		{"zero rows", "rows=0", func(d cudart.Device) error {
			return RMSNormFwd.RMSNormForward(d, &op.RMSNormForwardArgs{Rows: 0, Hidden: 4, X: f32s(0), Gamma: f32s(4), Y: f32s(0)})
		}},
		{"short x", "len(X)=7", func(d cudart.Device) error {
			return RMSNormFwd.RMSNormForward(d, &op.RMSNormForwardArgs{Rows: 2, Hidden: 4, X: f32s(7), Gamma: f32s(4), Y: f32s(8)})
		}},
		{"bad rms len", "len(RMS)=3", func(d cudart.Device) error {
			return RMSNormFwd.RMSNormForward(d, &op.RMSNormForwardArgs{Rows: 2, Hidden: 4, X: f32s(8), Gamma: f32s(4), Y: f32s(8), RMS: f32s(3)})
		}},
		{"warp32 hidden 33", "hidden <= 32", func(d cudart.Device) error {
			return RMSNormBwdWarp32.RMSNormBackward(d, &op.RMSNormBackwardArgs{Rows: 1, Hidden: 33, X: f32s(33), Gamma: f32s(33), RMS: f32s(1), DY: f32s(33), DX: f32s(33), DGamma: f32s(33)})
		}},
		{"missing dgamma", "len(DGamma)=0", func(d cudart.Device) error {
			return RMSNormBwdChunk.RMSNormBackward(d, &op.RMSNormBackwardArgs{Rows: 1, Hidden: 4, X: f32s(4), Gamma: f32s(4), RMS: f32s(1), DY: f32s(4), DX: f32s(4)})
		}},
		{"huge", "elements", func(d cudart.Device) error {
			return RMSNormFwd.RMSNormForward(d, &op.RMSNormForwardArgs{Rows: 1 << 20, Hidden: 1 << 12})
		}},
		{"negative hidden", "hidden=-1", func(d cudart.Device) error {
			return LayerNormFwd.LayerNormForward(d, &op.LayerNormForwardArgs{Rows: 1, Hidden: -1})
		}},
		{"mean without rstd", "both nil or both set", func(d cudart.Device) error {
			return LayerNormFwd.LayerNormForward(d, &op.LayerNormForwardArgs{Rows: 1, Hidden: 4, X: f32s(4), Gamma: f32s(4), Beta: f32s(4), Y: f32s(4), Mean: f32s(1)})
		}},
		{"odd head_dim", "odd", func(d cudart.Device) error {
			return RoPEFwd.RoPEForward(d, &op.RoPEForwardArgs{Rows: 1, Heads: 1, HeadDim: 3, X: f32s(3), Y: f32s(3)})
		}},
		{"positions on single", "Positions is set", func(d cudart.Device) error {
			return RoPEFwd.RoPEForward(d, &op.RoPEForwardArgs{Rows: 1, Heads: 1, HeadDim: 2, Theta: 1e4, Positions: []uint32{1}, X: f32s(2), Y: f32s(2)})
		}},
		{"no positions on batched", "len(Positions)=0", func(d cudart.Device) error {
			return RoPEFwdBatched.RoPEForward(d, &op.RoPEForwardArgs{Rows: 1, Heads: 1, HeadDim: 2, Theta: 1e4, X: f32s(2), Y: f32s(2)})
		}},
		{"rope theta below 1", "theta=0.5", func(d cudart.Device) error {
			return RoPEFwd.RoPEForward(d, &op.RoPEForwardArgs{Rows: 1, Heads: 1, HeadDim: 2, Theta: 0.5, X: f32s(2), Y: f32s(2)})
		}},
		{"rope theta NaN", "theta=NaN", func(d cudart.Device) error {
			return RoPEFwdBatched.RoPEForward(d, &op.RoPEForwardArgs{Rows: 1, Heads: 1, HeadDim: 2, Theta: float32(math.NaN()), Positions: []uint32{1}, X: f32s(2), Y: f32s(2)})
		}},
		{"rope theta +Inf", "theta=+Inf", func(d cudart.Device) error {
			return RoPEBwd.RoPEBackward(d, &op.RoPEBackwardArgs{Rows: 1, Heads: 1, HeadDim: 2, Theta: float32(math.Inf(1)), Positions: []uint32{1}, DY: f32s(2), DX: f32s(2)})
		}},
		{"per-head gamma", "len(Gamma)=8", func(d cudart.Device) error {
			return PerHeadRMSNormFwd.PerHeadRMSNorm(d, &op.PerHeadRMSNormArgs{Rows: 1, Heads: 2, HeadDim: 4, X: f32s(8), Gamma: f32s(8), Y: f32s(8)})
		}},
		{"fused y", "len(Y)=1", func(d cudart.Device) error {
			return FusedResidualRMSNormFwd.FusedResidualRMSNorm(d, &op.FusedResidualRMSNormArgs{Rows: 1, Hidden: 2, Residual: f32s(2), X: f32s(2), Gamma: f32s(2), ResidualOut: f32s(2), Y: f32s(1)})
		}},
		{"layernorm bwd", "len(Rstd)=0", func(d cudart.Device) error {
			return LayerNormBwd.LayerNormBackward(d, &op.LayerNormBackwardArgs{Rows: 1, Hidden: 2, X: f32s(2), Gamma: f32s(2), DY: f32s(2), Mean: f32s(1), DX: f32s(2), DGamma: f32s(2), DBeta: f32s(2)})
		}},
	}
	for _, c := range cases {
		dev, fb := fakeDevice(t)
		err := c.run(dev)
		if !errors.Is(err, cudart.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalid mentioning %q", c.name, err, c.want)
		}
		if dev.Stats().Allocs != 0 || len(fb.launches) != 0 {
			t.Errorf("%s: allocated or launched before validating", c.name)
		}
	}
}

// TestKernelCheckArgs: the generic launcher refuses arguments that do not
// match the descriptor.
func TestKernelCheckArgs(t *testing.T) {
	dev, fb := fakeDevice(t)
	s := op.Shape{Rows: 2, Hidden: 4}
	x, _ := dev.Alloc(cudart.F32, 8)
	g, _ := dev.Alloc(cudart.F32, 4)
	y, _ := dev.Alloc(cudart.F32, 8)
	short, _ := dev.Alloc(cudart.F32, 7)
	ints, _ := dev.Alloc(cudart.U32, 8)
	rows, hidden, eps := cudart.ScalarU32(2), cudart.ScalarU32(4), cudart.ScalarF32(1e-5)
	cases := []struct {
		name, want string
		args       []cudart.Param
	}{
		{"count", "5 arguments, want 6", []cudart.Param{cudart.In(x), cudart.In(g), cudart.Out(y), rows, hidden}},
		{"scalar for pointer", "want a f32 buffer", []cudart.Param{rows, cudart.In(g), cudart.Out(y), rows, hidden, eps}},
		{"element kind", "want a f32 buffer", []cudart.Param{cudart.In(ints), cudart.In(g), cudart.Out(y), rows, hidden, eps}},
		{"role", "role in, want out", []cudart.Param{cudart.In(x), cudart.In(g), cudart.In(y), rows, hidden, eps}},
		{"short buffer", "needs 8", []cudart.Param{cudart.In(short), cudart.In(g), cudart.Out(y), rows, hidden, eps}},
		{"offset", "needs 8", []cudart.Param{cudart.In(x).At(1), cudart.In(g), cudart.Out(y), rows, hidden, eps}},
		{"scalar kind", "want a u32 scalar", []cudart.Param{cudart.In(x), cudart.In(g), cudart.Out(y), cudart.ScalarI32(2), hidden, eps}},
		{"shape mismatch", "needs 4", []cudart.Param{cudart.In(x), cudart.In(g), cudart.Out(y), rows, cudart.ScalarU32(3), eps}},
	}
	for _, c := range cases {
		err := kRMSNormFwd.Launch(dev, s, c.args...)
		if !errors.Is(err, cudart.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalid mentioning %q", c.name, err, c.want)
		}
	}
	if len(fb.launches) != 0 {
		t.Errorf("%d launches reached the backend", len(fb.launches))
	}
	if err := kRMSNormFwd.Launch(dev, s, cudart.In(x), cudart.In(g), cudart.Out(y), rows, hidden, eps); err != nil {
		t.Errorf("well-formed launch: %v", err)
	}
	if err := kRMSNormFwd.WithPTX(nil).Launch(dev, s, cudart.In(x), cudart.In(g), cudart.Out(y), rows, hidden, eps); !errors.Is(err, cudart.ErrInvalid) {
		t.Errorf("launch without PTX: %v", err)
	}
}

// TestWithPTX: a mutant is a copy; the default is untouched and the device
// loads the mutant as a module of its own.
func TestWithPTX(t *testing.T) {
	orig := append([]byte(nil), kRMSNormFwd.PTX...)
	m := RMSNormFwd.K.WithPTX(append(append([]byte(nil), orig...), "\n// mutant\n"...))
	if string(kRMSNormFwd.PTX) != string(orig) || string(m.PTX) == string(orig) {
		t.Fatal("WithPTX changed the original or did not change the copy")
	}
	if m.Entry != kRMSNormFwd.Entry || len(m.Params) != len(kRMSNormFwd.Params) {
		t.Fatal("WithPTX lost the descriptor")
	}
	dev, _ := fakeDevice(t)
	x, _ := dev.Alloc(cudart.F32, 4)
	g, _ := dev.Alloc(cudart.F32, 4)
	y, _ := dev.Alloc(cudart.F32, 4)
	args := []cudart.Param{cudart.In(x), cudart.In(g), cudart.Out(y), cudart.ScalarU32(1), cudart.ScalarU32(4), cudart.ScalarF32(0)}
	for _, k := range []*Kernel{kRMSNormFwd, m, kRMSNormFwd, m} {
		if err := k.Launch(dev, op.Shape{Rows: 1, Hidden: 4}, args...); err != nil {
			t.Fatal(err)
		}
	}
	if st := dev.Stats(); st.ModuleLoads != 2 {
		t.Errorf("stats %v, want 2 module loads (the committed PTX and the mutant)", st)
	}
}

// TestModuleCachePerDevice: a kernel launched in turn on two devices (as
// the rapid loops of a contract run do) loads its module once on each and
// then asks neither again (a device's own lookup hashes the whole PTX).
func TestModuleCachePerDevice(t *testing.T) {
	k := kRMSNormFwd.WithPTX(kRMSNormFwd.PTX)
	var devs []cudart.Device
	for range 2 {
		dev, _ := fakeDevice(t)
		devs = append(devs, dev)
	}
	for i := range 6 {
		dev := devs[i%2]
		x, _ := dev.Alloc(cudart.F32, 4)
		g, _ := dev.Alloc(cudart.F32, 4)
		y, _ := dev.Alloc(cudart.F32, 4)
		if err := k.Launch(dev, op.Shape{Rows: 1, Hidden: 4}, cudart.In(x), cudart.In(g), cudart.Out(y), cudart.ScalarU32(1), cudart.ScalarU32(4), cudart.ScalarF32(0)); err != nil {
			t.Fatal(err)
		}
	}
	for i, dev := range devs {
		if st := dev.Stats(); st.ModuleLoads != 1 || st.CacheHits != 0 {
			t.Errorf("device %d: %d module loads, %d lookups answered by its cache; want 1 and 0", i, st.ModuleLoads, st.CacheHits)
		}
	}
}
