package reports

import (
	"fmt"
	"slices"
	"strings"
)

// Backend is the cudart backend a run used.
type Backend string

// Backends.
const (
	BackendGPU Backend = "gpu" // a real device through cudart/gpu
	BackendEmu Backend = "emu" // the PTX interpreter cudart/emu
)

// PredictionStatus is the verdict on a prediction.
type PredictionStatus string

// Prediction statuses.
const (
	// Discharged: every check passed.
	Discharged PredictionStatus = "discharged"
	// Falsified: a check failed; the report holds the counterexample.
	Falsified PredictionStatus = "falsified"
	// Inconclusive: the checks neither passed nor failed, e.g. rapid
	// generated too few valid cases or a failure did not reproduce.
	Inconclusive PredictionStatus = "inconclusive"
	// Skipped: the prediction cannot run here (it needs a GPU, say);
	// Reason says why.
	Skipped PredictionStatus = "skipped"
	// Error: the harness failed (setup error, launch failure), not the claim.
	Error PredictionStatus = "error"
	// NotRun: the run did not attempt the prediction (filtered out by -run,
	// or not started before a deadline or a signal stopped the run). A
	// report with one is partial (Report.Partial).
	NotRun PredictionStatus = "not_run"
	// NotClaimed: the kernel makes no such claim (a binding's claims:
	// {determinism: false}), so the prediction was not put to it; Reason
	// says where it says so. Neither a failure nor a gap: a report with one
	// is not partial.
	NotClaimed PredictionStatus = "not_claimed"
)

// MutantKind says where a mutant comes from.
type MutantKind string

// Mutant kinds.
const (
	MutantNamed   MutantKind = "named"   // a hand-written alternative implementation
	MutantGeneric MutantKind = "generic" // a PTX mutation operator applied at a site
)

// MutantStatus is the fate of a mutant.
type MutantStatus string

// Mutant statuses.
const (
	MutantKilled     MutantStatus = "killed"     // some prediction failed on it (KilledBy)
	MutantSurvived   MutantStatus = "survived"   // every prediction passed on it
	MutantEquivalent MutantStatus = "equivalent" // judged to behave as the original
	MutantError      MutantStatus = "error"      // it could not be built or run
	MutantSkipped    MutantStatus = "skipped"    // not run
	// MutantNotExercised: no check executed the mutated instruction, so no
	// prediction could catch it; a gap in coverage, left out of the score.
	MutantNotExercised MutantStatus = "not_exercised"
)

// KernelOrigin says where a kernel comes from.
type KernelOrigin string

// Kernel origins.
const (
	KernelOurs    KernelOrigin = "ours"    // one of ptxprop's own kernels (package kernels)
	KernelBinding KernelOrigin = "binding" // a foreign kernel bound from a binding file
	// KernelUser is an implementation given to a contract in Go (a user's
	// own, named by itself or by its Go type): its PTX and entry when it
	// lists the kernels it launches, none when it launches no PTX.
	KernelUser KernelOrigin = "user"
)

// Flag marks a prediction with a finding beyond its status.
type Flag string

// Flags.
const (
	// FlagUnproven: no mutant was killed by this prediction, so nothing shows
	// that it can fail. Set by package falsify (Report.MarkUnproven).
	FlagUnproven Flag = "unproven"
	// FlagNonDeterministic: a failure did not reproduce on replay;
	// Prediction.NonDeterministic says what was seen.
	FlagNonDeterministic Flag = "nondeterministic"
)

var (
	backends           = []Backend{BackendGPU, BackendEmu}
	predictionStatuses = []PredictionStatus{Discharged, Falsified, Inconclusive, Skipped, Error, NotRun, NotClaimed}
	mutantKinds        = []MutantKind{MutantNamed, MutantGeneric}
	mutantStatuses     = []MutantStatus{MutantKilled, MutantSurvived, MutantEquivalent, MutantError, MutantSkipped, MutantNotExercised}
	kernelOrigins      = []KernelOrigin{KernelOurs, KernelBinding, KernelUser}
	flags              = []Flag{FlagUnproven, FlagNonDeterministic}
)

// Valid reports whether o is one of the KernelOrigin constants.
func (o KernelOrigin) Valid() bool { return slices.Contains(kernelOrigins, o) }

// MarshalText implements encoding.TextMarshaler; it fails for an invalid value.
func (o KernelOrigin) MarshalText() ([]byte, error) {
	return marshalEnum("kernel origin", o, kernelOrigins)
}

// UnmarshalText implements encoding.TextUnmarshaler; it fails for an invalid value.
func (o *KernelOrigin) UnmarshalText(t []byte) error {
	return unmarshalEnum("kernel origin", t, o, kernelOrigins)
}

// Valid reports whether b is one of the Backend constants.
func (b Backend) Valid() bool { return slices.Contains(backends, b) }

// Valid reports whether s is one of the PredictionStatus constants.
func (s PredictionStatus) Valid() bool { return slices.Contains(predictionStatuses, s) }

// Valid reports whether k is one of the MutantKind constants.
func (k MutantKind) Valid() bool { return slices.Contains(mutantKinds, k) }

// Valid reports whether s is one of the MutantStatus constants.
func (s MutantStatus) Valid() bool { return slices.Contains(mutantStatuses, s) }

// Valid reports whether f is one of the Flag constants.
func (f Flag) Valid() bool { return slices.Contains(flags, f) }

// MarshalText implements encoding.TextMarshaler; it fails for an invalid value.
func (b Backend) MarshalText() ([]byte, error) { return marshalEnum("backend", b, backends) }

// UnmarshalText implements encoding.TextUnmarshaler; it fails for an invalid value.
func (b *Backend) UnmarshalText(t []byte) error { return unmarshalEnum("backend", t, b, backends) }

// MarshalText implements encoding.TextMarshaler; it fails for an invalid value.
func (s PredictionStatus) MarshalText() ([]byte, error) {
	return marshalEnum("prediction status", s, predictionStatuses)
}

// UnmarshalText implements encoding.TextUnmarshaler; it fails for an invalid value.
func (s *PredictionStatus) UnmarshalText(t []byte) error {
	return unmarshalEnum("prediction status", t, s, predictionStatuses)
}

// MarshalText implements encoding.TextMarshaler; it fails for an invalid value.
func (k MutantKind) MarshalText() ([]byte, error) { return marshalEnum("mutant kind", k, mutantKinds) }

// UnmarshalText implements encoding.TextUnmarshaler; it fails for an invalid value.
func (k *MutantKind) UnmarshalText(t []byte) error {
	return unmarshalEnum("mutant kind", t, k, mutantKinds)
}

// MarshalText implements encoding.TextMarshaler; it fails for an invalid value.
func (s MutantStatus) MarshalText() ([]byte, error) {
	return marshalEnum("mutant status", s, mutantStatuses)
}

// UnmarshalText implements encoding.TextUnmarshaler; it fails for an invalid value.
func (s *MutantStatus) UnmarshalText(t []byte) error {
	return unmarshalEnum("mutant status", t, s, mutantStatuses)
}

// MarshalText implements encoding.TextMarshaler; it fails for an invalid value.
func (f Flag) MarshalText() ([]byte, error) { return marshalEnum("flag", f, flags) }

// UnmarshalText implements encoding.TextUnmarshaler; it fails for an invalid value.
func (f *Flag) UnmarshalText(t []byte) error { return unmarshalEnum("flag", t, f, flags) }

func enumError[E ~string](what string, v E, all []E) error {
	names := make([]string, len(all))
	for i, e := range all {
		names[i] = string(e)
	}
	return fmt.Errorf("invalid %s %s (want one of %s)", what, quote(string(v)), strings.Join(names, ", "))
}

func marshalEnum[E ~string](what string, v E, all []E) ([]byte, error) {
	if !slices.Contains(all, v) {
		return nil, enumError(what, v, all)
	}
	return []byte(v), nil
}

func unmarshalEnum[E ~string](what string, t []byte, v *E, all []E) error {
	e := E(t)
	if !slices.Contains(all, e) {
		return enumError(what, e, all)
	}
	*v = e
	return nil
}
