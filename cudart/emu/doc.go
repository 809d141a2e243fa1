// Package emu is a CPU emulator for PTX: a cudart.Backend that runs the same
// PTX text the GPU runs, on a laptop or in CI, and reports what a GPU hides.
//
// The emulator parses PTX with package ptx, decodes each kernel once into a
// compact form (register operands resolved to slots, immediates and special
// registers materialised as constant slots, one function per opcode
// variant; the commonest arithmetic, compares, loads and stores loop over a
// warp's lanes in one typed function, fast.go) and executes warps of 32
// lanes over flat per-lane uint64 register files. Lanes of a warp that diverge are reconverged by running the lanes
// at the lowest PC together, so a warp executes *.sync operations (shfl.sync,
// vote.sync, bar.warp.sync) with the membermask semantics of the PTX ISA,
// including lanes that reach them from different instructions.
//
// # Numerics
//
// Correctly rounded instructions (add/sub/mul/fma/div/sqrt/rcp with .rn,
// .rz, .rm, .rp, cvt with every rounding) are bit-exact with IEEE 754:
// results are computed exactly (error-free transformations, math/big where
// needed) and rounded once. .ftz flushes subnormal inputs and results to
// sign-preserving zero. NaN results are the canonical NaN 0x7FFFFFFF.
// The approximate instructions that ptxas lowers to the GPU's
// multi-function unit return by default what an sm_90 GPU (H200) computes,
// bit for bit: div.full/div.approx/rcp.approx .f32 (the hardware
// reciprocal, mufu.go), rsqrt/sqrt/ex2/lg2/sin/cos/tanh .approx .f32 and
// rcp.approx.ftz.f64 (mufu_models.go): tables measured on the GPU over all
// 2^32 inputs (scripts/mufuprobe), and the .f16/.bf16 forms of ex2 and
// tanh: tables of their output for every 16-bit input. With
// Config.Approx = ApproxAdversarial every approximate instruction returns a
// value chosen from Config.ApproxSeed and its operands, never from the
// schedule, anywhere inside the error bound the PTX ISA documents, so a
// property that holds is shown to hold on any conforming GPU. Approximations
// lists a module's approximate instructions, so that a
// disagreement with a GPU can name them. ApproxAdversarial also fuses,
// per instruction and ApproxSeed, a mul and an add/sub that carry no rounding
// modifier into one fma, as the PTX ISA lets the code generator do.
//
// # Checks
//
// Every failure is a *Fault wrapping a cudart sentinel, naming the kernel,
// PTX line, instruction, CTA and thread, address and buffer:
//
//   - cudart.ErrOutOfBounds: a global access outside every live allocation
//     or inside a guard band that cudart.Device protected; a shared access
//     outside the block's shared memory or into the red zone after a shared
//     variable; a local access past the thread's frame; a value computed
//     from uninitialised shared or local memory (Config.AllowUninit… turn
//     this off) reaching a branch, guard, address, membermask, atomic or a
//     global store. Loading such bytes is not itself an error: compilers load
//     speculatively and discard the value with a selp;
//   - cudart.ErrRace: two threads of a block touching the same shared byte
//     in one barrier interval, at least one writing and the values differing
//     for two writes, without ordering (different warps, or one warp without
//     a bar.warp.sync in between); two blocks storing to the same global byte
//     in one launch without atomics;
//   - cudart.ErrDeadlock: a bar.sync or *.sync that can never complete,
//     with the waiting lanes and where the others are;
//   - cudart.ErrTimeout: Abort (the Device watchdog) or Config.MaxInstructions;
//   - cudart.ErrLaunch: misaligned addresses, trap, lanes of one warp passing
//     different membermasks or executing a *.sync outside their membermask,
//     a block larger than .maxntid or different from .reqntid.
//
// An uninitialised-value report is held until the barrier interval ends, so
// that a race with the write that was missing is reported instead.
//
// Barriers without a thread count are matched per instruction: threads that
// wait at two different bar.sync instructions never meet (the
// __syncthreads-in-a-divergent-branch bug is a deadlock, as the CUDA
// programming model says), while exited threads count as arrived.
//
// WriteCounts reports, for the last launch, how many stores hit each element.
//
// # Schedule
//
// CTAs that do not communicate run one at a time. With Config.Seed = 0 they
// start in canonical order (blockIdx.x fastest) and each warp runs until it
// blocks. Under that schedule, a launch whose kernel has no atomic, fence
// or strong access runs its CTAs on all cores (GOMAXPROCS) with the same
// result: each CTA's stores stay private until every CTA ended, and a
// global byte one CTA writes and another reads or writes sends the launch
// back to the one-at-a-time run, which gives the serial values, race and
// fault (spec.go). Any other seed permutes the CTA order, interleaves
// warps in random quanta and applies the lanes of a store or atomic in
// random order, one CTA at a time unless they communicate, all
// reproducibly from the seed, so results that depend on the schedule (float
// atomics) differ across seeds. Once a launch uses a global atomic, a fence
// or a strong (.volatile, .relaxed, .acquire, .release) access, a seeded
// schedule keeps several CTAs resident and switches between them at those
// instructions and at the ends of warp quanta, so work stealing through an
// atomic counter hands out work differently per seed. Under every schedule a
// warp that spins (re-reads the same values with strong reads, changing
// nothing) sleeps until global memory changes and other CTAs, started or
// new, run: a CTA waiting for a flag a later CTA sets completes, and a launch
// in which no thread can make progress fails at once with ErrDeadlock.
//
// Cross-CTA races: a global store is a race when another CTA stored to the
// same byte in the launch and nothing orders the two (both atomic is no
// race). Release/acquire operations, fences around strong accesses and
// full-CTA barriers order them (vector clocks, see order.go), so a spin
// lock's critical sections do not race while the same stores without the
// lock do. Reads are not checked against other CTAs' stores.
package emu
