package cudart

import (
	"fmt"
	"sort"
	"sync"
)

// Factory opens a Backend: the device of the given ordinal, with the
// backend's own options (nil: its defaults; never options of another
// backend, which Open refuses). It returns an error wrapping ErrNoDevice
// when the machine it drives is absent.
type Factory func(ordinal int, opts BackendOptions) (Backend, error)

// The registry is written only by the backends' package inits, before any
// Open: which backends a binary has is decided when it is linked.
var (
	regMu    sync.Mutex
	registry = map[string]Factory{}
)

// Register makes a backend available to Open under name ("gpu", "emu").
// Backends call it from their package init; it never touches hardware.
func Register(name string, f Factory) {
	regMu.Lock()
	defer regMu.Unlock()
	registry[name] = f
}

// Backends lists the registered backend names, sorted.
func Backends() []string {
	regMu.Lock()
	defer regMu.Unlock()
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Registered reports whether a backend is registered under name.
func Registered(name string) bool {
	regMu.Lock()
	defer regMu.Unlock()
	_, ok := registry[name]
	return ok
}

// Open opens the named backend ("gpu", "emu") on device opts.Ordinal, with
// opts.Backend for its own options, and wraps it into a Device. An empty
// name or "auto" picks "gpu" when it is registered and a device is present,
// else "emu"; opts.Backend then goes to the one picked if it is for it, and
// is left out otherwise (emulator options do not apply to a GPU).
//
//	opts := cudart.DefaultOptions()
//	opts.Backend = emu.Options{Config: emu.Config{Approx: emu.ApproxAdversarial, ApproxSeed: 7}}
//	dev, err := cudart.Open("emu", opts)
func Open(name string, opts Options) (Device, error) {
	if opts.Ordinal < 0 {
		return nil, &Error{Op: "open", Name: name, Err: Errorf(ErrInvalid, "device ordinal %d", opts.Ordinal)}
	}
	for _, n := range candidates(name) {
		f, ok := factory(n)
		if !ok {
			continue
		}
		bo := opts.Backend
		if bo != nil && bo.BackendName() != n {
			if name == n {
				return nil, &Error{Op: "open", Name: name, Err: Errorf(ErrInvalid, "options for backend %q (%T) given to %q", bo.BackendName(), bo, n)}
			}
			bo = nil
		}
		b, err := f(opts.Ordinal, bo)
		if err != nil {
			if n == "gpu" && name != n {
				continue // auto: fall back to the emulator
			}
			return nil, wrap("open", n, err)
		}
		return New(b, opts), nil
	}
	if name == "" || name == "auto" {
		return nil, &Error{Op: "open", Err: Errorf(ErrNoDevice, "no backend registered (import cudart/emu or build with -tags cuda)")}
	}
	return nil, &Error{Op: "open", Name: name, Err: Errorf(ErrInvalid, "unknown backend %q (registered: %v)", name, Backends())}
}

// candidates are the backends Open tries for name, in order.
func candidates(name string) []string {
	if name == "" || name == "auto" {
		return []string{"gpu", "emu"}
	}
	return []string{name}
}

func factory(name string) (Factory, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	f, ok := registry[name]
	return f, ok
}

func (s Stats) String() string {
	return fmt.Sprintf("modules=%d hits=%d launches=%d allocs=%d live=%d", s.ModuleLoads, s.CacheHits, s.Launches, s.Allocs, s.LiveBuffers)
}
