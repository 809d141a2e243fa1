package kernels

import (
	"embed"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

//go:embed ptx/*.ptx ptx/MANIFEST
var ptxFS embed.FS

// ptxText returns the committed PTX of a family, or nil if it is missing
// (Launch then fails with ErrInvalid; TestEmbeddedPTX fails the build).
func ptxText(family string) []byte {
	b, err := ptxFS.ReadFile("ptx/" + family + ".ptx")
	if err != nil {
		return nil
	}
	return b
}

// Launch-geometry constants. They are capacities of the kernels as written,
// shared with the CUDA sources (MAX_THREADS, MAX_WARPS, ACC_SMEM_MAX,
// FWD_SMEM_MAX, COLSUM_COLS, COLSUM_GROUPS); none is a tensor dimension.
const (
	// BlockThreads is the block size of the row-per-block kernels and of the
	// warp-per-row kernels (WarpsPerBlock rows or heads per block).
	BlockThreads  = 256
	WarpsPerBlock = BlockThreads / 32
	// AccSharedMax is the number of float32 dγ/dβ accumulators the chunked
	// backward kernels keep in dynamic shared memory (32 KiB); beyond it they
	// accumulate in their own rows of the partial buffer instead.
	AccSharedMax = 8192
	// FwdSharedMax is the longest row the RMSNorm forward keeps a copy of in
	// dynamic shared memory (32 KiB), so that x is read from memory once.
	FwdSharedMax = 8192
	// ChunkMinRows and ChunkTargetBlocks fix the chunked backward's row
	// partition: chunk = max(ChunkMinRows, ceil(rows/ChunkTargetBlocks)).
	// 512 blocks is about 4 per SM of a 132-SM H100/H200; it is a constant,
	// never the queried SM count, so every device and the emulator sum dγ in
	// the same order. A chunk of at least 4 rows keeps the partial buffer
	// (one row per block) under a twelfth of the backward's traffic.
	ChunkMinRows      = 4
	ChunkTargetBlocks = 512
	// ColSumCols × ColSumGroups is colsum_f32's block: 32 columns, each summed
	// by 8 row groups.
	ColSumCols   = 32
	ColSumGroups = 8
	// MaxElements bounds every tensor (and RoPE's pair count): indices in the
	// kernels are 32-bit within a row and 64-bit across rows.
	MaxElements = 1<<31 - 1
)

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func ceilLog2(n int) int {
	d := 0
	for 1<<d < n {
		d++
	}
	return d
}

// ChunkRows returns the rows each block of a chunked backward owns.
func ChunkRows(rows int) int { return max(ChunkMinRows, ceilDiv(rows, ChunkTargetBlocks)) }

// ChunkBlocks returns the number of blocks (= partial rows) of a chunked
// backward: ceil(rows/ChunkRows(rows)).
func ChunkBlocks(rows int) int { return ceilDiv(rows, ChunkRows(rows)) }

// ChunkThreads returns the block size of a chunked backward for hidden:
// one thread per float4 of the row, rounded up to whole warps, between 32
// and 256.
func ChunkThreads(hidden int) int {
	return min(BlockThreads, max(32, ceilDiv(ceilDiv(hidden, 4), 32)*32))
}

// serialTerms is the most terms one of T threads accumulates over a row of
// n elements: float4 groups on the vector path (n%4 == 0), elements on the
// scalar path. The vector count bounds the scalar one, so it is used
// whenever the vector path is possible.
func serialTerms(n, T int) int {
	if n%4 == 0 {
		return 4 * ceilDiv(n/4, T)
	}
	return ceilDiv(n, T)
}

// blockTree is the tree depth of block_sum for T threads: butterfly 5 plus
// the combining tree over the warps (exact additions of +0 not counted).
func blockTree(T int) int { return 5 + ceilLog2(T/32) }

// Geometry helpers.

func rowPerBlock(s op.Shape) cudart.Geometry {
	return cudart.Geometry{Grid: cudart.D1(s.Rows), Block: cudart.D1(BlockThreads)}
}

// rowPerBlockCached is rowPerBlock with hidden*4 bytes of dynamic shared
// memory for a copy of the row when hidden <= FwdSharedMax (the kernel reads
// the amount it got from %dynamic_smem_size).
func rowPerBlockCached(s op.Shape) cudart.Geometry {
	g := rowPerBlock(s)
	if s.Hidden <= FwdSharedMax {
		g.SharedBytes = 4 * s.Hidden
	}
	return g
}

func warpPerRow(s op.Shape) cudart.Geometry {
	return cudart.Geometry{Grid: cudart.D1(ceilDiv(s.Rows, WarpsPerBlock)), Block: cudart.D1(BlockThreads)}
}

func chunked(accPerCol int) func(op.Shape) cudart.Geometry {
	return func(s op.Shape) cudart.Geometry {
		g := cudart.Geometry{Grid: cudart.D1(ChunkBlocks(s.Rows)), Block: cudart.D1(ChunkThreads(s.Hidden))}
		if accPerCol*s.Hidden <= AccSharedMax {
			g.SharedBytes = 4 * accPerCol * s.Hidden
		}
		return g
	}
}

// Parameter helpers.

func rowsHidden(s op.Shape) int { return s.Rows * s.Hidden }
func hiddenLen(s op.Shape) int  { return s.Hidden }
func rowsLen(s op.Shape) int    { return s.Rows }
func headDimLen(s op.Shape) int { return s.HeadDim }
func chunkPartial(s op.Shape) int {
	return ChunkBlocks(s.Rows) * s.Hidden
}

func in(name string, elems func(op.Shape) int) ParamSpec {
	return ParamSpec{Name: name, Kind: cudart.F32, Role: cudart.RoleIn, Elems: elems}
}

func out(name string, elems func(op.Shape) int) ParamSpec {
	return ParamSpec{Name: name, Kind: cudart.F32, Role: cudart.RoleOut, Elems: elems}
}

func u32(name string, v func(op.Shape) int) ParamSpec {
	return ParamSpec{Name: name, Kind: cudart.U32, Value: func(s op.Shape) uint64 { return uint64(v(s)) }}
}

func freeU32(name string) ParamSpec { return ParamSpec{Name: name, Kind: cudart.U32} }
func freeF32(name string) ParamSpec { return ParamSpec{Name: name, Kind: cudart.F32} }

var (
	pRows    = u32("rows", func(s op.Shape) int { return s.Rows })
	pHidden  = u32("hidden", func(s op.Shape) int { return s.Hidden })
	pHeads   = u32("heads", func(s op.Shape) int { return s.Heads })
	pHeadDim = u32("head_dim", func(s op.Shape) int { return s.HeadDim })
	pChunk   = u32("chunk", func(s op.Shape) int { return ChunkRows(s.Rows) })
	pEps     = freeF32("eps")
	pTheta   = freeF32("theta")
)

// Reduction helpers.

func rowSum(name string, s op.Shape) op.Reduction {
	return op.Reduction{Name: name, Terms: s.Hidden, Serial: serialTerms(s.Hidden, BlockThreads), Tree: blockTree(BlockThreads)}
}

// entry returns descriptor k of the .entry name in the committed family
// src/<family>.cu, ptx/<family>.ptx.
func entry(name, family string, k Kernel) *Kernel {
	k.Name, k.Entry = name, name
	k.Source, k.PTXFile, k.PTX = "src/"+family+".cu", "ptx/"+family+".ptx", ptxText(family)
	return &k
}

// The descriptors. Their doc comments live in the CUDA sources.
var (
	kRMSNormFwd = entry("rmsnorm_fwd", "rmsnorm_fwd", Kernel{
		Params:   []ParamSpec{in("x", rowsHidden), in("gamma", hiddenLen), out("y", rowsHidden), pRows, pHidden, pEps},
		Geometry: rowPerBlockCached, Deterministic: true,
		Reductions: func(s op.Shape) []op.Reduction { return []op.Reduction{rowSum("Σx² per row", s)} },
	})
	kRMSNormFwdRMS = entry("rmsnorm_fwd_rms", "rmsnorm_fwd", Kernel{
		Params:   []ParamSpec{in("x", rowsHidden), in("gamma", hiddenLen), out("y", rowsHidden), out("rms", rowsLen), pRows, pHidden, pEps},
		Geometry: rowPerBlockCached, Deterministic: true,
		Reductions: func(s op.Shape) []op.Reduction { return []op.Reduction{rowSum("Σx² per row", s)} },
	})

	kColSum = entry("colsum_f32", "colsum", Kernel{
		Params: []ParamSpec{in("partial", rowsHidden), out("out", hiddenLen),
			u32("nrows", func(s op.Shape) int { return s.Rows }), u32("ncols", func(s op.Shape) int { return s.Hidden })},
		Geometry: func(s op.Shape) cudart.Geometry {
			return cudart.Geometry{Grid: cudart.D1(ceilDiv(s.Hidden, ColSumCols)), Block: cudart.Dim3{X: ColSumCols, Y: ColSumGroups, Z: 1}}
		},
		Deterministic: true,
		Reductions: func(s op.Shape) []op.Reduction {
			return []op.Reduction{{Name: "Σ partial per column", Terms: s.Rows, Serial: ceilDiv(s.Rows, ColSumGroups), Tree: ceilLog2(ColSumGroups)}}
		},
	})

	bwdParams = func(partial func(op.Shape) int, extra ...ParamSpec) []ParamSpec {
		p := []ParamSpec{in("x", rowsHidden), in("gamma", hiddenLen), in("rms", rowsLen), in("dy", rowsHidden),
			out("dx", rowsHidden), out("partial", partial), pRows, pHidden}
		return append(p, extra...)
	}

	kRMSNormBwdWarp32 = entry("rmsnorm_bwd_warp32", "rmsnorm_bwd", Kernel{
		Params:   bwdParams(rowsHidden),
		Geometry: warpPerRow, Deterministic: true,
		Reductions: func(s op.Shape) []op.Reduction {
			return []op.Reduction{{Name: "Σ γ·dy·x̂ per row", Terms: s.Hidden, Serial: 1, Tree: 5}}
		},
	})
	kRMSNormBwdRowWarp = entry("rmsnorm_bwd_rowwarp", "rmsnorm_bwd", Kernel{
		Params:   bwdParams(rowsHidden),
		Geometry: warpPerRow, Deterministic: true,
		Reductions: func(s op.Shape) []op.Reduction {
			return []op.Reduction{{Name: "Σ γ·dy·x̂ per row", Terms: s.Hidden, Serial: ceilDiv(s.Hidden, 32), Tree: 5}}
		},
	})
	kRMSNormBwdChunk = entry("rmsnorm_bwd_chunk", "rmsnorm_bwd", Kernel{
		Params:   bwdParams(chunkPartial, pChunk),
		Geometry: chunked(1), Deterministic: true,
		Reductions: func(s op.Shape) []op.Reduction {
			T := ChunkThreads(s.Hidden)
			return []op.Reduction{
				{Name: "Σ γ·dy·x̂ per row", Terms: s.Hidden, Serial: serialTerms(s.Hidden, T), Tree: blockTree(T)},
				{Name: "Σ dy·x̂ per column within a chunk", Terms: min(s.Rows, ChunkRows(s.Rows)), Serial: min(s.Rows, ChunkRows(s.Rows))},
			}
		},
	})

	kFusedResidualRMSNorm = entry("fused_residual_rmsnorm", "fused_residual_rmsnorm", Kernel{
		Params: []ParamSpec{in("residual", rowsHidden), in("x", rowsHidden), in("gamma", hiddenLen),
			out("residual_out", rowsHidden), out("y", rowsHidden), pRows, pHidden, pEps},
		Geometry: rowPerBlock, Deterministic: true,
		Reductions: func(s op.Shape) []op.Reduction { return []op.Reduction{rowSum("Σs² per row, s = residual+x", s)} },
	})

	kLayerNormFwd = entry("layernorm_fwd", "layernorm", Kernel{
		Params:   []ParamSpec{in("x", rowsHidden), in("gamma", hiddenLen), in("beta", hiddenLen), out("y", rowsHidden), pRows, pHidden, pEps},
		Geometry: rowPerBlock, Deterministic: true,
		Reductions: layerNormFwdReductions,
	})
	kLayerNormFwdStats = entry("layernorm_fwd_stats", "layernorm", Kernel{
		Params: []ParamSpec{in("x", rowsHidden), in("gamma", hiddenLen), in("beta", hiddenLen), out("y", rowsHidden),
			out("mean", rowsLen), out("rstd", rowsLen), pRows, pHidden, pEps},
		Geometry: rowPerBlock, Deterministic: true,
		Reductions: layerNormFwdReductions,
	})
	kLayerNormBwdChunk = entry("layernorm_bwd_chunk", "layernorm", Kernel{
		Params: []ParamSpec{in("x", rowsHidden), in("gamma", hiddenLen), in("dy", rowsHidden), in("mean", rowsLen), in("rstd", rowsLen),
			out("dx", rowsHidden), out("partial_g", chunkPartial), out("partial_b", chunkPartial), pRows, pHidden, pChunk},
		Geometry: chunked(2), Deterministic: true,
		Reductions: func(s op.Shape) []op.Reduction {
			T := ChunkThreads(s.Hidden)
			c := min(s.Rows, ChunkRows(s.Rows))
			return []op.Reduction{
				{Name: "Σ γ·dy per row", Terms: s.Hidden, Serial: serialTerms(s.Hidden, T), Tree: blockTree(T)},
				{Name: "Σ γ·dy·x̂ per row", Terms: s.Hidden, Serial: serialTerms(s.Hidden, T), Tree: blockTree(T)},
				{Name: "Σ dy·x̂ per column within a chunk", Terms: c, Serial: c},
				{Name: "Σ dy per column within a chunk", Terms: c, Serial: c},
			}
		},
	})

	kPerHeadRMSNorm = entry("per_head_rmsnorm", "per_head_rmsnorm", Kernel{
		Params: []ParamSpec{in("x", rowsHidden), in("gamma", headDimLen), out("y", rowsHidden), pRows, pHeads, pHeadDim, pEps},
		Geometry: func(s op.Shape) cudart.Geometry {
			return cudart.Geometry{Grid: cudart.D1(ceilDiv(s.Rows*s.Heads, WarpsPerBlock)), Block: cudart.D1(BlockThreads)}
		},
		Deterministic: true,
		Reductions: func(s op.Shape) []op.Reduction {
			return []op.Reduction{{Name: "Σx² per head", Terms: s.HeadDim, Serial: serialTerms(s.HeadDim, 32), Tree: 5}}
		},
	})

	ropeGeometry = func(s op.Shape) cudart.Geometry {
		return cudart.Geometry{Grid: cudart.D1(ceilDiv(s.Rows*(s.HeadDim/2), BlockThreads)), Block: cudart.D1(BlockThreads)}
	}
	noReductions = func(op.Shape) []op.Reduction { return nil }
	positions    = ParamSpec{Name: "positions", Kind: cudart.U32, Role: cudart.RoleIn, Elems: rowsLen}

	kRoPEFwd = entry("rope_neox_fwd", "rope", Kernel{
		Params:   []ParamSpec{in("x", rowsHidden), out("y", rowsHidden), pRows, pHeads, pHeadDim, freeU32("pos"), pTheta},
		Geometry: ropeGeometry, Deterministic: true, Reductions: noReductions,
	})
	kRoPEFwdBatched = entry("rope_neox_fwd_batched", "rope", Kernel{
		Params:   []ParamSpec{in("x", rowsHidden), positions, out("y", rowsHidden), pRows, pHeads, pHeadDim, pTheta},
		Geometry: ropeGeometry, Deterministic: true, Reductions: noReductions,
	})
	kRoPEBwdBatched = entry("rope_neox_bwd_batched", "rope", Kernel{
		Params:   []ParamSpec{in("dy", rowsHidden), positions, out("dx", rowsHidden), pRows, pHeads, pHeadDim, pTheta},
		Geometry: ropeGeometry, Deterministic: true, Reductions: noReductions,
	})

	kSoftmaxFwd = entry("softmax_fwd", "softmax", Kernel{
		Params:   []ParamSpec{in("x", rowsHidden), out("y", rowsHidden), pRows, pHidden},
		Geometry: rowPerBlock, Deterministic: true, Reductions: softmaxRowSum("Σ exp(x−max) per row"),
	})
	kSoftmaxBwd = entry("softmax_bwd", "softmax", Kernel{
		Params:   []ParamSpec{in("y", rowsHidden), in("dy", rowsHidden), out("dx", rowsHidden), pRows, pHidden},
		Geometry: rowPerBlock, Deterministic: true, Reductions: softmaxRowSum("Σ y·dy per row"),
	})
)

func layerNormFwdReductions(s op.Shape) []op.Reduction {
	return []op.Reduction{rowSum("Σx per row", s), rowSum("Σ(x−mean)² per row", s)}
}

func init() {
	for _, k := range registry {
		k.loaded = &moduleCache{}
	}
}

var registry = []*Kernel{
	kRMSNormFwd, kRMSNormFwdRMS,
	kRMSNormBwdWarp32, kRMSNormBwdRowWarp, kRMSNormBwdChunk,
	kColSum,
	kFusedResidualRMSNorm,
	kLayerNormFwd, kLayerNormFwdStats, kLayerNormBwdChunk,
	kPerHeadRMSNorm,
	kRoPEFwd, kRoPEFwdBatched, kRoPEBwdBatched,
	kSoftmaxFwd, kSoftmaxBwd,
}

// All returns a copy of every kernel descriptor, in a fixed order. The
// copies share nothing mutable with the defaults (RMSNormFwd, …).
func All() []*Kernel {
	out := make([]*Kernel, len(registry))
	for i, k := range registry {
		out[i] = k.WithPTX(k.PTX)
	}
	return out
}

// Lookup returns a copy of the descriptor of the named kernel.
func Lookup(name string) (*Kernel, bool) {
	for _, k := range registry {
		if k.Name == name {
			return k.WithPTX(k.PTX), true
		}
	}
	return nil, false
}

// Implementations returns every host-level implementation of an operation
// this package provides, built from the committed PTX, in a fixed order:
// what the mutation analysis runs each kernel's predictions on. Each
// implements one operation's interface (properties.RMSNormForwarder, …)
// and lists the kernels it launches (Kernels).
func Implementations() []any {
	return []any{RMSNormFwd, RMSNormBwdWarp32, RMSNormBwdWarp, RMSNormBwdChunk, FusedResidualRMSNormFwd,
		LayerNormFwd, LayerNormBwd, PerHeadRMSNormFwd, RoPEFwd, RoPEFwdBatched, RoPEBwd, SoftmaxFwd, SoftmaxBwd}
}
