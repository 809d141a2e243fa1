package binding

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/ptx"
)

//go:embed schema.json
var schemaJSON []byte

// Schema returns the JSON Schema of the binding format.
func Schema() []byte { return append([]byte(nil), schemaJSON...) }

// ErrInvalid is wrapped by every error about a binding file itself (as
// opposed to a failure of the device): the file, its PTX, or a shape the
// binding refuses. The command line exits 2 on it. It wraps
// properties.ErrSetup, so that a contract run that meets one at a drawn
// shape ends with the status error, never falsified: the file is at
// fault, not the kernel.
var ErrInvalid error = invalidError{}

type invalidError struct{}

func (invalidError) Error() string { return "invalid binding" }
func (invalidError) Unwrap() error { return properties.ErrSetup }

// Error is a problem with a binding file, at a line of it (0: the file as
// a whole).
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *Error) Unwrap() error { return ErrInvalid }

// Hardware limits every launch is checked against before it is made.
const (
	MaxBlockThreads = 1024
	// MaxSharedBytes is the most shared memory (dynamic plus the PTX's
	// static) a block may have on sm_90 with the opt-in attribute.
	MaxSharedBytes = 227 * 1024
	maxGridX       = 1<<31 - 1
	maxGridYZ      = 65535
	maxBlockZ      = 64
)

// Binding is a loaded, checked binding file. Impl returns the
// implementation of its contract's interface.
type Binding struct {
	Name     string // the file's name field, or its base name
	Contract string // rmsnorm.forward, …
	Path     string // the binding file
	Storage  oracle.Storage
	Saved    string // the saved-statistic form, "" when none is bound
	// Forward is the forward binding a backward names (forward:), nil
	// when it names none.
	Forward *Binding
	// NoDeterminism, when not "", says the file claims no bit
	// determinism (claims: {determinism: false}), and where: the
	// determinism prediction is then reported not_claimed, not run.
	NoDeterminism string
	// Views: the kernels accept tensors at any 4-byte aligned address
	// (views: true), so the contracts pass them misaligned views, as they
	// do ours (op.Offsets). Off by default: a foreign kernel may assume
	// the alignment of a fresh allocation.
	Views bool

	op          *opSpec
	disclaimed  map[string]string // claim name → where the file says false
	consts      map[string]int64
	lets        map[string]expr
	letSrc      map[string]string
	constraints []constraint
	storage     map[string]oracle.Storage // per tensor role
	launches    []*launch
	scratch     []*scratchBuf
	alias       map[string]string // output role → input role
	aliasOf     map[string]string // input role → output role
	// onePointer are the aliased outputs passed through their input's
	// parameter (or the input through theirs): one pointer, read and
	// written in place.
	onePointer map[string]bool
	reductions []reductionDecl
	redExprs   [][2]expr
	bound      map[string]bool // roles bound by some launch
	strided    map[string]bool // row tensors some launch passes a {stride: T} of
	rowStride  expr            // row stride of the strided tensors; nil: hidden
	rowLine    int
	faults     *faultLog
	// feasible are the shapes the load-time search found to meet the
	// constraints, smallest first (nil without constraints): the
	// generators draw from them what they would draw outside (Domain).
	feasible []Shape
	// inputs are the extra read-only tables (inputs:), by name.
	inputs map[string]*extraInput
	// maxPosition bounds the positions a call may pass (the rows of its
	// rope tables; 0: none).
	maxPosition int
	hostSums    []*hostSum
	hostOut     map[string]bool // outputs a host sum writes
}

// extraInput is a read-only table the kernel takes besides the contract's
// tensors: rows × cols float32 values of kind value (rope.cos, rope.sin).
type extraInput struct {
	name       string
	rows, cols expr
	value      string
	line       int
}

// hostSum is a sum ptxprop performs after the launches: output into gets
// the float32 sum of rows partial rows of scratch buffer from, in order.
type hostSum struct {
	into, from string
	rows       expr
	line       int
}

// faultLog keeps the binding errors met during a run (the file at fault
// at a drawn shape, found by no load-time probe), the first one per line,
// so that Verify can report them and the command line exit 2.
type faultLog struct {
	mu   sync.Mutex
	seen map[string]bool
	errs []error
}

// fault records err if it is a binding error (not a refused shape: that is
// an invalid draw).
func (b *Binding) fault(err error) {
	if err == nil || !errors.Is(err, ErrInvalid) || errors.Is(err, properties.ErrShapeRefused) || b.faults == nil {
		return
	}
	key := err.Error()
	var be *Error
	if errors.As(err, &be) {
		key = fmt.Sprintf("%s:%d", be.File, be.Line)
	}
	b.faults.mu.Lock()
	defer b.faults.mu.Unlock()
	if !b.faults.seen[key] {
		b.faults.seen[key] = true
		b.faults.errs = append(b.faults.errs, err)
	}
}

// runFaults returns the binding errors recorded so far.
func (b *Binding) runFaults() []error {
	b.faults.mu.Lock()
	defer b.faults.mu.Unlock()
	return append([]error(nil), b.faults.errs...)
}

type constraint struct {
	src  string
	e    expr
	line int
}

type launch struct {
	entry   string
	ptxPath string
	ptx     []byte
	static  int // static shared bytes the entry declares
	// reqntid, maxntid are the entry's .reqntid and .maxntid (nil: none).
	reqntid, maxntid []int64
	grid             [3]expr
	block            [3]expr
	shared           expr
	params           []*param
	line             int
	// dimLines are the lines of grid[0..2], block[0..2] and shared (the
	// launch's line where a field is not written).
	dimLines [7]int
}

// paramKind says what a launch parameter passes.
type paramKind uint8

const (
	pTensor paramKind = iota + 1
	pScalar
	pStride
	pScratch
	pIgnore
	pValue
	pInput // an extra read-only table (inputs:)
)

type param struct {
	kind    paramKind
	name    string // role, stride's tensor or scratch name
	e       expr   // pValue
	kindC   cudart.Kind
	bits    uint64 // pIgnore
	index   int
	ptxName string
	ptxType string
	line    int
}

type scratchBuf struct {
	name   string
	kind   cudart.Kind
	size   expr
	zeroed bool
	line   int
}

// loader collects the problems of one file so that Load reports them all.
type loader struct {
	path       string
	errs       []error
	unresolved bool // some launch's .entry could not be read
}

func (l *loader) errf(line int, format string, args ...any) {
	l.errs = append(l.errs, &Error{File: l.path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (l *loader) err() error { return errors.Join(l.errs...) }

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

func compiledSchema() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		const id = "https://github.com/ptxprop/ptxprop/binding/schema.json"
		if err := c.AddResource(id, doc); err != nil {
			schemaErr = err
			return
		}
		schema, schemaErr = c.Compile(id)
	})
	return schema, schemaErr
}

// Load reads, validates and compiles the binding file at path: the schema,
// every expression, every role, each launch's parameters against its
// .entry signature, and the geometry and scratch sizes over a spread of
// shapes the constraints allow (probeShapes). Nothing is launched. Errors wrap ErrInvalid and name
// the file and line.
func Load(path string) (*Binding, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read the binding file: %v", unwrapPath(err))}
	}
	return Parse(path, src)
}

// yamlError turns yaml.v3's "yaml: line N: msg" into file:N: msg.
func yamlError(path string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = strings.Join(te.Errors, "; ")
	}
	var line int
	if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return &Error{File: path, Line: line, Msg: msg}
	}
	return &Error{File: path, Msg: msg}
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse is Load for a file's contents; path names it in errors and PTX
// paths are relative to its directory.
func Parse(path string, src []byte) (*Binding, error) {
	l := &loader{path: path}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, yamlError(path, err)
	}
	if root.Kind == 0 {
		return nil, &Error{File: path, Msg: "empty file"}
	}
	if err := l.validate(&root); err != nil {
		return nil, err
	}
	var f file
	if err := root.Decode(&f); err != nil {
		return nil, yamlError(path, err)
	}
	b := l.compile(&f)
	if err := l.err(); err != nil {
		return nil, err
	}
	return b, nil
}

// validate checks the document against the JSON Schema and reports the
// deepest failures at their lines.
func (l *loader) validate(root *yaml.Node) error {
	s, err := compiledSchema()
	if err != nil {
		return fmt.Errorf("binding: schema: %w", err)
	}
	var v any
	if err := root.Decode(&v); err != nil {
		return &Error{File: l.path, Msg: err.Error()}
	}
	j, err := json.Marshal(jsonable(v))
	if err != nil {
		return &Error{File: l.path, Msg: fmt.Sprintf("not a JSON-compatible document: %v", err)}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return &Error{File: l.path, Msg: err.Error()}
	}
	err = s.Validate(doc)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	p := message.NewPrinter(language.English)
	var leaves []*jsonschema.ValidationError
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	seen := map[string]bool{}
	for _, e := range leaves {
		loc := "/" + strings.Join(e.InstanceLocation, "/")
		msg := fmt.Sprintf("%s: %s", loc, e.ErrorKind.LocalizedString(p))
		if seen[msg] {
			continue
		}
		seen[msg] = true
		l.errf(lineAt(root, e.InstanceLocation), "%s", msg)
	}
	return l.err()
}

// jsonable turns yaml.v3's decoded maps into ones encoding/json accepts.
func jsonable(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = jsonable(x)
		}
		return v
	case map[any]any:
		m := map[string]any{}
		for k, x := range v {
			m[fmt.Sprint(k)] = jsonable(x)
		}
		return m
	case []any:
		for i, x := range v {
			v[i] = jsonable(x)
		}
	}
	return v
}

// lineAt returns the line of the node at a JSON pointer path.
func lineAt(n *yaml.Node, path []string) int {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, k := range path {
		switch n.Kind {
		case yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					n, found = n.Content[i+1], true
					break
				}
			}
			if !found {
				return n.Line
			}
		case yaml.SequenceNode:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(n.Content) {
				return n.Line
			}
			n = n.Content[i]
		default:
			return n.Line
		}
	}
	return n.Line
}

// storageOf parses a dtype name.
func storageOf(s string) (oracle.Storage, bool) {
	switch s {
	case "float32", "f32", "fp32":
		return oracle.StorageFloat32, true
	case "bfloat16", "bf16":
		return oracle.StorageBFloat16, true
	case "float16", "f16", "fp16", "half":
		return oracle.StorageFloat16, true
	}
	return 0, false
}

func (l *loader) compile(f *file) *Binding {
	b := &Binding{Name: f.Name, Path: l.path, consts: map[string]int64{}, lets: map[string]expr{},
		letSrc: map[string]string{}, storage: map[string]oracle.Storage{}, alias: map[string]string{},
		aliasOf: map[string]string{}, onePointer: map[string]bool{}, bound: map[string]bool{},
		inputs: map[string]*extraInput{}, hostOut: map[string]bool{}, strided: map[string]bool{},
		faults: &faultLog{seen: map[string]bool{}}}
	if b.Name == "" {
		b.Name = strings.TrimSuffix(filepath.Base(l.path), filepath.Ext(l.path))
	}
	b.Contract = f.Contract.V
	for _, claim := range sortedKeys(f.Claims.V) {
		if !f.Claims.V[claim] {
			if b.disclaimed == nil {
				b.disclaimed = map[string]string{}
			}
			b.disclaimed[claim] = fmt.Sprintf("%s:%d: claims: {%s: false}", l.path, f.Claims.Line, claim)
		}
	}
	b.NoDeterminism = b.disclaimed["determinism"]
	b.Views = f.Views
	b.op = ops[f.Contract.V]
	if b.op == nil { // the schema's enum catches this; keep the message if it is widened
		l.errf(f.Contract.Line, "unknown contract %q (%s)", f.Contract.V, strings.Join(Contracts(), ", "))
		return b
	}

	// Storage formats.
	b.Storage = oracle.StorageFloat32
	if f.DType.Set {
		s, ok := storageOf(f.DType.V)
		if !ok {
			l.errf(f.DType.Line, "dtype %q is not handled: ptxprop binds float32, bfloat16 and float16 storage (compute in float32)", f.DType.V)
		}
		b.Storage = s
	}
	for role, spec := range b.op.tensors {
		switch {
		case spec.positions:
			continue
		case spec.saved != "":
			b.storage[role] = oracle.StorageFloat32
		default:
			b.storage[role] = b.Storage
		}
	}
	for _, role := range sortedKeys(f.DTypes) {
		spec, ok := b.op.tensors[role]
		if !ok || spec.positions {
			l.errf(0, "dtypes: %q is not a value tensor of %s", role, b.Contract)
			continue
		}
		s, ok := storageOf(f.DTypes[role])
		if !ok {
			l.errf(0, "dtypes: %s: dtype %q is not handled: ptxprop binds float32, bfloat16 and float16 storage", role, f.DTypes[role])
			continue
		}
		b.storage[role] = s
	}

	l.constants(b, f)
	l.savedForm(b, f)

	// Constraints.
	for _, c := range f.Constraints {
		e, err := parseExpr(c.V, true)
		if err != nil {
			l.errf(c.Line, "constraint: %v", err)
			continue
		}
		l.checkNames(b, e, c.Line, "constraint "+strconv.Quote(c.V))
		b.constraints = append(b.constraints, constraint{src: c.V, e: e, line: c.Line})
	}

	// Scratch.
	seenScratch := map[string]bool{}
	for _, s := range f.Scratch {
		if seenScratch[s.Name] {
			l.errf(s.Line, "scratch %q declared twice", s.Name)
		}
		seenScratch[s.Name] = true
		sb := &scratchBuf{name: s.Name, kind: cudart.F32, zeroed: s.Init == "zeroed", line: s.Line}
		switch s.DType {
		case "int32":
			sb.kind = cudart.I32
		case "uint32":
			sb.kind = cudart.U32
		}
		sb.size = l.expr(b, s.Size, "scratch "+s.Name+" size")
		b.scratch = append(b.scratch, sb)
	}

	l.extraInputs(b, f)

	// Launches.
	modules := map[string]*ptx.Module{}
	texts := map[string][]byte{}
	for i := range f.Launches {
		b.launches = append(b.launches, l.launch(b, f, &f.Launches[i], modules, texts))
	}
	l.aliases(b, f)
	l.hostSums(b, f)
	if !l.unresolved {
		l.roles(b, f) // without every signature, missing roles are noise
	}
	l.strides(b, f)
	l.reductionDecls(b, f)
	if f.Forward.Set {
		l.forward(b, f)
	}
	if len(l.errs) == 0 {
		l.probe(b)
	}
	return b
}

func (l *loader) constants(b *Binding, f *file) {
	reserved := map[string]bool{}
	for _, n := range shapeNames {
		reserved[n] = true
	}
	for _, n := range b.op.scalars {
		reserved[n] = true
	}
	kv := func(n *yaml.Node, what string, fn func(k, v *yaml.Node)) {
		if n.Kind == 0 {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if reserved[k.Value] {
				l.errf(k.Line, "%s %q shadows a shape or scalar name", what, k.Value)
				continue
			}
			if _, dup := b.consts[k.Value]; dup {
				l.errf(k.Line, "%s %q defined twice", what, k.Value)
				continue
			}
			if _, dup := b.lets[k.Value]; dup {
				l.errf(k.Line, "%s %q defined twice", what, k.Value)
				continue
			}
			fn(k, n.Content[i+1])
		}
	}
	kv(&f.Constants, "constant", func(k, v *yaml.Node) {
		x, err := strconv.ParseInt(v.Value, 0, 64)
		if err != nil {
			l.errf(v.Line, "constant %s: %q is not an integer", k.Value, v.Value)
			return
		}
		b.consts[k.Value] = x
	})
	kv(&f.Let, "let", func(k, v *yaml.Node) {
		e, err := parseExpr(v.Value, false)
		if err != nil {
			l.errf(v.Line, "let %s: %v", k.Value, err)
			return
		}
		b.lets[k.Value], b.letSrc[k.Value] = e, v.Value
	})
	for name, e := range b.lets {
		l.checkNames(b, e, 0, "let "+name)
	}
	// A let that refers to itself through others never ends.
	for name := range b.lets {
		if _, err := b.env(probeShape(b.op), nil)(name); err != nil && strings.Contains(err.Error(), "refers to itself") {
			l.errf(lineOfKey(&f.Let, name), "let %s: %v", name, err)
		}
	}
}

func lineOfKey(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i].Line
		}
	}
	return n.Line
}

// savedForm checks the saved-statistics form against the contract.
func (l *loader) savedForm(b *Binding, f *file) {
	if !f.Saved.Set {
		return
	}
	if len(b.op.forms) == 0 {
		l.errf(f.Saved.Line, "saved: %s has no saved statistics", b.Contract)
		return
	}
	if _, ok := b.op.forms[f.Saved.V]; !ok {
		l.errf(f.Saved.Line, "saved: %q is not a form of %s's statistics (%s)", f.Saved.V, b.Contract, strings.Join(sortedKeys(b.op.forms), ", "))
		return
	}
	b.Saved = f.Saved.V
}

// checkNames reports every name of e that is neither a shape name, a
// constant nor a let.
func (l *loader) checkNames(b *Binding, e expr, line int, what string) {
	e.names(func(n string) {
		if b.known(n) {
			return
		}
		var all []string
		all = append(all, shapeNames...)
		all = append(all, sortedKeys(b.consts)...)
		all = append(all, sortedKeys(b.lets)...)
		l.errf(line, "%s: unknown name %q (known: %s)", what, n, strings.Join(all, ", "))
	})
}

func (b *Binding) known(n string) bool {
	if _, ok := b.consts[n]; ok {
		return true
	}
	if _, ok := b.lets[n]; ok {
		return true
	}
	for _, s := range shapeNames {
		if s == n {
			return true
		}
	}
	return false
}

// expr parses an arithmetic expression field.
func (l *loader) expr(b *Binding, p pos[string], what string) expr {
	if !p.Set {
		return numExpr{0}
	}
	e, err := parseExpr(p.V, false)
	if err != nil {
		hint := ""
		if strings.Count(p.V, "(") != strings.Count(p.V, ")") {
			hint = "\n\t(YAML splits [a, b] at commas: quote an expression that has one, e.g. [\"cdiv(hidden, 32)\"])"
		}
		l.errf(p.Line, "%s: %v%s", what, err, hint)
		return numExpr{0}
	}
	l.checkNames(b, e, p.Line, what+" "+strconv.Quote(p.V))
	return e
}

// relative resolves a path written in the binding file at file.
func relative(file, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(file), p)
}

// ptxKind returns the cudart kind of a PTX parameter type, or false for a
// type no role can be passed as.
func ptxKind(t string) (cudart.Kind, bool) {
	switch t {
	case "u32", "b32":
		return cudart.U32, true
	case "s32":
		return cudart.I32, true
	case "u64", "b64":
		return cudart.U64, true
	case "s64":
		return cudart.I64, true
	case "f32":
		return cudart.F32, true
	case "f64":
		return cudart.F64, true
	}
	return 0, false
}

func (l *loader) launch(b *Binding, f *file, d *launchDecl, modules map[string]*ptx.Module, texts map[string][]byte) *launch {
	ln := &launch{entry: d.Entry.V, line: d.Line}
	ptxPath := f.PTX
	if d.PTX.Set {
		ptxPath = d.PTX
	}
	if !ptxPath.Set {
		l.errf(d.Line, "%s: no PTX file: set ptx at the top of the file or in this launch", d.Entry.V)
		l.unresolved = true
		return ln
	}
	ln.ptxPath = relative(l.path, ptxPath.V)
	for i := range ln.dimLines {
		ln.dimLines[i] = d.Line
	}
	dims := func(ds []pos[string], what string, lines []int) [3]expr {
		var r [3]expr
		for i := range r {
			r[i] = numExpr{1}
			if i < len(ds) {
				r[i] = l.expr(b, ds[i], fmt.Sprintf("%s %s[%d]", d.Entry.V, what, i))
				lines[i] = ds[i].Line
			}
		}
		return r
	}
	ln.grid, ln.block = dims(d.Grid, "grid", ln.dimLines[0:3]), dims(d.Block, "block", ln.dimLines[3:6])
	ln.shared = l.expr(b, d.Shared, d.Entry.V+" shared")
	if d.Shared.Set {
		ln.dimLines[6] = d.Shared.Line
	}

	m, ok := modules[ln.ptxPath]
	if !ok {
		text, err := os.ReadFile(ln.ptxPath)
		switch {
		case err != nil:
			l.errf(ptxPath.Line, "ptx: cannot read %s: %v", ln.ptxPath, unwrapPath(err))
		default:
			m, err = ptx.Parse(text)
			if err != nil {
				l.errf(ptxPath.Line, "ptx: %s: %v", ln.ptxPath, err)
			}
			texts[ln.ptxPath] = text
		}
		modules[ln.ptxPath] = m
	}
	ln.ptx = texts[ln.ptxPath]
	if m == nil {
		l.unresolved = true
		return ln
	}
	var fn *ptx.Function
	for _, e := range m.Entries() {
		if e.Name == d.Entry.V {
			fn = e
		}
	}
	if fn == nil {
		var names []string
		for _, e := range m.Entries() {
			names = append(names, e.Name)
		}
		l.errf(d.Entry.Line, "entry %q not in %s (its entries: %s)", d.Entry.V, ptxPath.V, strings.Join(names, ", "))
		l.unresolved = true
		return ln
	}
	if m.AddressSize == 32 {
		l.errf(ptxPath.Line, "ptx: %s uses 32-bit addresses; ptxprop binds 64-bit PTX only", ptxPath.V)
	}
	ln.static = staticShared(m, fn)
	for _, d := range fn.Directives {
		switch d.Name {
		case "reqntid":
			ln.reqntid = d.Args
		case "maxntid":
			ln.maxntid = d.Args
		}
	}
	if len(d.Params) != len(fn.Params) {
		l.errf(d.Line, "%s: %d params bound, but the .entry (%s:%d) declares %d: %s", d.Entry.V, len(d.Params), ptxPath.V, fn.Line, len(fn.Params), signature(fn))
	}
	for i, pd := range d.Params {
		if i >= len(fn.Params) {
			break
		}
		ln.params = append(ln.params, l.param(b, d.Entry.V, i, pd, fn.Params[i]))
	}
	return ln
}

// staticShared returns the bytes of sized .shared variables at module
// scope and in fn's body (an approximation: module-scope ones count for
// every entry, as a kernel may use any of them).
func staticShared(m *ptx.Module, fn *ptx.Function) int {
	n := 0
	add := func(v *ptx.Variable) {
		if v.Space == "shared" && v.Linkage != "extern" {
			n += v.Size() * v.Elements()
		}
	}
	for _, v := range m.Variables() {
		add(v)
	}
	for _, s := range fn.Body {
		if v, ok := s.(*ptx.Variable); ok {
			add(v)
		}
	}
	return n
}

func signature(fn *ptx.Function) string {
	var parts []string
	for _, p := range fn.Params {
		parts = append(parts, "."+p.Type+" "+p.Name)
	}
	return fn.Name + "(" + strings.Join(parts, ", ") + ")"
}

func (l *loader) param(b *Binding, entry string, i int, pd paramDecl, v *ptx.Variable) *param {
	p := &param{index: i, ptxName: v.Name, ptxType: v.Type, line: pd.Line}
	where := fmt.Sprintf("%s param %d (%s .%s)", entry, i, v.Name, v.Type)
	k, ok := ptxKind(v.Type)
	if !ok || len(v.Dims) > 0 {
		l.errf(pd.Line, "%s: ptxprop cannot pass a parameter of this type (want .u32/.s32/.b32, .u64/.s64/.b64, .f32 or .f64)", where)
		return p
	}
	p.kindC = k
	pointer := func(what string) {
		if k != cudart.U64 && k != cudart.I64 {
			l.errf(pd.Line, "%s: %s is a pointer, but the parameter is .%s (want .u64 or .b64)", where, what, v.Type)
		}
	}
	integer := func(what string) {
		if k == cudart.F32 || k == cudart.F64 {
			l.errf(pd.Line, "%s: %s is an integer, but the parameter is .%s", where, what, v.Type)
		}
	}
	switch {
	case pd.Role != "":
		p.name = pd.Role
		if _, ok := b.inputs[pd.Role]; ok {
			p.kind = pInput
			pointer("input " + pd.Role)
			break
		}
		if _, ok := b.op.tensors[pd.Role]; ok {
			p.kind = pTensor
			pointer("tensor " + pd.Role)
			break
		}
		if contains(b.op.scalars, pd.Role) {
			p.kind = pScalar
			if floatScalars[pd.Role] {
				if k != cudart.F32 && k != cudart.F64 {
					l.errf(pd.Line, "%s: %s is a float, but the parameter is .%s", where, pd.Role, v.Type)
				}
			} else {
				integer(pd.Role)
			}
			break
		}
		l.errf(pd.Line, "%s: %q is not a role of %s (tensors: %s; scalars: %s; or {stride: T}, {scratch: NAME}, {ignore: VALUE}, {value: EXPR})",
			where, pd.Role, b.Contract, strings.Join(sortedKeys(b.op.tensors), ", "), strings.Join(b.op.scalars, ", "))
	case pd.Stride != "":
		p.kind, p.name = pStride, pd.Stride
		if _, ok := b.op.tensors[pd.Stride]; !ok {
			l.errf(pd.Line, "%s: stride of %q, which is not a tensor of %s", where, pd.Stride, b.Contract)
		}
		integer("a stride")
	case pd.Scratch != "":
		p.kind, p.name = pScratch, pd.Scratch
		found := false
		for _, s := range b.scratch {
			found = found || s.name == pd.Scratch
		}
		if !found {
			l.errf(pd.Line, "%s: scratch %q is not declared", where, pd.Scratch)
		}
		pointer("scratch " + pd.Scratch)
	case pd.Ignore != nil:
		p.kind = pIgnore
		x, err := strconv.ParseFloat(pd.Ignore.Value, 64)
		if err != nil {
			l.errf(pd.Line, "%s: ignore: %q is not a number", where, pd.Ignore.Value)
			break
		}
		switch k {
		case cudart.F32:
			p.bits = uint64(math.Float32bits(float32(x)))
		case cudart.F64:
			p.bits = math.Float64bits(x)
		default:
			if x != math.Trunc(x) {
				l.errf(pd.Line, "%s: ignore: %v is not an integer", where, x)
			}
			p.bits = uint64(int64(x))
			if k.Size() == 4 {
				p.bits &= math.MaxUint32
			}
		}
	case pd.Value != "":
		p.kind = pValue
		p.e = l.expr(b, pos[string]{V: pd.Value, Line: pd.Line, Set: true}, where)
		integer("a value")
	default:
		l.errf(pd.Line, "%s: empty parameter", where)
	}
	return p
}

// roles checks that every role is bound once per launch at most, that the
// contract's required roles and the saved form's are bound somewhere, and
// that nothing else is bound.
func (l *loader) roles(b *Binding, f *file) {
	for _, ln := range b.launches {
		seen := map[string]int{}
		for _, p := range ln.params {
			if p.kind != pTensor && p.kind != pScalar {
				continue
			}
			if j, dup := seen[p.name]; dup {
				l.errf(p.line, "%s: role %q bound twice, to params %d and %d", ln.entry, p.name, j, p.index)
			}
			seen[p.name] = p.index
			b.bound[p.name] = true
		}
	}
	for r := range b.hostOut {
		if b.bound[r] {
			l.errf(0, "host_sums: %s is written by ptxprop's sum, and also bound to a launch parameter", r)
		}
		b.bound[r] = true
	}
	// An output written over an input through one pointer (alias, with
	// only one of the two roles bound to a parameter) is bound with it:
	// one buffer holds the input before the launches and the output after.
	for _, out := range sortedKeys(b.alias) {
		in := b.alias[out]
		if b.bound[in] != b.bound[out] {
			b.bound[in], b.bound[out] = true, true
			b.onePointer[out] = true
		}
	}
	savedRoles := map[string]bool{}
	if b.Saved != "" {
		for _, r := range b.op.forms[b.Saved] {
			savedRoles[r] = true
			if !b.bound[r] {
				l.errf(f.Saved.Line, "role %q of the saved form %s is not bound to any launch parameter", r, b.Saved)
			}
		}
	} else if b.op.savedRequired {
		var forms []string
		for _, form := range sortedKeys(b.op.forms) {
			forms = append(forms, fmt.Sprintf("%s (saved: %s)", strings.Join(b.op.forms[form], " and "), form))
		}
		why := "consumes the forward's statistics"
		if b.op.savedOut {
			why = "saves statistics the op table requires"
		}
		l.errf(f.Contract.Line, "%s %s, and none are bound: bind %s", b.Contract, why, strings.Join(forms, " or "))
	}
	for _, r := range b.op.required {
		if !b.bound[r] {
			l.errf(f.Contract.Line, "role %q of %s is not bound to any launch parameter", r, b.Contract)
		}
	}
	for _, r := range sortedKeys(b.bound) {
		if spec, ok := b.op.tensors[r]; ok && spec.saved != "" && !savedRoles[r] {
			if b.Saved == "" {
				l.errf(0, "role %q is a saved statistic; say its form with saved: (%s)", r, strings.Join(sortedKeys(b.op.forms), ", "))
			} else {
				l.errf(0, "role %q is not part of the saved form %s (%s)", r, b.Saved, strings.Join(b.op.forms[b.Saved], ", "))
			}
		}
	}
	if b.op.optionalPositions && !b.bound["positions"] && !b.bound["pos"] {
		l.errf(0, "%s: bind positions (one per row) or pos (one for all rows)", b.Contract)
	}
}

// extraInputs reads inputs: each table's shape and value. A rope table's
// rows are the positions it holds: a constant expression, which bounds the
// positions the generators draw (maxPosition).
func (l *loader) extraInputs(b *Binding, f *file) {
	n := &f.Inputs
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, line := n.Content[i].Value, n.Content[i].Line
		var d inputDecl
		if err := n.Content[i+1].Decode(&d); err != nil {
			l.errf(line, "inputs: %s: %v", name, err)
			continue
		}
		_, isTensor := b.op.tensors[name]
		if isTensor || contains(b.op.scalars, name) || b.known(name) {
			l.errf(line, "inputs: %q is already a role or name of %s", name, b.Contract)
			continue
		}
		if !b.op.traits.Positional {
			l.errf(line, "inputs: %s: %s tables are for rotations by position; %s takes none", name, d.Value, b.Contract)
			continue
		}
		in := &extraInput{name: name, value: d.Value, line: line,
			rows: l.expr(b, d.Shape[0], "inputs "+name+" shape[0]"), cols: l.expr(b, d.Shape[1], "inputs "+name+" shape[1]")}
		if !b.constant(in.rows) {
			l.errf(d.Shape[0].Line, "inputs: %s: its rows (%s) are the positions it holds, and must be an expression of the constants: they bound the positions drawn", name, d.Shape[0].V)
			continue
		}
		rows, err := in.rows.eval(b.env(Shape{}, nil))
		if err != nil || rows < 1 || rows > 1<<20 {
			l.errf(d.Shape[0].Line, "inputs: %s: %d rows (%v), want 1..2^20", name, rows, err)
			continue
		}
		if b.maxPosition == 0 || int(rows) < b.maxPosition {
			b.maxPosition = int(rows)
		}
		b.inputs[name] = in
	}
}

// hostSums reads host_sums: each output must be a column sum of the
// contract, its partials a float32 scratch buffer.
func (l *loader) hostSums(b *Binding, f *file) {
	for _, d := range f.HostSums {
		spec, ok := b.op.tensors[d.Into]
		if !ok || spec.input || spec.size != perCol {
			l.errf(d.Line, "host_sums: %q is not a column-sum output of %s", d.Into, b.Contract)
			continue
		}
		var from *scratchBuf
		for _, s := range b.scratch {
			if s.name == d.From {
				from = s
			}
		}
		switch {
		case from == nil:
			l.errf(d.Line, "host_sums: scratch %q is not declared", d.From)
			continue
		case from.kind != cudart.F32:
			l.errf(d.Line, "host_sums: scratch %s is not float32", d.From)
			continue
		case b.hostOut[d.Into]:
			l.errf(d.Line, "host_sums: %s summed twice", d.Into)
			continue
		}
		b.hostOut[d.Into] = true
		b.hostSums = append(b.hostSums, &hostSum{into: d.Into, from: d.From, line: d.Line, rows: l.expr(b, d.Rows, "host_sums "+d.Into+" rows")})
	}
}

func (l *loader) aliases(b *Binding, f *file) {
	n := &f.Alias
	for i := 0; i+1 < len(n.Content); i += 2 {
		out, in := n.Content[i].Value, n.Content[i+1].Value
		line := n.Content[i].Line
		so, okOut := b.op.tensors[out]
		si, okIn := b.op.tensors[in]
		switch {
		case !okOut || so.input:
			l.errf(line, "alias: %q is not an output tensor of %s", out, b.Contract)
		case !okIn || !si.input:
			l.errf(line, "alias: %q is not an input tensor of %s", in, b.Contract)
		case so.size != si.size:
			l.errf(line, "alias: %s [%s] and %s [%s] differ in size", out, so.size, in, si.size)
		case b.storage[out] != b.storage[in]:
			l.errf(line, "alias: %s (%v) and %s (%v) differ in storage", out, b.storage[out], in, b.storage[in])
		case b.aliasOf[in] != "":
			l.errf(line, "alias: %s is already written over by %s", in, b.aliasOf[in])
		default:
			b.alias[out], b.aliasOf[in] = in, out
		}
	}
}

// strides records the tensors passed with their row stride and checks
// row_stride against them.
func (l *loader) strides(b *Binding, f *file) {
	for _, ln := range b.launches {
		for _, p := range ln.params {
			if p.kind == pStride && b.op.tensors[p.name].size == rowsHidden {
				b.strided[p.name] = true
			}
		}
	}
	if !f.RowStride.Set {
		return
	}
	b.rowStride, b.rowLine = l.expr(b, f.RowStride, "row_stride"), f.RowStride.Line
	if len(b.strided) == 0 {
		l.errf(f.RowStride.Line, "row_stride: no launch passes a row tensor's stride ({stride: T}), so every tensor must be contiguous")
	}
	for out, in := range b.alias {
		if b.onePointer[out] {
			b.strided[out] = b.strided[out] || b.strided[in]
			b.strided[in] = b.strided[out]
			continue
		}
		if b.strided[out] != b.strided[in] {
			l.errf(f.RowStride.Line, "row_stride: %s is written over %s, but only one of them is passed with its stride", out, in)
		}
	}
	for _, r := range sortedKeys(b.strided) {
		if !b.bound[r] {
			l.errf(f.RowStride.Line, "row_stride: the stride of %s is passed, but %s itself is not", r, r)
		}
	}
}

func (l *loader) reductionDecls(b *Binding, f *file) {
	for _, r := range f.Reductions {
		switch {
		case b.op.traits.Elementwise:
			l.errf(r.Line, "reductions: %s sums nothing", b.Contract)
			continue
		case r.Sum == "row":
		case (r.Sum == "dgamma" || r.Sum == "dbeta") && b.op.tensors[r.Sum].size != "":
		default:
			l.errf(r.Line, "reductions: %s has no %s sum", b.Contract, r.Sum)
			continue
		}
		b.reductions = append(b.reductions, r)
		b.redExprs = append(b.redExprs, [2]expr{l.expr(b, r.Serial, "reduction serial"), l.expr(b, r.Tree, "reduction tree")})
	}
}

// forward checks a backward against the forward binding it names: the
// forward must be of the matching contract and save its statistics in the
// form this backward reads.
func (l *loader) forward(b *Binding, f *file) {
	want := forwardOf(b.Contract)
	if want == "" {
		l.errf(f.Forward.Line, "forward: %s consumes no forward's statistics", b.Contract)
		return
	}
	path := relative(l.path, f.Forward.V)
	fw, err := Load(path)
	if err != nil {
		l.errf(f.Forward.Line, "forward: %v", err)
		return
	}
	if fw.Contract != want {
		l.errf(f.Forward.Line, "forward: %s claims %s, not %s", f.Forward.V, fw.Contract, want)
		return
	}
	if fw.Saved != b.Saved {
		l.errf(f.Forward.Line, "forward: %s saves its statistics as %q, but this backward reads %q", f.Forward.V, fw.Saved, b.Saved)
	}
	b.Forward = fw
}

// probe searches the shapes the constraints allow (search), keeping them
// for the generators (Domain), and evaluates every expression at each of
// them and then over a spread of the shapes the generators draw
// (probeShapes), so that impossible geometry, bad arithmetic and oversized
// scratch are reported at load time rather than at some draw. Each line at
// fault is reported once, at the first shape that shows it.
func (l *loader) probe(b *Binding) {
	var shapes []Shape
	if len(b.constraints) > 0 {
		feasible, params, fixed := b.search()
		if len(feasible) == 0 {
			line := b.constraints[0].line
			l.errf(line, "%s", b.searchError(params, fixed))
			return
		}
		b.feasible = feasible
		shapes = feasible // the shapes the generators fall back to
	}
	seen := map[int]bool{}
	for _, s := range append(shapes, probeShapes(b.Contract)...) {
		_, err := b.plan(s)
		var r *refusal
		if err == nil || errors.As(err, &r) {
			continue
		}
		line := 0
		var be *Error
		if errors.As(err, &be) {
			line = be.Line
		}
		if !seen[line] {
			seen[line] = true
			l.errs = append(l.errs, err)
		}
	}
}

// probeElements bounds the probed shapes' rows·hidden: the GPU's default
// cap on a generated tensor (gen.GPULimits), so that the probe asks only
// for shapes a run draws unless -ptxprop.max-elements raises it.
const probeElements = 1 << 16

// probeShapes is the spread of shapes Load evaluates a binding at: every
// row length up to 64 and the generators' edge grid (powers of two and
// their neighbours up to 16384), each with the edge row counts, up to
// probeElements elements. The per-head contracts take head_dim (even
// where the operation rotates pairs) and heads from the ranges their
// generators draw.
func probeShapes(contract string) []Shape {
	rows := []int{1, 2, 3, 4, 5, 7, 8, 31, 32, 33, 64, 1000, 2048, 2049, 4096}
	spread := func(upTo int) []int {
		var v []int
		for h := 1; h <= min(64, upTo); h++ {
			v = append(v, h)
		}
		for p := 128; p <= upTo; p *= 2 {
			v = append(v, p-1, p)
			if p+1 <= upTo {
				v = append(v, p+1)
			}
		}
		return v
	}
	var shapes []Shape
	add := func(s Shape) {
		if s.Rows*s.Hidden <= probeElements {
			shapes = append(shapes, s)
		}
	}
	switch {
	case pairedHeadDim(contract):
		for _, d := range spread(128) {
			for _, heads := range []int{1, 2, 3, 16} {
				for _, r := range rows {
					add(Shape{Rows: r, Hidden: heads * 2 * d, Heads: heads, HeadDim: 2 * d})
				}
			}
		}
	case perHead(contract):
		for _, d := range spread(512) {
			for _, heads := range []int{1, 2, 3, 32} {
				for _, r := range rows {
					add(Shape{Rows: r, Hidden: heads * d, Heads: heads, HeadDim: d})
				}
			}
		}
	default:
		for _, h := range append(spread(16384), 4097) {
			for _, r := range rows {
				add(Shape{Rows: r, Hidden: h})
			}
		}
	}
	return shapes
}

func (b *Binding) constraintList() string {
	var cs []string
	for _, c := range b.constraints {
		cs = append(cs, c.src)
	}
	return strings.Join(cs, ", ")
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
