package falsify

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
)

// Launcher mutants: Go implementations of the contracts' interfaces whose
// bug is in the host code (a cache key, a lock, what is uploaded), wrapping
// package kernels' descriptors.

// ---------------------------------------------------------------------------
// atomic-dgamma

// kAtomic is the descriptor of falsify/src/atomic_dgamma.patch (a patch of
// kernels/src/rmsnorm_bwd.cu): the row-warp backward, renamed, with dγ
// accumulated by float atomics into a zeroed [hidden].
var kAtomic = &kernels.Kernel{
	Name: "rmsnorm_bwd_atomic", Entry: "rmsnorm_bwd_atomic", Source: "falsify/src/atomic_dgamma.patch",
	PTXFile: "falsify/ptx/atomic_dgamma.ptx", PTX: mutantPTX("atomic_dgamma"),
	Params: []kernels.ParamSpec{
		fin("x", rowsHidden), fin("gamma", hiddenLen), fin("rms", rowsLen), fin("dy", rowsHidden),
		{Name: "dx", Kind: cudart.F32, Role: cudart.RoleOut, Elems: rowsHidden},
		{Name: "dgamma", Kind: cudart.F32, Role: cudart.RoleInOut, Elems: hiddenLen},
		dimU32("rows", func(s op.Shape) int { return s.Rows }), dimU32("hidden", func(s op.Shape) int { return s.Hidden }),
	},
	Geometry: func(s op.Shape) cudart.Geometry {
		return cudart.Geometry{Grid: cudart.D1((s.Rows + kernels.WarpsPerBlock - 1) / kernels.WarpsPerBlock), Block: cudart.D1(kernels.BlockThreads)}
	},
	Deterministic: false,
	Reductions: func(s op.Shape) []op.Reduction {
		return []op.Reduction{
			{Name: "Σ γ·dy·x̂ per row", Terms: s.Hidden, Serial: (s.Hidden + 31) / 32, Tree: 5},
			// Float atomics add in any order: the serial worst case over rows.
			{Name: "dγ: Σ_rows dy·x̂ per column (float atomics)", Terms: s.Rows, Serial: s.Rows},
		}
	},
}

func rowsHidden(s op.Shape) int { return s.Rows * s.Hidden }
func hiddenLen(s op.Shape) int  { return s.Hidden }
func rowsLen(s op.Shape) int    { return s.Rows }

func fin(name string, elems func(op.Shape) int) kernels.ParamSpec {
	return kernels.ParamSpec{Name: name, Kind: cudart.F32, Role: cudart.RoleIn, Elems: elems}
}

func dimU32(name string, v func(op.Shape) int) kernels.ParamSpec {
	return kernels.ParamSpec{Name: name, Kind: cudart.U32, Value: func(s op.Shape) uint64 { return uint64(v(s)) }}
}

// atomicBackward is the upstream batched backward before the
// FALSIFY-GPUTRAIN-006 fix: one launch, dγ by atomicAdd. It describes its
// sums (so tolerances are right) but does not list its kernels: only the
// dynamic part of the determinism prediction (schedules, repeated
// launches) can see it.
type atomicBackward struct{ k *kernels.Kernel }

// atomicBackwardListed also lists its kernel, so the static part of the
// prediction (no float atomic in the PTX) inspects it.
type atomicBackwardListed struct{ atomicBackward }

func (m atomicBackward) Reductions(s op.Shape) []op.Reduction { return m.k.Reductions(s) }

func (m atomicBackwardListed) Kernels() []*kernels.Kernel { return []*kernels.Kernel{m.k} }

func (m atomicBackward) RMSNormBackward(dev cudart.Device, a *op.RMSNormBackwardArgs) error {
	return kernels.Host(dev, op.RMSNormBackward, m.k.Name, a, func(b kernels.Buffers) error {
		dg := b.Get("dgamma")
		if err := dev.Write(dg, make([]float32, a.Hidden)); err != nil { // the atomics add into it
			return err
		}
		return m.k.Launch(dev, op.Shape{Rows: a.Rows, Hidden: a.Hidden}, cudart.In(b.Get("x")), cudart.In(b.Get("gamma")),
			cudart.In(b.Get("rms")), cudart.In(b.Get("dy")), cudart.Out(b.Get("dx")), cudart.InOut(dg),
			cudart.ScalarU32(uint32(a.Rows)), cudart.ScalarU32(uint32(a.Hidden)))
	})
}

// ---------------------------------------------------------------------------
// baked-dims, stale-eps-cache, stale-theta-cache: PTX text specialised per
// call (a value compiled in as an immediate), modules cached under a key.

// specialised is an RMSNorm forward whose two kernels are k and krms baked
// with values.
func specialised(values map[string]uint64) (kernels.RMSNormForward, error) {
	f := kernels.RMSNormFwd
	text, err := bake(f.K, values)
	if err != nil {
		return f, err
	}
	textRMS, err := bake(f.KRMS, values)
	if err != nil {
		return f, err
	}
	return kernels.RMSNormForward{K: f.K.WithPTX(text), KRMS: f.KRMS.WithPTX(textRMS)}, nil
}

// bakedDims bakes rows and hidden into the forward's PTX (the .params stay
// declared and are never read, as in upstream trueno-gpu) and caches one
// specialised module per shape: correct values, one module load per shape.
type bakedDims struct {
	mu    sync.Mutex
	cache map[[2]int]kernels.RMSNormForward
}

func (b *bakedDims) RMSNormForward(dev cudart.Device, a *op.RMSNormForwardArgs) error {
	b.mu.Lock()
	key := [2]int{a.Rows, a.Hidden}
	f, ok := b.cache[key]
	if !ok {
		var err error
		if f, err = specialised(map[string]uint64{"rows": uint64(uint32(a.Rows)), "hidden": uint64(uint32(a.Hidden))}); err != nil {
			b.mu.Unlock()
			return err
		}
		b.cache[key] = f
	}
	b.mu.Unlock()
	return f.RMSNormForward(dev, a)
}

// staleEps bakes ε into the forward's PTX and caches the module under a
// key without ε (the hidden size only): the first ε used for a hidden size
// serves every later call with that hidden size.
type staleEps struct {
	mu    sync.Mutex
	cache map[int]kernels.RMSNormForward
}

func (c *staleEps) RMSNormForward(dev cudart.Device, a *op.RMSNormForwardArgs) error {
	c.mu.Lock()
	f, ok := c.cache[a.Hidden] // THE BUG: the key lacks the ε bits
	if !ok {
		var err error
		if f, err = specialised(map[string]uint64{"eps": uint64(math.Float32bits(a.Eps))}); err != nil {
			c.mu.Unlock()
			return err
		}
		c.cache[a.Hidden] = f
	}
	c.mu.Unlock()
	return f.RMSNormForward(dev, a)
}

// staleTheta is the single-position RoPE forward with θ baked into its PTX
// and the module cached under (heads, head_dim) without θ: upstream's
// FALSIFY-CUDA-ROPE-THETA-CACHE-KEY-001 (Llama's 1e4 cached first, Qwen's
// 1e6 calls reuse it).
type staleTheta struct {
	mu    sync.Mutex
	cache map[[2]int]kernels.RoPEForward
}

func (c *staleTheta) RoPEForward(dev cudart.Device, a *op.RoPEForwardArgs) error {
	c.mu.Lock()
	key := [2]int{a.Heads, a.HeadDim} // THE BUG: the key lacks the θ bits
	f, ok := c.cache[key]
	if !ok {
		k := kernels.RoPEFwd.K
		text, err := bake(k, map[string]uint64{"theta": uint64(math.Float32bits(a.Theta))})
		if err != nil {
			c.mu.Unlock()
			return err
		}
		f = kernels.RoPEForward{K: k.WithPTX(text)}
		c.cache[key] = f
	}
	c.mu.Unlock()
	return f.RoPEForward(dev, a)
}

// ---------------------------------------------------------------------------
// reentrant-cache-lock

// errAbandoned is returned to a call still waiting on the mutant's lock
// when the mutant is discarded.
var errAbandoned = errors.New("falsify: reentrant-cache-lock: lock wait abandoned when the mutant was discarded")

// reentrantFused is the fused residual + RMSNorm launcher of upstream
// aprender-train before its fix: it holds the module-cache lock (a
// non-reentrant mutex) while it calls the residual-add launcher, which
// takes the same lock. The first call never returns. The lock is a
// one-slot channel so that discarding the mutant (close) can release the
// goroutines stuck on it instead of leaking them.
type reentrantFused struct {
	sem   chan struct{}
	stop  chan struct{}
	once  sync.Once
	cache map[string]kernels.FusedResidualRMSNorm
}

func newReentrantFused() *reentrantFused {
	return &reentrantFused{sem: make(chan struct{}, 1), stop: make(chan struct{}), cache: map[string]kernels.FusedResidualRMSNorm{}}
}

func (r *reentrantFused) lock() error {
	select {
	case r.sem <- struct{}{}:
		return nil
	case <-r.stop:
		return errAbandoned
	}
}

func (r *reentrantFused) unlock() { <-r.sem }

func (r *reentrantFused) close() { r.once.Do(func() { close(r.stop) }) }

// module looks the implementation up; the caller holds the lock.
func (r *reentrantFused) module(key string) kernels.FusedResidualRMSNorm {
	f, ok := r.cache[key]
	if !ok {
		f = kernels.FusedResidualRMSNormFwd
		r.cache[key] = f
	}
	return f
}

// residualAdd is the public residual-add launcher: it takes the cache lock
// to find its module, then computes residual_out = residual + x.
func (r *reentrantFused) residualAdd(dev cudart.Device, a *op.FusedResidualRMSNormArgs) error {
	if err := r.lock(); err != nil {
		return err
	}
	f := r.module(fmt.Sprintf("residual_add_%d", a.Hidden))
	r.unlock()
	b := *a
	b.Y = make([]float32, len(a.Y))
	return f.FusedResidualRMSNorm(dev, &b)
}

func (r *reentrantFused) FusedResidualRMSNorm(dev cudart.Device, a *op.FusedResidualRMSNormArgs) error {
	if err := r.lock(); err != nil {
		return err
	}
	defer r.unlock()
	f := r.module(fmt.Sprintf("fused_residual_rmsnorm_%d_eps%08x", a.Hidden, math.Float32bits(a.Eps)))
	// THE BUG: the cache lock is still held; residualAdd takes it again.
	if err := r.residualAdd(dev, a); err != nil {
		return err
	}
	return f.FusedResidualRMSNorm(dev, a)
}

// ---------------------------------------------------------------------------
// batch-dependent-block

// batchDependentBlock returns the RMSNorm forward kernels with a launch
// geometry that depends on the batch: 256 threads per row for one row, 128
// for more ("small batches get more threads"). Each row's sum is then
// partitioned differently alone and in a batch: the same values within
// rounding, different bits.
func batchDependentBlock() []*kernels.Kernel {
	var ks []*kernels.Kernel
	for _, k := range []*kernels.Kernel{kernels.RMSNormFwd.K, kernels.RMSNormFwd.KRMS} {
		c := k.WithPTX(k.PTX)
		geometry := k.Geometry
		c.Geometry = func(s op.Shape) cudart.Geometry {
			g := geometry(s)
			if s.Rows > 1 { // THE BUG: the geometry depends on the batch
				g.Block = cudart.D1(kernels.BlockThreads / 2)
			}
			return g
		}
		ks = append(ks, c)
	}
	return ks
}

// ---------------------------------------------------------------------------
// sm-count-chunking

// smCountChunked is the chunked RMSNorm backward with its row partition
// taken from the device's SM count (one chunk of rows per SM) instead of
// from the shape alone: dγ is then summed in a different order on devices
// with different SM counts, so the GPU and the emulator (which reports no
// SMs and keeps the shape's partition) disagree in the last bits.
// With perDevice set, that function of the device (a per-device tuning
// table, say) stands for the SM count: devices of one model then disagree
// too.
type smCountChunked struct{ perDevice func(cudart.Info) int }

func (m smCountChunked) chunk(dev cudart.Device, rows int) int {
	sms := dev.Info().SMs
	if m.perDevice != nil {
		sms = m.perDevice(dev.Info())
	}
	if sms > 0 { // THE BUG: a device fact decides the order
		return max(1, (rows+sms-1)/sms)
	}
	return kernels.ChunkRows(rows)
}

func (m smCountChunked) RMSNormBackward(dev cudart.Device, a *op.RMSNormBackwardArgs) error {
	if a.Rows <= 0 {
		return cudart.Errorf(cudart.ErrInvalid, "sm-count-chunking: rows=%d", a.Rows)
	}
	chunk := m.chunk(dev, a.Rows)
	blocks := (a.Rows + chunk - 1) / chunk
	orig := kernels.RMSNormBwdChunk.K
	k := orig.WithPTX(orig.PTX)
	for i := range k.Params {
		switch k.Params[i].Name {
		case "partial":
			k.Params[i].Elems = func(s op.Shape) int { return blocks * s.Hidden }
		case "chunk":
			k.Params[i].Value = nil
		}
	}
	k.Geometry = func(s op.Shape) cudart.Geometry {
		g := cudart.Geometry{Grid: cudart.D1(blocks), Block: cudart.D1(kernels.ChunkThreads(s.Hidden))}
		if s.Hidden <= kernels.AccSharedMax {
			g.SharedBytes = 4 * s.Hidden
		}
		return g
	}
	return kernels.Host(dev, op.RMSNormBackward, "sm-count-chunking", a, func(b kernels.Buffers) error {
		partial, err := b.Scratch("partial", cudart.F32, blocks*a.Hidden)
		if err != nil {
			return err
		}
		s := op.Shape{Rows: a.Rows, Hidden: a.Hidden}
		if err := k.Launch(dev, s, cudart.In(b.Get("x")), cudart.In(b.Get("gamma")), cudart.In(b.Get("rms")), cudart.In(b.Get("dy")),
			cudart.Out(b.Get("dx")), cudart.Out(partial), cudart.ScalarU32(uint32(a.Rows)), cudart.ScalarU32(uint32(a.Hidden)),
			cudart.ScalarU32(uint32(chunk))); err != nil {
			return err
		}
		return kernels.ColSum.K.Launch(dev, op.Shape{Rows: blocks, Hidden: a.Hidden}, cudart.In(partial), cudart.Out(b.Get("dgamma")),
			cudart.ScalarU32(uint32(blocks)), cudart.ScalarU32(uint32(a.Hidden)))
	})
}
