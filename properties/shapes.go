package properties

import (
	"bytes"
	"strings"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties/gen"
)

// ReductionDescriber is implemented by implementations that describe the
// float32 sums they compute (package kernels' implementations do). Contracts
// then derive tolerances from the real reduction depth; for an implementation
// that does not describe itself they assume the worst case, the naive serial
// order, which bounds every order (atomics included) but is looser.
type ReductionDescriber interface {
	Reductions(s op.Shape) []op.Reduction
}

// KernelLister is implemented by implementations that can show the kernels
// they launch (package kernels' implementations do); static predictions
// (no float atomics, every .param read) inspect their PTX.
type KernelLister interface {
	Kernels() []*kernels.Kernel
}

// reductions returns the oracle reduction shapes of impl at s: row is the
// deepest per-row sum over n terms, rows the deepest sum over rows (the
// weight gradients). Unknown implementations get the serial worst case.
func reductions(impl any, s op.Shape, n int) (row, rows oracle.Reduction) {
	row, rows = oracle.SerialReduction(), oracle.SerialReduction()
	d, ok := impl.(ReductionDescriber)
	if !ok {
		return
	}
	rowD, rowsD := -1, -1
	for _, r := range d.Reductions(s) {
		switch {
		case strings.HasPrefix(r.Name, "dγ") || strings.HasPrefix(r.Name, "dβ"):
			rowsD = max(rowsD, r.Depth())
		case r.Terms == n:
			rowD = max(rowD, r.Depth())
		}
	}
	// A depth-d order over n terms: n partial sums of one term each, then d
	// additions on the longest path (oracle.Reduction.Depth gives d).
	if rowD >= 0 {
		row = oracle.Reduction{Threads: n, Tree: rowD}
	}
	if rowsD >= 0 {
		rows = oracle.Reduction{Threads: s.Rows, Tree: rowsD}
	}
	return
}

// anyAtomic calls f with the modifiers of each atom or red instruction in
// body (".global.add.f32" of "atom.global.add.f32 %f1, …") until f returns
// true, and reports whether it did. A byte scan, not a regular expression:
// the backwards' contracts ask for every check, and a regexp over a kernel's
// body cost more than the check's oracle.
func anyAtomic(body []byte, f func(mods string) bool) bool {
	for _, op := range []string{"atom.", "red."} {
		for rest := body; ; {
			i := bytes.Index(rest, []byte(op))
			if i < 0 {
				break
			}
			j := i + len(op) - 1 // the first modifier's dot
			if i > 0 && isWordByte(rest[i-1]) {
				rest = rest[j:]
				continue
			}
			k := j
			for k < len(rest) && (rest[k] == '.' || rest[k] == ':' || isWordByte(rest[k])) {
				k++
			}
			if f(string(rest[j:k])) {
				return true
			}
			rest = rest[k:]
		}
	}
	return false
}

// isWordByte reports whether c is a letter, a digit or '_' (regexp's \w).
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// flushingSums reports whether a kernel impl launches adds float32 values
// with an atomic that flushes subnormals: atom or red .add on .f32 (or
// .v2/.v4.f32) in the global or the generic state space. The PTX ISA
// documents that these flush subnormal inputs and results to zero, on
// shared memory not. Only its sums over rows (dγ, dβ) are taken to be
// accumulated so (reductions' rows, where a contract sets Flush from it):
// the row-wise predictions pin the rest.
func flushingSums(impl any) bool {
	for _, e := range staticEntries(impl) {
		body := entryBody(e.PTX, e.Entry)
		if !bytes.Contains(body, []byte("atom.")) && !bytes.Contains(body, []byte("red.")) {
			continue
		}
		if anyAtomic(body, func(mods string) bool {
			mods += "."
			return strings.Contains(mods, ".add.") && strings.Contains(mods, ".f32.") && !strings.Contains(mods, ".shared")
		}) {
			return true
		}
	}
	return false
}

// RegimeElements caps the elements of a tensor drawn in a shape regime
// (Prediction.Regimes): 2²⁰, sixty-four times the emulator's everyday cap
// and sixteen times the GPU's.
const RegimeElements = 1 << 20

// The shape regimes predictions declare. Each is a shape region where a
// known kernel design changes behaviour and that the everyday limits reach
// rarely (the GPU) or never (the emulator, whose rows beyond 2048 come only
// with rows of 8 elements or fewer).
var (
	// RegimeChunkGrowth: rows past ChunkMinRows·ChunkTargetBlocks (2048),
	// where the chunked backwards' chunk grows beyond kernels.ChunkMinRows
	// rows a block (kernels.ChunkRows).
	RegimeChunkGrowth = gen.Regime{Name: "chunk>4",
		MinRows: kernels.ChunkMinRows*kernels.ChunkTargetBlocks + 1, MaxElements: RegimeElements}
	// RegimeLockGroups: more than 256 rows of more than 128 elements, where
	// a backward that adds its weight gradients under a lock per group of
	// rows (Triton's LayerNorm backward: GROUP_SIZE_M of 64 to 256 by the
	// row length) has two rows share a group.
	RegimeLockGroups = gen.Regime{Name: "rows share a lock group", MinRows: 257, MinHidden: 129, MaxElements: RegimeElements}
)

// RegimeWideChunk: 2 to 2·ChunkMinRows rows longer than
// kernels.AccSharedMax, where a chunked backward keeps its weight-gradient
// accumulators in global memory (LayerNorm's two from half that length)
// and a block runs more than one such row; the emulator's everyday 2¹⁴
// elements hold one. At most 2¹⁷ elements in two blocks, it is cheap
// enough to draw in one check of 4, so that 100 checks reach both its
// float4 (a length that is a multiple of 4) and its scalar path.
var RegimeWideChunk = gen.Regime{Name: "wide rows share a chunk", MinRows: 2, MaxRows: 2 * kernels.ChunkMinRows,
	MinHidden: kernels.AccSharedMax + 1, MaxElements: RegimeElements, Odds: 4}

// rowSumRegimes are the regimes of the predictions on backwards that sum a
// weight gradient over the rows.
var rowSumRegimes = []gen.Regime{RegimeChunkGrowth, RegimeLockGroups, RegimeWideChunk}

// RegimeSharedFloat4: rows of 1028 to kernels.AccSharedMax/2 (4096)
// floats, where a 256-thread block of LayerNorm's chunked backward loops
// over more than one float4 group a thread with both accumulators in
// shared memory. Its lengths are multiples of 4 in 0.625 of its draws
// (its ends 1028 and 4096 half of the time), which uniform lengths up to
// 16384 reach in about 1 check of 60. At most 2¹⁵ elements, drawn in one
// check of 4.
var RegimeSharedFloat4 = gen.Regime{Name: "float4 rows past a block, shared accumulators",
	MinHidden: 4*kernels.BlockThreads + 4, MaxHidden: kernels.AccSharedMax / 2, MaxElements: 1 << 15, Odds: 4}

// lnBwdRegimes are LN-BWD-001's regimes.
var lnBwdRegimes = []gen.Regime{RegimeChunkGrowth, RegimeLockGroups, RegimeWideChunk, RegimeSharedFloat4}

// wideChunkRegimes are the regimes of the backwards' predictions whose
// everyday cap is their only reason to stay below RegimeWideChunk.
var wideChunkRegimes = []gen.Regime{RegimeWideChunk}

// headDims draws a per-head row length: one of the head dims models use and
// their edges, or uniform in 1..512. 1024 (256 float4 groups) makes a
// warp-per-head kernel's lanes loop more than 4·32 groups, past a
// four-way unrolled loop's first pass (per_head_rmsnorm from 900).
func headDims() *rapid.Generator[int] {
	return rapid.OneOf(rapid.SampledFrom([]int{1, 31, 32, 33, 64, 128, 256, 1024}), rapid.IntRange(1, 512))
}
