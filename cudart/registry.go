package cudart

import (
	"fmt"
	"sort"
	"sync"
)

// Factory opens a Backend. It returns an error wrapping ErrNoDevice when the
// machine it drives is absent.
type Factory func() (Backend, error)

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

// Open opens the named backend ("gpu", "emu") and wraps it into a Device.
// An empty name or "auto" picks "gpu" when it is registered and a device is
// present, else "emu".
func Open(name string, opts Options) (Device, error) {
	regMu.Lock()
	gpu, hasGPU := registry["gpu"]
	f, ok := registry[name]
	emu, hasEmu := registry["emu"]
	regMu.Unlock()
	switch name {
	case "", "auto":
		if hasGPU {
			b, err := gpu()
			if err == nil {
				return New(b, opts), nil
			}
		}
		if !hasEmu {
			return nil, &Error{Op: "open", Err: Errorf(ErrNoDevice, "no backend registered (import cudart/emu or build with -tags cuda)")}
		}
		b, err := emu()
		if err != nil {
			return nil, wrap("open", "emu", err)
		}
		return New(b, opts), nil
	}
	if !ok {
		return nil, &Error{Op: "open", Name: name, Err: Errorf(ErrInvalid, "unknown backend %q (registered: %v)", name, Backends())}
	}
	b, err := f()
	if err != nil {
		return nil, wrap("open", name, err)
	}
	return New(b, opts), nil
}

// Registered reports whether a backend is registered under name.
func Registered(name string) bool {
	regMu.Lock()
	defer regMu.Unlock()
	_, ok := registry[name]
	return ok
}

func (s Stats) String() string {
	return fmt.Sprintf("modules=%d hits=%d launches=%d allocs=%d live=%d", s.ModuleLoads, s.CacheHits, s.Launches, s.Allocs, s.LiveBuffers)
}
