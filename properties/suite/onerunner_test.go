package suite_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// contractImports are the imports through which a package's tests reach
// contracts: such a package runs them under the runner.
var contractImports = map[string]bool{
	"github.com/ptxprop/ptxprop/properties":       true,
	"github.com/ptxprop/ptxprop/properties/suite": true,
	"pgregory.net/rapid":                          true,
}

// runnerCalls are what a TestMain leaves to suite.Main: the command line,
// rapid's settings, the devices and the signals. A TestMain that calls one
// is a runner of its own.
var runnerCalls = map[string]bool{
	"flag.Parse": true, "flag.Set": true, "flag.Visit": true, "flag.CommandLine": true,
	"suite.SetRapid": true, "suite.OpenDevice": true, "suite.OpenDevices": true, "suite.Load": true,
	"suite.RegisterFlags": true, "signal.Notify": true, "signal.NotifyContext": true,
}

// One runner: every TestMain of a package whose tests reach contracts
// (they import properties, properties/suite or rapid) hands its m to
// suite.Main alone — never m.Run, nor m to anything else — exits with
// what Main returned, and calls nothing of the runner's (flags, rapid's
// settings, devices, signals) itself. Packages falsify and binding had
// runners of their own: flags parsed by hand, rapid's checks set by
// flag.Set, devices opened and closed around m.Run.
func TestOneRunner(t *testing.T) {
	root := moduleRootDir(t)
	bad := checkTestMains(t, root)
	for _, b := range bad {
		t.Error(b)
	}
}

// A TestMain of the old shapes is refused: the rule can fail.
func TestOneRunnerRefusesOwnRunners(t *testing.T) {
	for name, src := range map[string]string{
		"own flags and m.Run": `package p
import ("flag"; "os"; "testing"; _ "pgregory.net/rapid")
func TestMain(m *testing.M) { flag.Parse(); flag.Set("rapid.checks", "25"); os.Exit(m.Run()) }`,
		"suite.Main beside flag.Set": `package p
import ("flag"; "os"; "testing"; "github.com/ptxprop/ptxprop/properties/suite")
func TestMain(m *testing.M) { flag.Set("rapid.checks", "25"); os.Exit(suite.Main(m)) }`,
		"m.Run after suite.Main": `package p
import ("os"; "testing"; "github.com/ptxprop/ptxprop/properties/suite")
func TestMain(m *testing.M) { suite.Main(m); os.Exit(m.Run()) }`,
		"Main's code dropped": `package p
import ("os"; "testing"; "github.com/ptxprop/ptxprop/properties/suite")
func TestMain(m *testing.M) { suite.Main(m); os.Exit(0) }`,
		"no suite.Main": `package p
import ("os"; "testing"; "github.com/ptxprop/ptxprop/properties")
var _ properties.TB
func TestMain(m *testing.M) { code := m.Run(); os.Exit(code) }`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if bad := checkTestMains(t, dir); len(bad) == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
	ok := `package p
import ("os"; "testing"; "github.com/ptxprop/ptxprop/properties/suite")
func TestMain(m *testing.M) {
	if os.Getenv("X") == "" { os.Setenv("PTXPROP_REPORT", "off") }
	code := suite.Main(m, suite.WithChecks(25))
	os.Exit(code)
}`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte(ok), 0o644); err != nil {
		t.Fatal(err)
	}
	if bad := checkTestMains(t, dir); len(bad) > 0 {
		t.Errorf("a TestMain through suite.Main refused: %v", bad)
	}
}

func moduleRootDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", dir)
		}
	}
}

// checkTestMains returns what is wrong with the TestMains of the test files
// under root, by package directory.
func checkTestMains(t *testing.T, root string) []string {
	t.Helper()
	type pkg struct {
		contracts bool
		mains     []*ast.FuncDecl
		files     []string
	}
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		p := pkgs[filepath.Dir(path)]
		if p == nil {
			p = &pkg{}
			pkgs[filepath.Dir(path)] = p
		}
		for _, imp := range f.Imports {
			if s, _ := strconv.Unquote(imp.Path.Value); contractImports[s] {
				p.contracts = true
			}
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "TestMain" {
				p.mains = append(p.mains, fn)
				p.files = append(p.files, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, p := range pkgs {
		if !p.contracts {
			continue // its tests run no contract (cmd/ptxprop runs main in a child)
		}
		for i, fn := range p.mains {
			rel, _ := filepath.Rel(root, p.files[i])
			for _, why := range ownRunner(fn) {
				bad = append(bad, rel+": TestMain "+why)
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// ownRunner says how fn, a TestMain(m *testing.M), does what suite.Main
// does instead of handing it over.
func ownRunner(fn *ast.FuncDecl) []string {
	var m string
	if ps := fn.Type.Params.List; len(ps) == 1 && len(ps[0].Names) == 1 {
		m = ps[0].Names[0].Name
	}
	var why []string
	mains, exits := 0, false
	var mainResult *ast.CallExpr
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			name := callName(x.Fun)
			switch {
			case name == "suite.Main":
				mains++
				mainResult = x
				if len(x.Args) == 0 || !isIdent(x.Args[0], m) {
					why = append(why, "calls suite.Main without its m first")
				}
				for _, a := range x.Args[1:] {
					if usesIdent(a, m) {
						why = append(why, "hands m to an option of suite.Main")
					}
				}
				return false
			case name == "os.Exit":
				exits = true
			case runnersCall(name):
				why = append(why, "calls "+name+": the runner's (suite.Main's) to do")
			}
			for _, a := range x.Args {
				if isIdent(a, m) {
					why = append(why, "hands m to "+name+", not to suite.Main")
				}
			}
		case *ast.SelectorExpr:
			if isIdent(x.X, m) {
				why = append(why, "calls "+m+"."+x.Sel.Name+": suite.Main runs the tests")
			}
		}
		return true
	})
	switch {
	case mains == 0:
		why = append(why, "does not run the tests through suite.Main: func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }")
	case mains > 1:
		why = append(why, "calls suite.Main more than once")
	case !exits:
		why = append(why, "does not exit with suite.Main's code (os.Exit)")
	case !resultReachesExit(fn.Body, mainResult):
		why = append(why, "drops suite.Main's exit code")
	}
	return why
}

// runnersCall reports whether the call named name is one of runnerCalls
// or a method of one (flag.CommandLine.Set).
func runnersCall(name string) bool {
	for c := range runnerCalls {
		if name == c || strings.HasPrefix(name, c+".") {
			return true
		}
	}
	return false
}

// resultReachesExit reports whether main's result is os.Exit's argument,
// directly or through a variable it is assigned to.
func resultReachesExit(body *ast.BlockStmt, main *ast.CallExpr) bool {
	vars := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && len(as.Rhs) == 1 && as.Rhs[0] == main {
			for _, l := range as.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					vars[id.Name] = true
				}
			}
		}
		return true
	})
	ok := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, is := n.(*ast.CallExpr); is && callName(c.Fun) == "os.Exit" && len(c.Args) == 1 {
			if c.Args[0] == main {
				ok = true
			}
			if id, is := c.Args[0].(*ast.Ident); is && vars[id.Name] {
				ok = true
			}
		}
		return true
	})
	return ok
}

// callName spells a called expression: "os.Exit", "flag.CommandLine.Set".
func callName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return callName(x.X) + "." + x.Sel.Name
	case *ast.IndexExpr:
		return callName(x.X)
	}
	return ""
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && name != "" && id.Name == name
}

func usesIdent(e ast.Expr, name string) bool {
	used := false
	ast.Inspect(e, func(n ast.Node) bool {
		used = used || isIdent(asExpr(n), name)
		return !used
	})
	return used
}

func asExpr(n ast.Node) ast.Expr {
	e, _ := n.(ast.Expr)
	return e
}

// rapid's settings are the process's (rapid v1.3.0 keeps them in package
// variables); package suite alone sets them, for a run (Main, Run's
// Config.Checks, Config.Seed and Config.Rapid) or one contract run
// (RunContract). No Go file of the module outside the properties tree sets
// one of rapid's flags or calls suite.SetRapid: binding's TestMain set
// -rapid.checks, its tests -rapid.nofailfile and the shrink time, falsify
// each mutant's checks and seed, and ptxprop verify -rapid.checks, each
// for the whole process. The properties tree is left out: suite is the
// owner, and package properties' own tests exercise the harness under
// rapid's settings and its benchmarks set the checks around their loop.
func TestRapidSetOnlyBySuite(t *testing.T) {
	root := moduleRootDir(t)
	for _, b := range rapidSetters(t, root, []string{filepath.Join(root, "properties")}) {
		t.Error(b)
	}
}

// A file that sets rapid's flags is found: the rule can fail.
func TestRapidSetOnlyBySuiteRefuses(t *testing.T) {
	for name, src := range map[string]string{
		"flag.Set":             `package p; import "flag"; func f() { flag.Set("rapid.checks", "25") }`,
		"flag.CommandLine.Set": `package p; import "flag"; func f(n string) { flag.CommandLine.Set("rapid."+n, "1") }`,
		"suite.SetRapid":       `package p; import "github.com/ptxprop/ptxprop/properties/suite"; func f() { defer suite.SetRapid(suite.Rapid{})() }`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if len(rapidSetters(t, dir, nil)) == 0 {
			t.Errorf("%s: not found", name)
		}
	}
}

// rapidSetters lists the calls under root, outside the directories skip,
// that set rapid's flags.
func rapidSetters(t *testing.T, root string, skip []string) []string {
	t.Helper()
	var bad []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != root && (n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			for _, s := range skip {
				if path == s {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name := callName(c.Fun)
			switch {
			case name == "suite.SetRapid":
				bad = append(bad, fmt.Sprintf("%s:%d: calls suite.SetRapid: give the run its settings as a value (suite.RunContract, Config.Rapid)", rel, fset.Position(c.Pos()).Line))
			case (name == "flag.Set" || name == "flag.CommandLine.Set") && len(c.Args) > 0 && rapidFlagName(c.Args[0]):
				bad = append(bad, fmt.Sprintf("%s:%d: %s sets one of rapid's flags for the whole process: give the run its settings as a value (suite.RunContract, Config.Rapid)", rel, fset.Position(c.Pos()).Line, name))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

// rapidFlagName reports whether e names one of rapid's flags: a string
// literal "rapid.…", or a concatenation that starts with one.
func rapidFlagName(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(x.Value)
		return err == nil && strings.HasPrefix(s, "rapid.")
	case *ast.BinaryExpr:
		return x.Op == token.ADD && rapidFlagName(x.X)
	case *ast.ParenExpr:
		return rapidFlagName(x.X)
	}
	return false
}
