package op

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// namingAllowed are the files (module-relative) that may name an
// operation of the table: by its name, its family's prefix ("rope."), its
// op variable (op.RoPEForward) or its properties Operation
// (properties.RoPEForwardOp). Everything else derives from the table, so
// that adding an operation edits only these places: the table, the oracle's
// formulas, our kernels, the operation's contracts and predictions, and
// the mutants written for its kernels.
var namingAllowed = []string{
	"op/",                   // the table and the argument types
	"oracle/",               // the float64 formulas and their soundness rows
	"kernels/",              // our kernels and their host launchers
	"properties/rmsnorm.go", // contracts, interfaces and draws of each family
	"properties/layernorm.go",
	"properties/rope.go",
	"properties/softmax.go",
	"properties/predictions.go", // the registry rows
	"properties/oracle.go",      // the oracle's self-test contracts
	"falsify/named.go",          // named mutants of particular kernels
	"falsify/launchers.go",
}

// TestOnlyAllowedFilesNameOperations fails when a file outside
// namingAllowed names an operation: a per-operation switch or list that
// adding an operation would have to edit.
func TestOnlyAllowedFilesNameOperations(t *testing.T) {
	root := ".."
	names, idents := operationNames(t, root)
	if len(idents) < len(All()) {
		t.Fatalf("found %d operation variables in op/table.go, want at least %d", len(idents), len(All()))
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || allowed(rel) {
			return nil
		}
		if what := namesOperation(t, path, names, idents); what != "" {
			t.Errorf("%s names an operation (%s): derive it from the op table, or list the file in namingAllowed with the reason", rel, what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func allowed(rel string) bool {
	return slices.ContainsFunc(namingAllowed, func(a string) bool {
		return rel == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(rel, a))
	})
}

// operationNames returns the strings that name an operation (each name and
// its family's prefix) and the identifiers of the operations' variables:
// op's (from op/table.go) and properties' Operations (properties.XOp).
func operationNames(t *testing.T, root string) (names, idents map[string]bool) {
	names, idents = map[string]bool{}, map[string]bool{}
	for _, o := range All() {
		names[o.Name()] = true
		family, _, _ := strings.Cut(o.Name(), ".")
		names[family+"."] = true
	}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "op", "table.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok && len(v.Values) == 1 {
			if c, ok := v.Values[0].(*ast.CallExpr); ok {
				if ix, ok := c.Fun.(*ast.IndexExpr); ok {
					if id, ok := ix.X.(*ast.Ident); ok && id.Name == "define" {
						idents["op."+v.Names[0].Name] = true
						idents["properties."+v.Names[0].Name+"Op"] = true
					}
				}
			}
		}
		return true
	})
	return names, idents
}

// namesOperation returns what in the file at path names an operation, or "".
func namesOperation(t *testing.T, path string, names, idents map[string]bool) string {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var what string
	ast.Inspect(f, func(n ast.Node) bool {
		if what != "" {
			return false
		}
		switch x := n.(type) {
		case *ast.BasicLit:
			if s, err := strconv.Unquote(x.Value); err == nil && x.Kind == token.STRING && names[s] {
				what = x.Value
			}
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && idents[id.Name+"."+x.Sel.Name] {
				what = id.Name + "." + x.Sel.Name
			}
		}
		return true
	})
	return what
}
