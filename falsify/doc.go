// Package falsify shows that every ptxprop prediction can fail: it runs the
// property contracts of package properties against mutants — wrong
// implementations of the same operations — and records which prediction
// kills which mutant (the kill matrix) in the contract report.
//
// Falsify reuses, never forks, the contracts: a mutant is just another
// implementation of the one-method interfaces the contracts take
// (properties.RMSNormForwarder, …), run through properties.RunQuiet so that
// its failure is recorded rather than failing the test.
//
// # Mutants
//
// A Mutant is a value whose String is its name; ParseMutant reads the name
// back, so every row of the kill matrix can be rerun from it
// (go test ./falsify -run 'TestMutant$' -falsify.mutant=NAME).
//
//   - Named mutants (NamedMutants) are real bug classes, most from the
//     upstream history: a variant kernel compiled from falsify/src/*.cu
//     (committed as falsify/ptx/*.ptx by `make falsify-ptx`, with the entry
//     name and signature of the kernel it replaces, so that
//     kernels.Kernel.WithPTX is the whole mutant), an edit of a committed
//     kernel's PTX text (ε read from a parameter → an immediate, a division
//     removed, two pointers swapped), or a Go launcher with the bug (a module
//     cache keyed without θ or ε, a self-deadlocking lock, float atomics, a
//     geometry that depends on the batch or the device). Each names the
//     predictions expected to kill it, first the one it exists to prove:
//     TestNamedMutants fails when the first of them that runs does not, and
//     TestEveryPredictionHasAMutant when a device prediction has no mutant.
//   - Generic mutants (Generic, named "kernel/operator@pcN[.operand]") apply
//     one PTX mutation operator (Op) at one instruction of one kernel entry
//     through package ptx's AST and printer: arithmetic swap, immediate
//     perturbation, comparison flip, predicate negation, shuffle offset and
//     mode, store and barrier deletion, swapped operands. Sites enumerates
//     them; Sample picks a reproducible stratified sample per (kernel,
//     operator) to fit CI, and -falsify.all runs every one.
//
// # Running
//
// A Session runs mutants on the first device suite.OpenDevices opens (the
// emulator by default; a GPU with -tags cuda and -ptxprop.backend=gpu) and
// keeps the others (-ptxprop.devices) for MULTI-DEVICE-PARITY-001. For
// each mutant it runs the
// contracts that launch the mutated kernel — a named mutant's expected
// killers first, a kernel's sharpest contract first — each with a reduced
// rapid budget and a seed derived from the mutant's and contract's names,
// and stops at the first prediction that fails. A Result records the
// killer, the checks it needed and the minimal counterexample.
//
// The original implementation runs beside the mutant on every call, on the
// same inputs (Options.Equivalence), so a survivor gets a verdict from the
// very checks the contracts ran: equivalent (bit-identical outputs on every
// call, with the count), rounding-level (outputs differ by at most
// RoundingNorm·u normwise: another evaluation order or path that every
// tolerance allows), a gap (larger differences nobody noticed), or not
// exercised (no contract launches the kernel at all).
//
// Mutants can run in child processes of the test binary
// (-falsify.workers, -falsify.isolate): side by side on the emulator, and
// always on a GPU, where a kernel fault leaves CUDA unusable in the whole
// process and a child that finds its device unusable is replaced. With
// several devices the children take turns: child w runs its mutants on
// device w mod n (one child per GPU by default), and each Result names its
// device.
//
// Record writes results into the contract report (reports.Update,
// UpsertMutant, MarkUnproven), and Summary formats the kill matrix for the
// test log.
package falsify
