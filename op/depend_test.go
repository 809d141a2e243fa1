package op

import "testing"

// Every operation declares, for each of its outputs, at least one input it
// must read, and every declaration names an output and an input of its
// operation.
func TestDependencesCoverEveryOutput(t *testing.T) {
	for _, o := range All() {
		role := map[string]Role{}
		for _, x := range o.Tensors() {
			role[x.Name] = x.Role
		}
		must := map[string]bool{}
		for _, d := range DependencesOf(o) {
			if role[d.Out] != Out || role[d.In] != In {
				t.Errorf("%s: %v names %s (%v) and %s (%v)", o.Name(), d, d.Out, role[d.Out], d.In, role[d.In])
			}
			must[d.Out] = must[d.Out] || d.Must
		}
		for name, r := range role {
			if r == Out && !must[name] {
				t.Errorf("%s: output %s must read no input", o.Name(), name)
			}
		}
	}
}
