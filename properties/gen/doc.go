// Package gen draws the inputs of ptxprop's properties as rapid generators:
// shapes (Hidden, Rows under Limits), scalars (Eps, Theta, Position) and
// float32 tensors (Values, Gamma). Every draw is labelled, so that a shrunk
// counterexample prints the shape, the scalars and, for a tensor, its
// distribution, scale and seed rather than its elements.
//
// Tensors are row-major [rows][cols]. rapid's float generators never
// produce NaN, ±Inf, −0 or subnormals; the distributions (Dist) add zero
// rows, subnormals and huge magnitudes on purpose (FiniteDists, for
// ordinary properties) and ±Inf and NaN (Special, for robustness ones). A tensor is a function of its
// distribution, scale and seed and of this package's code only
// (MakeTensor), so a failure reproduces from its rapid seed on any Go
// release.
//
// Shapes start from fixed edge grids (EdgeHidden, EdgeRows) where kernels
// change behaviour, and rapid searches beyond them within the Limits of
// the backend (GPULimits, EmuLimits). Shape draws the two together and,
// where Limits.WithRegimes names shape regimes a prediction needs (rows past
// 2048, up to 2²⁰ elements), draws one of them in one check of RegimeOdds:
// large shapes at a fixed share, the rest as small as ever. Limits.WithStorage makes the
// generators round drawn data to a 16-bit storage format, as a bfloat16 or
// float16 kernel holds it.
//
// The package holds no state: every generator is a function of its
// arguments and the rapid.T it draws from.
package gen
