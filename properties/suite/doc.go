// Package suite runs ptxprop's contracts and reports on them: it owns the
// run's settings, the device, rapid's configuration, the contract report,
// the deadline, SIGINT/SIGTERM, progress lines and exit codes, so that
// package properties holds none of them.
//
// In a test binary, TestMain hands the run to Main and each test hands its
// *testing.T to a contract through T:
//
//	func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }
//
//	func TestMyRMSNorm(t *testing.T) {
//		properties.RMSNormForwardContract(suite.T(t), myImpl)
//	}
//
// The report lists the predictions the tests' contract runs recorded, each
// crediting the implementations it checked (properties.ImplKernels), which
// also fill its kernels section beside WithKernels'. A binary whose tests
// check a known set of predictions passes them with WithPredictions (ptxprop's
// own properties package passes every one it declares): those that did not
// run are listed not_run, and the run is partial.
//
// Main is the one runner of a test binary: no package's tests parse flags,
// open devices or set rapid's configuration around m.Run themselves
// (TestOneRunner keeps it so). Options adapt it: a binary with settings of
// its own passes their table (WithSettings: package falsify's), one whose
// tests judge their contracts themselves writes no report (WithoutReport:
// falsify's and binding's), WithChecks sets the run's default checks and
// WithCleanup runs code after the tests.
//
// Outside go test, Run runs named contract jobs on a TB of its own and
// returns the report (see the example). RunContract runs one contract run
// with rapid settings of its own (a check budget and seed per run: package
// falsify's mutants).
//
// rapid v1.3.0 keeps its settings (checks, seed, shrink time, fail files)
// in package variables behind its flags, with no per-call API, so they are
// the process's: this package alone sets them, from values — the run's
// settings in Main, Config.Checks, Config.Seed and Config.Rapid in Run, a
// Rapid in RunContract — each set for its run and restored after it, Runs
// and RunContracts one at a time.
//
// # Settings
//
// Every setting is a flag -ptxprop.NAME with an environment twin
// PTXPROP_NAME; a flag overrides the environment, which overrides the
// default. rapid's own -rapid.checks and -rapid.seed (RAPID_CHECKS,
// RAPID_SEED) override -ptxprop.checks and -ptxprop.seed.
//
//	flag                     environment              default  meaning
//	-ptxprop.backend         PTXPROP_BACKEND          auto     gpu, emu, emu-checked (the emulator checked as a GPU is) or auto (the GPU if built with -tags cuda and present)
//	-ptxprop.contexts        PTXPROP_CONTEXTS         1        contexts to open on each GPU, each a device contract runs spread over (the emulator: one)
//	-ptxprop.devices         PTXPROP_DEVICES          all      devices to spread contract runs over: all (every visible GPU), a count N (the first N; N emulator devices on the emulator), or ordinals 0,2 or 1-3
//	-ptxprop.report          PTXPROP_REPORT           ""       report path; "" is out/contract-report.json at the module root, off writes none
//	-ptxprop.merge           PTXPROP_MERGE            false    merge into the report at the path (same commit and device only) instead of replacing it
//	-ptxprop.deadline        PTXPROP_DEADLINE         0        end the run after this long, as Ctrl-C does (0: none)
//	-ptxprop.max-elements    PTXPROP_MAX_ELEMENTS     0        cap on the elements of one generated tensor (0: the backend's limits)
//	-ptxprop.progress        PTXPROP_PROGRESS         auto     progress interval; auto is 5s on a terminal, 1m otherwise; 0: none
//	-ptxprop.emu-adversarial PTXPROP_EMU_ADVERSARIAL  0        emulator: approximate instructions return any value within the PTX ISA's bound, from this seed (0: off)
//	-ptxprop.emu-schedule    PTXPROP_EMU_SCHEDULE     0        emulator: threads and blocks run in an order drawn from this seed (0: the canonical order)
//	-ptxprop.checks          PTXPROP_CHECKS           0        rapid checks per contract (0: rapid's default, 100)
//	-ptxprop.seed            PTXPROP_SEED             0        rapid's base seed (0: a random one); the report records the seed used
//	-ptxprop.loops           PTXPROP_LOOPS            auto     parallel rapid loops a contract run's checks are split over, each from its own seed (auto: GOMAXPROCS/4, at least 2, at most one per 50 checks; 1 replaying a fail file)
//	-ptxprop.targeted        PTXPROP_TARGETED         0.2      share of each contract run's checks that climb toward a larger error/tolerance from the worst input so far (0: none)
//	-ptxprop.guided          PTXPROP_GUIDED           0.1      emulator: share of each contract run's checks that mutate an input that reached a new branch direction or guard outcome (0: none; targeted + guided ≤ 1)
//	-ptxprop.watchdog        PTXPROP_WATCHDOG         0        bound on one launch and one launcher call (0: 30s a launch, 2m a call)
//	-ptxprop.summary         PTXPROP_SUMMARY          true     print the report's summary when the run ends
//	-ptxprop.faildb          PTXPROP_FAILDB           ""       failure database directory: stored failures replayed first, new counterexamples stored ("": none)
//	-ptxprop.shard           PTXPROP_SHARD            ""       this process's shard i/n ("": the job engine's index, else none)
//	-ptxprop.shard-count     PTXPROP_SHARD_COUNT      0        shard count beside JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's completions)
//	-ptxprop.shard-split     PTXPROP_SHARD_SPLIT      1        seed ranges each contract run is cut into (at most the shard count)
//	-ptxprop.shard-run       PTXPROP_SHARD_RUN        ""       identity the shards of one run share ("": the Slurm or Buildkite job's, else from the seed)
//	-ptxprop.coverage        PTXPROP_COVERAGE         true     emulator: record each kernel's branch directions and blocks executed, into the report
//
// # Failure database and shards
//
// With -ptxprop.faildb=DIR every contract run first replays the failures
// DIR holds for its prediction and run name (package faildb: each entry
// is a rapid fail file, staged where rapid v1.3.0 replays fail files
// before it generates a case, testdata/rapid/<Test>/ in the working
// directory, and removed after), and every new counterexample is stored
// there; a stored failure that fails again is the verdict, with the entry
// as its fail file. ptxprop report faildb lists and prunes DIR.
//
// -ptxprop.shard=i/n (or a Kubernetes Indexed Job's, Slurm job array's or
// Buildkite parallel step's index and count) makes the process shard i of
// n: it runs the contract runs and seed ranges properties.Shard assigns to
// i and records the others not_run; tests that check no prediction run on
// every shard. Every shard needs the same base seed and run identity:
// -ptxprop.seed, or -ptxprop.shard-run from which the seed is derived. The
// report records run.shard, and ptxprop merge joins the shards' reports,
// refusing a shard given twice.
//
// Progress lines go to the run's own output (Main: the test binary's
// stdout; Run: Config.Output), and "a terminal" means that output is one:
// a run whose output is captured (a pipe, a log) prints there every minute
// and writes nothing to the terminal it was started from. go test ./pkg
// holds a package's output back until it ends; go test run inside the
// package's directory, as make does, shows the lines as they come.
//
// # Several devices
//
// A run opens one context per device it selects (-ptxprop.devices: every
// visible GPU by default, after CUDA_VISIBLE_DEVICES has masked them; the
// ordinals are the driver's, counted among the visible ones). Each test that
// calls T gets one device for all its contract runs: the device with the
// fewest tests still running (among equals the one given the fewest so
// far, then the first), so tests running in parallel spread over the
// devices. The report lists the devices
// (run.devices: backend, ordinal, name, UUID and PCI bus id where known,
// and the contract runs and launches on each) and, for each prediction, the
// ordinals its contract runs launched on. MULTI-DEVICE-PARITY-001 compares the
// devices with each other; it is skipped with one device. On the emulator
// a count opens that many emulator devices, each with its own memory and
// modules.
//
// # Ending a run
//
// When the deadline passes, or at the first SIGINT or SIGTERM, contract
// runs stop before their next check (rapid's shrinking too): the report
// keeps the predictions that finished as they ended, the running ones
// inconclusive with the checks they passed, and those not started not_run;
// a test that calls T after the end is skipped at once. The report is
// written atomically at once and again when the tests have returned.
//
// After a signal the process exits within 5 seconds: what still runs then
// (a test that does not heed the end, a launch that hangs until its
// watchdog) is abandoned and the report written from what is known. Later
// signals are caught until the process exits, so that a second one (as
// timeout(1) sends, to its child and then to the child's process group)
// cannot kill it while it writes the report; a third exits at once, after
// writing it.
//
// # Exit codes
//
// Main returns 0 when every test passed and the report was written, 1 when
// a test failed, the deadline passed or the report could not be written, 2
// for an invalid setting and 130 (ExitInterrupted) after SIGINT or SIGTERM
// alike. go test does not pass the test binary's status on: it prints FAIL
// and exits 1 for any status but 0; the 130 is seen running the binary
// itself (go test -c).
//
// # Reports
//
// A run writes its own report, replacing the file at the path. With
// -ptxprop.merge it merges into the report there instead: the predictions
// it ran replace the file's and the others are kept; a file that cannot be
// read, or that is the report of another commit or device, is left as it
// is and this run's report is written beside it, the error naming both.
// A failure's reproduction is one command: go test with the package, the
// test's anchored -run pattern, rapid's fail file (or the failing check's
// seed) and every setting that may change the outcome and is not at its
// default, given as a flag or in the environment (ReplayFlags: backend,
// devices, max-elements, emu-adversarial, watchdog) and, for a failing
// check's seed, -ptxprop.loops=1: the failing loop alone, its base seed
// the failing check's; the report records the base seed and the loops the
// run used.
//
// On the emulator the report also holds the costs of ptxprop's kernels it
// lists (package kernels/cost: instructions and global bytes per element at
// fixed shapes); a GPU run records none, a sharded run only on shard 0;
// -ptxprop.merge replaces the file's costs with this run's.
package suite
