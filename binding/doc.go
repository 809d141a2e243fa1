// Package binding runs ptxprop's contracts on kernels it did not write: a
// binding file describes, as data, how a PTX kernel (or a sequence of
// launches) implements one of the contracts, and Load turns it into an
// implementation of that contract's interface.
//
// A binding file (YAML, format version 1, JSON Schema from Schema) names
// the contract the kernel claims, its PTX and entry, the role of each
// .param, the launch geometry and dynamic shared memory as expressions of
// the shape, scratch buffers and their initial state, the form of saved
// statistics, constraints on the shapes, and optionally the order of its
// reductions. testdata/example.yaml documents every field; a minimal one:
//
//	ptxprop_binding: 1
//	contract: rmsnorm.forward
//	ptx: rmsnorm_fwd.ptx              # relative to this file
//	saved: rstd                       # the kernel writes 1/rms per row
//	constants: {num_warps: 4}
//	constraints: ["hidden <= 8192"]
//	launches:
//	  - entry: rmsnorm_fwd_kernel
//	    grid: [rows]
//	    block: [num_warps * 32]
//	    params: [x, y, gamma, rstd, {stride: x}, rows, hidden, eps, {ignore: 0}]
//
// Roles are the contract's tensors (x, gamma, beta, y, residual,
// residual_out, dy, dx, dgamma, dbeta, positions, and the saved rms, rstd,
// mean, std) and scalars (rows, hidden, heads, head_dim, eps, theta, pos);
// {stride: T}, {scratch: NAME}, {value: EXPR}, {ignore: VALUE} and the
// names of declared inputs cover the rest. Load checks everything it can
// before a launch: the schema, every expression and name, each parameter's
// type against the .entry signature, roles bound twice or missing (a
// backward must read its saved statistics; a forward's are optional), and
// every expression over the feasible shapes and a spread of shapes (every
// hidden up to 64, the generators' edge grid, the edge row counts, up to
// 2¹⁶ elements): division by zero, integer overflow, an impossible
// geometry, a scratch buffer over its cap (ScratchPerTensor,
// ScratchFloor). Its errors
// name the file and the line of the field at fault and wrap ErrInvalid.
// Such an error met at a drawn shape during a run is checked before
// anything is allocated: the prediction ends with the status error (never
// falsified) and Verify returns the error, wrapping ErrInvalid.
//
// With row_stride, the tensors passed with their stride are laid out with
// rows that far apart, the gaps filled with NaN: a kernel that ignores its
// stride reads NaN, one that writes between rows is reported.
//
// With views: true, the contracts pass the kernel's tensors as views at
// an element offset (op.Offsets: 1 to 3 32-bit words past an aligned
// start, one tensor in half the calls), misaligning its row starts as a
// slice of a larger buffer does; the slack before a view belongs to its
// guard band. Off by default, since a foreign kernel may assume the
// alignment of a fresh allocation.
//
// Tensors are stored as dtype says: float32, or bfloat16/float16 (rounded
// to nearest even on upload, two to a 32-bit word, widened exactly on the
// way back); compute is the kernel's, in float32. Saved statistics are
// converted to the form the contracts hold (rms with ε, rstd), once
// rounded.
//
// In a test file:
//
//	func TestMyKernel(t *testing.T) {
//		b, err := binding.Load("testdata/my_rmsnorm.yaml")
//		if err != nil {
//			t.Fatal(err)
//		}
//		for _, j := range binding.Jobs(b) {
//			t.Run(j.ID, func(t *testing.T) { j.Contract(suite.T(t)) })
//		}
//	}
//
// with func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }; or from the
// command line, ptxprop verify my_rmsnorm.yaml.
//
// Constraints are any conditions over rows, hidden, heads and head_dim
// ("hidden % 128 == 0", "rows >= 65", "heads == 8 && head_dim == 64"). Load
// searches the shapes that meet them: rows and hidden (rows, heads and
// head_dim for the per-head contracts, head_dim even for RoPE; hidden =
// heads·head_dim), each over the generators' grid (every value up to 64,
// the powers of two from 128 and their neighbours) joined with every
// number the constraints name, its neighbours and its first 64 multiples,
// up to 2²⁰ elements. It keeps up to 4096 feasible shapes, smallest first,
// or fails naming the parameters, the values tried and what it held fixed.
// Jobs runs each contract with its limits cut to MaxShape (rows <= N,
// hidden <= N) and HiddenMultiple (hidden % N == 0) and with Domain: a shape
// drawn as usual that fails a constraint is replaced by a feasible one the
// run's caps allow (gen.Limits.Conform), so every draw is valid by
// construction. Where none fits (constraints met only above the run's
// element cap) the shape is refused with properties.ErrShapeRefused, an
// invalid draw, and when rapid then has too few valid draws the prediction
// is error with rapid's "only generated N valid tests" reason, the
// acceptance rate and the last refusal. META-BATCH-001, which runs a row
// alone, runs it at the head of a batch of the same size when the binding
// accepts no one-row batch. Reductions, when the file declares the order of its
// sums, is the properties.ReductionDescriber the bounds are derived from.
// Jobs also hands the contracts the storage of each 16-bit tensor
// (properties.Config.Storage): they round drawn inputs to it before the
// oracle sees them and widen the stored outputs' bounds by
// oracle.StorageTol. The finite-difference bounds (C-BRMS-BACK-001) do not
// yet include a 16-bit dx's rounding.
//
// alias: {y: x} writes an output over an input. A kernel that reads and
// writes through one pointer (a RoPE that rotates q in place) binds only
// one of the two roles to its .param: the buffer holds x before the
// launches and y after them.
//
// inputs: declares read-only tables a RoPE kernel takes besides the
// contract's tensors, each passed by its name in params:
//
//	constants: {max_pos: 4096}
//	inputs:
//	  cos_cache: {shape: [max_pos, "head_dim / 2"], value: rope.cos}
//	  sin_cache: {shape: [max_pos, "head_dim / 2"], value: rope.sin}
//
// ptxprop computes them per call from the operation's parameters: row p,
// column j holds cos (sin) of p·θ^(−2j/head_dim), the float64 value
// rounded once to float32, for each position p the call uses; every other
// row is NaN, so a kernel that reads another position's row is caught. A
// table's rows are an expression of the constants and bound the positions
// the generators draw (properties.Config.MaxPosition).
//
// host_sums: declares sums the kernel's wrapper does on the host (a
// backward whose dγ partials are summed by dW.sum(0)): {into: dgamma,
// from: partial, rows: N} sets into[j] = Σ partial[r·n + j] for r = 0, 1,
// …, N−1 in that order, accumulated in float32 from +0 (n: the output's
// length), after the launches. from is a float32 scratch buffer; into is a
// column-sum output bound to no .param. Without host_sums, a launch of
// kernels/ptx/colsum.ptx (colsum_f32: partial rows, output, rows, hidden)
// may stand in for the host's sum (testdata/rmsnorm_bwd_chunk.yaml).
//
// # What a binding cannot express yet
//
//   - Conditions on anything but the shape: a kernel specialised to one θ
//     or ε, or to positions below a bound other than its tables' rows.
//   - Shapes the search does not reach: feasible only above 2²⁰ elements,
//     rows or hidden above 2¹⁶, heads above 256, head_dim above 4096, or
//     only at values off its grid (none of the grid's values, the numbers
//     the constraints name, their neighbours or first 64 multiples).
//   - Tables other than RoPE's cos and sin as [positions][columns] (an
//     inverse-frequency vector, one interleaved cos/sin cache, tables for
//     another operation), and values a call cannot compute from the
//     operation's parameters.
//   - RoPE variants: GPT-J pairs, partial rotary (rotary_dim < head_dim),
//     q and k rotated by one launch, different q and k head counts.
//   - Layouts other than rows at a row stride: [batch][heads][seq][dim],
//     per-head strides, transposed tensors, views at an offset (misaligned
//     row starts).
//   - Host work other than column sums of float32 partials: a scale, a
//     cast, a sum of a row output, a loop of launches whose count depends
//     on the data.
//   - Parameters other than scalars and pointers: .param arrays and
//     structs (a CUtensorMap), shapes read from device memory; launches
//     with clusters, cooperative grids or several streams.
//   - Storage other than float32, bfloat16 and float16 (fp8, int8), and
//     partial claims of bit determinism (all or nothing).
package binding
