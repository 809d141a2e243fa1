package properties

import (
	"context"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties/gen"
	"github.com/ptxprop/ptxprop/properties/outcome"
)

// TB is what a contract needs from its test: rapid's TB, and the Config of
// the run it belongs to. suite.T(t) makes one of a *testing.T; RunQuiet runs
// a contract on one that records failures instead of failing a test.
type TB interface {
	rapid.TB
	Config() *Config
}

// defaultWatchdog bounds a launcher call when Config.Watchdog is zero.
const defaultWatchdog = 2 * time.Minute

// Config is what contracts read from their runner, as values: where they
// launch, how large they draw, how long a launcher may take, and where their
// outcomes go. A runner builds one per run (package suite does, from its
// flags); contracts never change it.
type Config struct {
	// Device is where contracts launch. When nil, every prediction that
	// needs a device is skipped with NoDevice as its reason.
	Device   cudart.Device
	NoDevice string
	// Devices are every device of the run, one context each, Device among
	// them: MULTI-DEVICE-PARITY-001 compares them. Nil: Device alone.
	Devices []cudart.Device
	// Open opens a fresh device of the named backend for contracts that
	// need one of their own (FALSIFY-DIM-001 counts module loads, PARITY-001
	// compares the GPU with the emulator). Nil: cudart.Open with
	// cudart.DefaultOptions.
	Open func(backend string) (cudart.Device, error)
	// MaxElements caps the elements of one generated tensor (0: the
	// backend's limits, gen.EmuLimits or gen.GPULimits).
	MaxElements int
	// MaxRows and MaxHidden narrow the rows and row length generators draw
	// (0: the backend's limits), and HiddenMultiple makes every row length a
	// multiple of it: an implementation that handles only some shapes (a
	// binding's constraints) is judged on those.
	MaxRows, MaxHidden, HiddenMultiple int
	// Domain, when set, is the set of shapes the implementation handles
	// (a binding's constraints): every shape draw is made within it
	// (gen.Limits.Conform) rather than drawn at large and refused.
	Domain *gen.Domain
	// MaxPosition, above 0, bounds the token positions drawn to
	// 0..MaxPosition−1 (a binding whose cos/sin tables hold that many).
	MaxPosition int
	// EverydayMaxRows, when set, narrows the rows of the everyday shapes
	// alone, not those of a prediction's regimes: a run that cannot afford
	// the emulator's wide row counts everywhere (the mutation analysis)
	// keeps them where a prediction declares it needs them.
	EverydayMaxRows int
	// Storage says in what format the implementation stores the tensors of
	// each role (the op table's names: x, gamma, dy, y, rms, …; absent:
	// float32), computing in float32: a bfloat16 or float16 kernel. The
	// contracts round drawn inputs of a 16-bit role to it before the oracle
	// sees them (gen.Limits.Values), and the bound of a 16-bit output adds
	// oracle.StorageTol (Obs.Within): the one further rounding of the result.
	Storage map[string]oracle.Storage
	// Watchdog bounds a launcher call before a contract calls it a liveness
	// failure (0: two minutes).
	Watchdog time.Duration
	// Seed is rapid's base seed for the run (0: unknown). With it, a
	// failure rapid does not shrink (a liveness or set-up failure) gets
	// the command that replays the checks up to it.
	Seed uint64
	// Loops splits each contract run's checks over parallel rapid loops,
	// each from its own base seed, with its own shrinking and replay; the
	// outcome is the first failing loop's, the counts and statistics all
	// loops'. Nil: one rapid.Check under rapid's settings as they are, from
	// Seed. A runner that owns rapid's settings supplies it (package
	// suite's -ptxprop.loops).
	Loops RapidLoops
	// Target is the targeted search: the share of each contract run's
	// checks that climb toward a larger error/tolerance (nil: none, every
	// check random).
	Target *Targeting
	// Guide is coverage-guided generation: the share of each contract
	// run's checks that mutate inputs that reached new branches (nil:
	// none).
	Guide *Guidance
	// Recorder receives every contract run's progress and outcome (nil:
	// outcomes are dropped).
	Recorder *outcome.Recorder
	// Context ends the run when done (a deadline, Ctrl-C): a contract run
	// in progress stops before its next check and is recorded inconclusive
	// with the checks it passed; one not yet started is skipped. The reason
	// is context.Cause. Nil: never.
	Context context.Context
	// FailDB is the failure database the run replays first and stores its
	// counterexamples in (nil: none).
	FailDB *FailDB
	// Shard is the part of the work this process does (nil: all of it).
	Shard *Shard
}

// stopped returns why the run was ended, or nil.
func (c *Config) stopped() error {
	if c.Context == nil || c.Context.Err() == nil {
		return nil
	}
	return context.Cause(c.Context)
}

// Limits returns the generator limits for the configured device.
func (c *Config) Limits() gen.Limits { return c.LimitsFor("") }

// LimitsFor returns the generator limits of prediction id on the configured
// device: Limits with the shape regimes the prediction declares
// (Prediction.Regimes), which the run's caps below bound as they bound the
// everyday shapes.
func (c *Config) LimitsFor(id string) gen.Limits {
	lim := gen.GPULimits
	if c.Device == nil || c.Device.Info().Backend == "emu" {
		lim = gen.EmuLimits
	}
	if p, ok := Lookup(id); ok {
		lim = lim.WithRegimes(p.Regimes...)
	}
	if c.MaxElements > 0 {
		lim = lim.Cap(c.MaxElements)
	}
	if c.MaxRows > 0 {
		lim.MaxRows = min(lim.MaxRows, c.MaxRows)
	}
	if c.EverydayMaxRows > 0 && c.EverydayMaxRows < lim.MaxRows {
		lim.RegimeMaxRows, lim.MaxRows = lim.MaxRows, c.EverydayMaxRows
	}
	if c.MaxHidden > 0 {
		lim.MaxHidden = min(lim.MaxHidden, c.MaxHidden)
	}
	if c.HiddenMultiple > 1 {
		lim.HiddenMultiple = c.HiddenMultiple
	}
	if c.MaxPosition > 0 {
		lim.MaxPosition = c.MaxPosition
	}
	if st := c.steering(); st != nil {
		lim = lim.WithSteering(st) // guided.go
	}
	return lim.WithStorage(c.Storage).WithDomain(c.Domain)
}

// WatchdogLimit returns the configured watchdog, or two minutes.
func (c *Config) WatchdogLimit() time.Duration {
	if c.Watchdog > 0 {
		return c.Watchdog
	}
	return defaultWatchdog
}

// open opens a fresh device of backend.
func (c *Config) open(backend string) (cudart.Device, error) {
	if c.Open != nil {
		return c.Open(backend)
	}
	dev, err := cudart.Open(backend, cudart.DefaultOptions())
	if err == nil {
		o := dev.Options()
		o.Watchdog = cudart.WatchdogFor(dev)
		dev.SetOptions(o)
	}
	return dev, err
}

// openPrivate opens a fresh device of backend for prediction id alone, or
// records the error as id's outcome and ends t (returning nil, for a TB
// whose Fatalf returns).
func openPrivate(t TB, id, backend string) cudart.Device {
	t.Helper()
	d, err := t.Config().open(backend)
	if err != nil {
		t.Config().Recorder.Record(outcome.Outcome{ID: id, Status: outcome.Errored, Reason: err.Error(), Runs: []string{t.Name()}})
		t.Fatalf("%s: opening a private device: %v", id, err)
		return nil
	}
	return d
}

// deviceFor returns t's device, or skips prediction id with the reason when
// the run has none.
func deviceFor(t TB, id string) cudart.Device {
	t.Helper()
	cfg := t.Config()
	if cfg.Device == nil {
		why := cfg.NoDevice
		if why == "" {
			why = "the run has no device"
		}
		skip(t, id, fmt.Sprintf("no device backend: %s", why))
		return nil
	}
	return cfg.Device
}

// onDevice returns t's device and the generator limits of prediction id in
// its run (its regimes included), or
// skips prediction id (as deviceFor does) when the run has no device.
func onDevice(t TB, id string) (cudart.Device, gen.Limits) {
	t.Helper()
	dev := deviceFor(t, id)
	return dev, t.Config().LimitsFor(id)
}
