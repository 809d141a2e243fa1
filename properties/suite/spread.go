package suite

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/reports"
)

// spread hands the run's devices out to its tests and records where their
// launches went. Each test (a contract run's name) gets one device for all
// its contracts: the device with the fewest tests running; among equals the
// one given the fewest tests so far, then the first (so tests run one after
// another take turns). Tests that t.Parallel() start as others end, so the devices stay
// about equally busy whatever each test costs. The unit is a test, not a
// check: a contract run's rapid loops (Config.Loops) share its test's device.
// Splitting one prediction's checks over devices would be loops on
// several devices, added up as the loops of one device are.
type spread struct {
	devs []cudart.Device
	base properties.Config // Device, Devices and Open are set per test

	mu    sync.Mutex
	busy  []int                    // tests running on each device
	given []int                    // tests given each device so far
	runs  map[string][]*assignment // by test name, every time it ran
}

// assignment is one test's device and its launches on each device.
type assignment struct {
	dev      int            // index in spread.devs
	launches []atomic.Int64 // by index in spread.devs
	active   int            // calls of T not yet cleaned up
	cfg      properties.Config
}

func newSpread(devs []cudart.Device, base properties.Config) *spread {
	return &spread{devs: devs, base: base, busy: make([]int, len(devs)), given: make([]int, len(devs)), runs: map[string][]*assignment{}}
}

// assign returns the device assignment of the test name, choosing one when
// the test has none running. release ends it.
func (s *spread) assign(name string, open func(backend string, ordinal int, same bool) (cudart.Device, error)) *assignment {
	s.mu.Lock()
	defer s.mu.Unlock()
	if as := s.runs[name]; len(as) > 0 && as[len(as)-1].active > 0 {
		a := as[len(as)-1]
		a.active++
		return a
	}
	k := 0
	for i := range s.devs {
		if s.busy[i] < s.busy[k] || (s.busy[i] == s.busy[k] && s.given[i] < s.given[k]) {
			k = i
		}
	}
	s.busy[k]++
	s.given[k]++
	a := &assignment{dev: k, launches: make([]atomic.Int64, len(s.devs)), active: 1, cfg: s.base}
	counted := make([]cudart.Device, len(s.devs))
	for i, d := range s.devs {
		counted[i] = &countedDevice{Device: d, n: &a.launches[i]}
	}
	a.cfg.Device, a.cfg.Devices = counted[k], counted
	ordinal := s.devs[k].Info().Ordinal
	backend := s.devs[k].Info().Backend
	a.cfg.Open = func(b string) (cudart.Device, error) {
		if b != backend {
			return open(b, 0, false) // not one of the run's devices (the emulator beside a GPU)
		}
		d, err := open(b, ordinal, true)
		if err != nil {
			return nil, err
		}
		return &countedDevice{Device: d, n: &a.launches[k]}, nil // a private context on the test's device
	}
	s.runs[name] = append(s.runs[name], a)
	return a
}

func (s *spread) release(a *assignment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a.active--
	if a.active == 0 {
		s.busy[a.dev]--
	}
}

// devices returns the report's devices: each one's facts, the contract runs
// that launched on it and their launches. The contexts of one GPU
// (-ptxprop.contexts) are one device of the report, as an ordinal names it.
func (s *spread) devices() []reports.Device {
	var infos []cudart.Info
	at := make([]int, len(s.devs)) // s.devs index → infos index
	for i, d := range s.devs {
		info := d.Info()
		at[i] = slices.IndexFunc(infos, func(o cudart.Info) bool { return o.Backend == info.Backend && o.Ordinal == info.Ordinal })
		if at[i] < 0 {
			at[i] = len(infos)
			infos = append(infos, info)
		}
	}
	out := ReportDevices(infos)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, as := range s.runs {
		for _, a := range as {
			ran := make([]bool, len(out))
			for i := range a.launches {
				if n := a.launches[i].Load(); n > 0 {
					ran[at[i]] = true
					out[at[i]].Launches += int(n)
				}
			}
			for j, r := range ran {
				if r {
					out[j].ContractRuns++
				}
			}
		}
	}
	return out
}

// used returns the ordinals of the devices the named tests launched on,
// ascending.
func (s *spread) used(names []string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ords []int
	for _, name := range names {
		for _, a := range s.runs[name] {
			for i := range a.launches {
				if o := s.devs[i].Info().Ordinal; a.launches[i].Load() > 0 && !slices.Contains(ords, o) {
					ords = append(ords, o)
				}
			}
		}
	}
	slices.Sort(ords)
	return ords
}

// countedDevice is a run's device as one test sees it: it counts the
// test's launches on the device.
type countedDevice struct {
	cudart.Device
	n *atomic.Int64
}

func (d *countedDevice) Launch(m cudart.Module, entry string, g cudart.Geometry, params ...cudart.Param) error {
	d.n.Add(1)
	return d.Device.Launch(m, entry, g, params...)
}

// ReportDevices describes devices for a report's run.devices, with no
// work recorded on them.
func ReportDevices(devices []cudart.Info) []reports.Device {
	out := make([]reports.Device, len(devices))
	for i, info := range devices {
		out[i] = reports.Device{Backend: reportBackend(info), Ordinal: info.Ordinal, Name: info.Name, UUID: info.UUID, PCIBusID: info.PCIBusID}
	}
	return out
}

func reportBackend(info cudart.Info) reports.Backend {
	if info.Backend == "gpu" {
		return reports.BackendGPU
	}
	return reports.BackendEmu
}
