package properties

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties/gen"
)

// stubs returns, for every operation of the op table, an implementation of
// its interface.
func stubs(t *testing.T) map[string]any {
	t.Helper()
	m := map[string]any{}
	for _, f := range operations() {
		m[f.operation().Name()] = f.stub(func() error { return nil })
	}
	for _, o := range op.All() {
		if m[o.Name()] == nil {
			t.Fatalf("%s has no properties.Operation", o.Name())
		}
	}
	return m
}

// TestEveryOperationHasPredictions checks that every operation of the op
// table has a registry row of its own (a contract covering it alone) and
// is covered by the rows that hold of every operation, so that an op row
// added without its predictions is caught here.
func TestEveryOperationHasPredictions(t *testing.T) {
	impl := stubs(t)
	for _, o := range op.All() {
		var own, generic []string
		for _, p := range InOrder() {
			if !p.Covers(o.Name()) {
				continue
			}
			s := Subject{Impl: impl[o.Name()]}
			if p.Pair != nil {
				s.Forward = impl[p.Pair.Name()]
			}
			if !p.Takes(s) {
				t.Errorf("%s covers %s, but its contract does not take an implementation of it", p.ID, o.Name())
				continue
			}
			if len(p.Ops) == 1 {
				own = append(own, p.ID)
			} else {
				generic = append(generic, p.ID)
			}
		}
		if len(own) == 0 {
			t.Errorf("%s: no prediction of its own in the registry", o.Name())
		}
		for _, id := range []string{Determinism, Parity} {
			if !contains(generic, id) {
				t.Errorf("%s: not covered by %s", o.Name(), id)
			}
		}
	}
}

// TestContractsTakeTheirOps checks each row's contract against the
// implementations of every operation: it takes those it covers and no
// other, so a row listing the wrong operation for its contract fails.
func TestContractsTakeTheirOps(t *testing.T) {
	impl := stubs(t)
	for _, p := range InOrder() {
		if p.Contract == nil {
			continue
		}
		for _, o := range op.All() {
			s := Subject{Impl: impl[o.Name()]}
			if p.Pair != nil {
				s.Forward = impl[p.Pair.Name()]
			}
			if got, want := p.Takes(s), p.covers(o.Name()); got != want {
				t.Errorf("%s takes an implementation of %s: %v, want %v (it covers %v)", p.ID, o.Name(), got, want, p.Ops)
			}
		}
		if p.Takes(Subject{Impl: 42}) {
			t.Errorf("%s takes an int", p.ID)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestImplementEveryOperation: Implement makes an implementation of every
// operation of the op table from its name alone, which that operation's
// own predictions take, and which hands run the operation's arguments.
func TestImplementEveryOperation(t *testing.T) {
	for _, o := range op.All() {
		var got any
		impl, ok := Implement(o.Name(), func(_ cudart.Device, args any) error { got = args; return nil }, nil)
		if !ok {
			t.Errorf("Implement(%q) found no operation", o.Name())
			continue
		}
		for _, f := range operations() {
			if f.operation() != o {
				continue
			}
			run, ok := f.family(impl, gen.EmuLimits)
			if !ok {
				t.Errorf("%s: the implementation is not of the operation's interface", o.Name())
				continue
			}
			// A fixed number of drawn problems, whatever -rapid.checks says:
			// this tests the wiring, not the kernels.
			draw := rapid.Custom(func(rt *rapid.T) problem { return run(rt) })
			for seed := range 30 {
				if _, err := draw.Example(seed).run(nil); err != nil {
					t.Fatalf("%s (example %d): %v", o.Name(), seed, err)
				}
			}
			if got == nil || reflect.TypeOf(got).Elem().Name() != o.Args() {
				t.Errorf("%s: run got %T, want *op.%s", o.Name(), got, o.Args())
			}
		}
	}
	if _, ok := Implement("no.such.op", nil, nil); ok {
		t.Error("Implement found an operation called no.such.op")
	}
}
