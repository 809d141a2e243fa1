package properties

import (
	"fmt"
	"sort"
	"sync"
)

// Prediction is a falsifiable claim about one or more kernels. Predictions
// are data: each ID maps to one contract function that tests it.
type Prediction struct {
	ID        string   // upstream ID, e.g. "FALSIFY-DIM-001"
	Title     string   // one line
	Statement string   // the claim, precise enough to be refuted
	Kernels   []string // kernel names (kernels.Kernel.Name) the claim is about
	Tolerance string   // the tolerance formula used, or "bit-exact"
	// Device says whether the prediction needs a device backend (GPU or
	// emulator); oracle self-tests run on the CPU alone.
	Device bool
}

var (
	regMu    sync.Mutex
	registry = map[string]*Prediction{}
)

// Register adds p to the registry. Registering an ID twice is a programming
// error and panics at init time.
func Register(p Prediction) *Prediction {
	regMu.Lock()
	defer regMu.Unlock()
	if p.ID == "" || p.Title == "" || p.Statement == "" {
		panic(fmt.Sprintf("properties: prediction %q needs an ID, a title and a statement", p.ID))
	}
	if _, dup := registry[p.ID]; dup {
		panic(fmt.Sprintf("properties: prediction %q registered twice", p.ID))
	}
	q := p
	registry[p.ID] = &q
	return &q
}

// Lookup returns the prediction registered under id.
func Lookup(id string) (*Prediction, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	p, ok := registry[id]
	return p, ok
}

// All returns every registered prediction, sorted by ID.
func All() []*Prediction {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]*Prediction, 0, len(registry))
	for _, p := range registry {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
