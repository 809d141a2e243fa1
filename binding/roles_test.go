package binding

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
)

// roleOrder lists tensor roles in the order a table shows them: inputs,
// outputs, statistics. A role of ops missing here is appended in name
// order.
var roleOrder = []string{"x", "residual", "dy", "gamma", "beta", "positions", "y", "residual_out", "dx", "dgamma", "dbeta",
	"mean", "rms", "rstd", "std"}

// contractRoles describes one contract's roles as the op table (ops)
// declares them.
type contractRoles struct {
	name            string
	inputs, outputs []string // "x [rows·hidden]", "positions [rows, uint32] (optional)"
	saved           string   // "", "optional outputs", "required outputs", "required inputs"
	forms           []string // "rms_eps: rms [rows]"
	scalars         []string
}

func describeRoles() []contractRoles {
	var all []contractRoles
	for _, name := range Contracts() {
		o := ops[name]
		c := contractRoles{name: name, scalars: o.scalars}
		order := append([]string(nil), roleOrder...)
		for _, r := range sortedKeys(o.tensors) {
			if !contains(order, r) {
				order = append(order, r)
			}
		}
		for _, r := range order {
			spec, ok := o.tensors[r]
			if !ok || spec.saved != "" {
				continue
			}
			size := strings.ReplaceAll(spec.size, " * ", "·")
			if spec.positions {
				size += ", uint32"
			}
			s := fmt.Sprintf("%s [%s]", r, size)
			if !contains(o.required, r) {
				s += " (optional)"
			}
			if spec.input {
				c.inputs = append(c.inputs, s)
			} else {
				c.outputs = append(c.outputs, s)
			}
		}
		if len(o.forms) > 0 {
			dir := "inputs"
			if o.savedOut {
				dir = "outputs"
			}
			need := "optional"
			if o.savedRequired {
				need = "required"
			}
			c.saved = need + " " + dir
			for _, f := range sortedKeys(o.forms) {
				var rs []string
				for _, r := range o.forms[f] {
					rs = append(rs, fmt.Sprintf("%s [%s]", r, o.tensors[r].size))
				}
				c.forms = append(c.forms, f+": "+strings.Join(rs, ", "))
			}
		}
		all = append(all, c)
	}
	return all
}

// roleTableMarkdown is the README's table of every contract's roles.
func roleTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| contract | input tensors | output tensors | saved statistics (`saved:` form: roles) | scalars |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, c := range describeRoles() {
		saved := "none"
		if c.saved != "" {
			saved = c.saved + ": `" + strings.Join(c.forms, "`; `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", c.name, strings.Join(c.inputs, ", "), strings.Join(c.outputs, ", "),
			saved, strings.Join(c.scalars, ", "))
	}
	return b.String()
}

// roleTableYAML is the same table as comments of example.yaml.
func roleTableYAML() string {
	var b strings.Builder
	for _, c := range describeRoles() {
		fmt.Fprintf(&b, "# %s\n", c.name)
		fmt.Fprintf(&b, "#   inputs:  %s\n", strings.Join(c.inputs, ", "))
		fmt.Fprintf(&b, "#   outputs: %s\n", strings.Join(c.outputs, ", "))
		if c.saved != "" {
			fmt.Fprintf(&b, "#   saved (%s): %s\n", c.saved, strings.Join(c.forms, "; "))
		}
		fmt.Fprintf(&b, "#   scalars: %s\n", strings.Join(c.scalars, ", "))
	}
	return b.String()
}

// between returns the text of path between the lines begin and end.
func between(t *testing.T, path, begin, end string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	i := strings.Index(s, begin+"\n")
	j := strings.Index(s, end+"\n")
	if i < 0 || j < i {
		t.Fatalf("%s: no %q … %q section", path, begin, end)
	}
	return s[i+len(begin)+1 : j]
}

// TestRoleTable: the README's and example.yaml's tables of every
// contract's roles and saved statistics are the op table's (ops), so they
// cannot drift from what Load accepts. On a mismatch it prints the table
// to paste.
func TestRoleTable(t *testing.T) {
	if got, want := between(t, "../README.md", "<!-- roles: generated from binding's op table; binding's TestRoleTable checks it -->",
		"<!-- end of roles -->"), roleTableMarkdown(); got != want {
		t.Errorf("README.md's table of roles is not the op table's; replace it with\n%s", want)
	}
	if got, want := between(t, "testdata/example.yaml", "# --- roles: generated from binding's op table; TestRoleTable checks it ---",
		"# --- end of roles ---"), roleTableYAML(); got != want {
		t.Errorf("testdata/example.yaml's table of roles is not the op table's; replace it with\n%s", want)
	}
}

// TestSchemaEnums checks schema.json's enums against the op table: the
// contracts a binding may claim, the saved: forms, and the sums a
// reduction order may describe (a row, or a column-sum output). An
// operation added to the op table without the schema fails here.
func TestSchemaEnums(t *testing.T) {
	var s struct {
		Properties struct {
			Contract, Saved struct{ Enum []string }
		}
		Defs struct {
			Reduction struct {
				Properties struct{ Sum struct{ Enum []string } }
			}
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema(), &s); err != nil {
		t.Fatal(err)
	}
	forms, sums := map[string]bool{}, map[string]bool{"row": true}
	for _, name := range Contracts() {
		for f := range ops[name].forms {
			forms[f] = true
		}
		o, _ := op.Lookup(name)
		for _, x := range o.Tensors() {
			if x.Layout == op.ColumnSum {
				sums[x.Name] = true
			}
		}
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"contract", s.Properties.Contract.Enum, Contracts()},
		{"saved", s.Properties.Saved.Enum, sortedKeys(forms)},
		{"reductions[].sum", s.Defs.Reduction.Properties.Sum.Enum, sortedKeys(sums)},
	} {
		got := slices.Sorted(slices.Values(c.got))
		if !slices.Equal(got, c.want) {
			t.Errorf("schema.json's %s enum is %v, want the op table's %v", c.what, got, c.want)
		}
	}
}

// TestClaimsAreRegistryClaims: the claims a binding may disclaim are the
// registry's (properties.Prediction.Claim), and disclaiming one reports
// each of its predictions not_claimed with where the file said so.
func TestClaimsAreRegistryClaims(t *testing.T) {
	var s struct {
		Properties struct {
			Claims struct{ Properties map[string]any }
		}
	}
	if err := json.Unmarshal(Schema(), &s); err != nil {
		t.Fatal(err)
	}
	claims := map[string]bool{}
	for _, p := range properties.InOrder() {
		if p.Claim != "" {
			claims[p.Claim] = true
		}
	}
	if got, want := sortedKeys(s.Properties.Claims.Properties), sortedKeys(claims); !slices.Equal(got, want) {
		t.Errorf("schema.json's claims are %v, want the registry's %v", got, want)
	}
	src, err := os.ReadFile("testdata/rmsnorm_fwd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for claim := range claims {
		b, err := Parse("testdata/rmsnorm_fwd.yaml", append(src, "claims: {"+claim+": false}\n"...))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.disclaims(claim), "claims: {"+claim+": false}") {
			t.Errorf("disclaiming %s: %q", claim, b.disclaims(claim))
		}
	}
}
