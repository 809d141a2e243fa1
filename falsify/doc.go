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
// (go test ./falsify -run 'TestMutant$' -ptxprop.mutant=NAME).
//
//   - Named mutants (NamedMutants) are real bug classes, most from the
//     upstream history: a variant kernel, an edit of a committed kernel's
//     PTX text (ε read from a parameter → an immediate, a division removed,
//     two pointers swapped), or a Go launcher with the bug (a module cache
//     keyed without θ or ε, a self-deadlocking lock, float atomics, a
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
//     operator) to fit CI, and Spread a few of them for a quick run.
//
// # Variant kernels
//
// A variant kernel is a shipped kernel plus its one deliberate bug, never a
// copy of it: falsify/src/<name>.patch is a unified diff of one
// kernels/src/<family>.cu under a header that says what the bug is, where it
// comes from and which entries the mutant launches. `make falsify-ptx`
// applies each patch to a copy of its kernel source and compiles the copy
// with the kernels' flags into falsify/ptx/<name>.ptx (committed and
// embedded): the whole family, with the entry names and signatures of the
// kernels the mutant replaces (atomic-dgamma alone renames its entry), so
// that kernels.Kernel.WithPTX is the whole mutant. A patch must apply
// without fuzz, so a kernel change that touches a patch's context stops the
// target instead of building another mutant. To write or rebase a patch,
// edit a patched copy and diff it against the kernel:
//
//	patch -o /tmp/m.cu kernels/src/rope.cu < falsify/src/rope_gptj.patch   # --merge if it no longer applies
//	$EDITOR /tmp/m.cu
//	diff -u --label a/kernels/src/rope.cu --label b/kernels/src/rope.cu kernels/src/rope.cu /tmp/m.cu
//
// and put the diff under the header in place of the old one; then make
// falsify-ptx. TestEmbeddedPTX fails when a patch or PTX changed without
// it, and notes a kernel source that changed since.
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
// # Shapes
//
// A contract run on a mutant draws the shapes of a property run (the
// backend's gen.Limits and the run's caps): a mutant gets the shapes of the
// predictions that probe it. Where a bug lives only in large shapes, the
// prediction that should catch it declares the regime
// (properties.Prediction.Regimes: P-BRMS-BACK-001 and LN-BWD-001 declare
// rows past 2048 and rows sharing a lock group, up to 2²⁰ elements), and
// one check in gen.RegimeOdds draws from it; chunk-bound-baked, wrong only
// past 2048 rows, is killed so on the emulator. There the everyday shapes
// keep at most EverydayRows rows (the emulator's wide row counts in every
// contract run would make the analysis several times as long); the
// regimes are not capped. On the emulator each launch of a mutant runs within an
// instruction budget that grows with the launch (LaunchBudget:
// Options.MaxInstructions plus InstructionsPerThread a thread and
// InstructionsPerElement an element of its buffers), so that the
// originals' largest launches fit (TestLaunchBudget) while a mutant that
// loops forever still stops within seconds. A kill in a large shape costs
// its shrinking: rapid finishes minimising the value it is on after the
// shrink time, each attempt a launch of that size.
//
// The original implementation runs beside the mutant on every call, on the
// same inputs (Options.Equivalence), so a survivor gets a verdict from the
// very checks the contracts ran: equivalent (bit-identical outputs on every
// call, with the count), rounding-level (outputs differ by at most
// RoundingNorm·u normwise: another evaluation order or path that every
// tolerance allows), a gap (larger differences nobody noticed), or not
// exercised (no contract launches the kernel at all). A survivor of the
// full sample gets a verdict in falsify/verdicts.go (Verdict): equivalent,
// with a proof that runs on the committed PTX (a warp sum whose butterfly
// offsets still form a basis of the lanes; an alignment test made
// constant, so the kernel runs its scalar path) and turns the survivor
// into an equivalent mutant only while it holds and the outputs differ at
// rounding level at most; or a survivor, with the prediction that would
// have to change to kill it.
//
// Mutants can run in child processes of the test binary
// (-ptxprop.workers, -ptxprop.isolate): side by side on the emulator, and
// always on a GPU, where a kernel fault leaves CUDA unusable in the whole
// process and a child that finds its device unusable is replaced. With
// several devices the children take turns: child w runs its mutants on
// device w mod n (one child per GPU by default), and each Result names its
// device.
//
// Record writes results into a report (reports.Update, UpsertMutant,
// MarkUnproven), and Summary formats the kill matrix for the test log.
//
// # Tests and settings
//
// go test ./falsify is a quick run: the unit tests, every named mutant at
// its full budget, and a few generic mutants spread over the kernels and
// operators, each of which must reach a verdict of its own (no harness
// error); -short leaves the generic mutants out. -ptxprop.mutants=full
// (make falsify) runs the generic sample, gates it on the mutation score
// (reports.ScoreOf) and records the kill matrix in the mutation report,
// out/mutants-report.json unless -ptxprop.report names another: a file of
// its own, which no property run replaces.
//
// The tests run under the runner (suite.Main with suite.WithSettings), and
// each contract run on a mutant gets its checks, seed and shrink time as a
// value (suite.RunContract). Settings arrive as Options (LoadOptions,
// RegisterFlags, or in the tests the runner). Each is a flag
// -ptxprop.NAME of the test binary with an environment twin PTXPROP_NAME,
// from one table beside the runner's (package properties/suite, whose
// -ptxprop.backend, -ptxprop.report and others apply too); a flag overrides
// the environment, which overrides the default:
//
//	flag                         environment                  default  meaning
//	-ptxprop.mutants             PTXPROP_MUTANTS              quick    quick: the named mutants and a few generic ones (-ptxprop.generic-quick); full: the generic sample (-ptxprop.generic-per-op) and its score gate
//	-ptxprop.mutant-checks       PTXPROP_MUTANT_CHECKS        200      rapid checks per contract run on a named mutant
//	-ptxprop.generic-checks      PTXPROP_GENERIC_CHECKS       100      rapid checks in a generic mutant's first (sharpest) contract run
//	-ptxprop.generic-checks-rest PTXPROP_GENERIC_CHECKS_REST  25       rapid checks in a generic mutant's other contract runs (0: -ptxprop.generic-checks)
//	-ptxprop.mutant-seed         PTXPROP_MUTANT_SEED          1        base seed of the mutants' rapid seeds (0: -rapid.seed, else a random one)
//	-ptxprop.generic-per-op      PTXPROP_GENERIC_PER_OP       2        generic mutants per kernel·operator in the full sample (0: every site)
//	-ptxprop.generic-quick       PTXPROP_GENERIC_QUICK        8        generic mutants of the quick run, spread over the kernels and operators
//	-ptxprop.min-score           PTXPROP_MIN_SCORE            0.90     the full sample fails below this share of killed among killed, survived and error
//	-ptxprop.mutant              PTXPROP_MUTANT               ""       TestMutant runs the mutants of this comma-separated list of names
//	-ptxprop.equivalence         PTXPROP_EQUIVALENCE          true     run the original beside each mutant to tell equivalent survivors from gaps
//	-ptxprop.shrink              PTXPROP_SHRINK               2s       rapid's shrink time per killing contract run of a named mutant
//	-ptxprop.generic-shrink      PTXPROP_GENERIC_SHRINK       1s       rapid's shrink time per killing contract run of a generic mutant
//	-ptxprop.record              PTXPROP_RECORD               true     in a full run, merge the kill matrix into the mutation report (-ptxprop.report; default out/mutants-report.json)
//	-ptxprop.isolate             PTXPROP_ISOLATE              auto     run mutants in child processes: auto (on a GPU, or with more than one worker), always or never
//	-ptxprop.workers             PTXPROP_WORKERS              0        child processes running mutants side by side (0: the CPU count up to 4 on the emulator, one per selected GPU)
//	-ptxprop.child               PTXPROP_CHILD                false    internal: run as a child process of the mutation tests
package falsify
