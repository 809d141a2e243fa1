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
// {stride: T}, {scratch: NAME}, {value: EXPR} and {ignore: VALUE} cover the
// rest. Load checks everything it can before a launch: the schema, every
// expression and name, each parameter's type against the .entry signature,
// roles bound twice or missing (a backward must read its saved
// statistics; a forward's are optional), and every expression over a spread of shapes (every hidden
// up to 64, the generators' edge grid, the edge row counts, up to 2¹⁶
// elements): division by zero, integer overflow, an impossible geometry, a
// scratch buffer over its cap (ScratchPerTensor, ScratchFloor). Its errors
// name the file and the line of the field at fault and wrap ErrInvalid.
// Such an error met at a drawn shape during a run is checked before
// anything is allocated: the prediction ends with the status error (never
// falsified) and Verify returns the error, wrapping ErrInvalid.
//
// With row_stride, the tensors passed with their stride are laid out with
// rows that far apart, the gaps filled with NaN: a kernel that ignores its
// stride reads NaN, one that writes between rows is reported.
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
// Constraints narrow the generators: Jobs runs each contract with its
// limits cut to MaxShape (rows <= N, hidden <= N) and HiddenMultiple
// (hidden % N == 0), and a shape outside any other constraint is refused
// with properties.ErrShapeRefused, which makes the draw invalid rather than
// a counterexample. Reductions, when the file declares the order of its
// sums, is the properties.ReductionDescriber the bounds are derived from.
// Jobs also hands the contracts the storage of each 16-bit tensor
// (properties.Config.Storage): they round drawn inputs to it before the
// oracle sees them and widen the stored outputs' bounds by
// oracle.StorageTol. The finite-difference bounds (C-BRMS-BACK-001) do not
// yet include a 16-bit dx's rounding.
package binding
