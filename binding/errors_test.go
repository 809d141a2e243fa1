package binding

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/oracle"
	"github.com/ptxprop/ptxprop/properties"
)

// base is a correct binding of rmsnorm_fwd_rms; each case below breaks one
// thing in it. The path puts it in testdata/, so the PTX path resolves.
const base = `ptxprop_binding: 1
contract: rmsnorm.forward
ptx: ../../kernels/ptx/rmsnorm_fwd.ptx
dtype: float32
constants: {threads: 256}
saved: rms_eps
launches:
  - entry: rmsnorm_fwd_rms
    grid: [rows, 1, 1]
    block: [threads, 1, 1]
    shared: 0
    params: [x, gamma, y, rms, rows, hidden, eps]
`

const basePath = "testdata/case.yaml"

func TestBaseBindingLoads(t *testing.T) {
	if _, err := Parse(basePath, []byte(base)); err != nil {
		t.Fatal(err)
	}
}

// TestErrorsBeforeLaunch checks each error a binding file can have: it is
// found at load time (nothing is launched: no device exists here), wraps
// ErrInvalid, and says what and where.
func TestErrorsBeforeLaunch(t *testing.T) {
	cases := []errorCase{
		{"missing ptx file", "ptx: ../../kernels/ptx/rmsnorm_fwd.ptx", "ptx: nope.ptx",
			[]string{"testdata/case.yaml:3: ptx: cannot read testdata/nope.ptx: no such file or directory"}},
		{"no ptx at all", "ptx: ../../kernels/ptx/rmsnorm_fwd.ptx\n", "",
			[]string{"testdata/case.yaml:7: rmsnorm_fwd_rms: no PTX file: set ptx at the top of the file or in this launch"}},
		{"missing entry", "entry: rmsnorm_fwd_rms", "entry: rmsnorm_fwd_rmz",
			[]string{`testdata/case.yaml:8: entry "rmsnorm_fwd_rmz" not in ../../kernels/ptx/rmsnorm_fwd.ptx (its entries: rmsnorm_fwd, rmsnorm_fwd_rms)`}},
		{"too few params", "params: [x, gamma, y, rms, rows, hidden, eps]", "params: [x, gamma, y, rms, rows, hidden]",
			[]string{"testdata/case.yaml:8: rmsnorm_fwd_rms: 6 params bound, but the .entry (../../kernels/ptx/rmsnorm_fwd.ptx:753) declares 7: rmsnorm_fwd_rms(.u64 rmsnorm_fwd_rms_param_0,"}},
		{"float into an integer", "[x, gamma, y, rms, rows, hidden, eps]", "[x, gamma, y, rms, rows, eps, hidden]",
			[]string{"testdata/case.yaml:12: rmsnorm_fwd_rms param 5 (rmsnorm_fwd_rms_param_5 .u32): eps is a float, but the parameter is .u32",
				"testdata/case.yaml:12: rmsnorm_fwd_rms param 6 (rmsnorm_fwd_rms_param_6 .f32): hidden is an integer, but the parameter is .f32"}},
		{"tensor into a 32-bit param", "[x, gamma, y, rms, rows, hidden, eps]", "[x, gamma, y, rows, rms, hidden, eps]",
			[]string{"rmsnorm_fwd_rms param 4 (rmsnorm_fwd_rms_param_4 .u32): tensor rms is a pointer, but the parameter is .u32 (want .u64 or .b64)"}},
		{"role bound twice", "[x, gamma, y,", "[x, x, y,",
			[]string{`testdata/case.yaml:12: rmsnorm_fwd_rms: role "x" bound twice, to params 0 and 1`,
				`testdata/case.yaml:2: role "gamma" of rmsnorm.forward is not bound to any launch parameter`}},
		{"unknown role", "[x, gamma,", "[x, gama,",
			[]string{`rmsnorm_fwd_rms param 1 (rmsnorm_fwd_rms_param_1 .u64): "gama" is not a role of rmsnorm.forward (tensors: gamma, rms, rstd, x, y; scalars: rows, hidden, eps;`}},
		{"saved statistic of another form", "saved: rms_eps", "saved: rstd",
			[]string{`role "rms" is not part of the saved form rstd (rstd)`, `testdata/case.yaml:6: role "rstd" of the saved form rstd is not bound to any launch parameter`}},
		{"saved form of another contract", "saved: rms_eps", "saved: mean_rstd",
			[]string{`testdata/case.yaml:6: saved: "mean_rstd" is not a form of rmsnorm.forward's statistics (rms_eps, rstd)`}},
		{"block too large", "block: [threads, 1, 1]", "block: [threads * 8, 1, 1]",
			[]string{"testdata/case.yaml:10: rmsnorm_fwd_rms at rows=1 hidden=1: impossible launch: block = (2048, 1, 1) is 2048 threads, more than 1024"}},
		{"zero grid", "grid: [rows, 1, 1]", "grid: [rows - 1, 1, 1]",
			[]string{"rmsnorm_fwd_rms at rows=1 hidden=1: impossible launch: grid.x = 0, want at least 1"}},
		{"shared too large", "shared: 0", "shared: 300 * 1024",
			[]string{"impossible launch: 307200 bytes of dynamic shared memory plus 32 static are more than 232448"}},
		{"expression does not parse", "block: [threads, 1, 1]", `block: ["threads *", 1, 1]`,
			[]string{"testdata/case.yaml:10: rmsnorm_fwd_rms block[0]: expression \"threads *\": column 10: unexpected end of expression"}},
		{"bad operator", "grid: [rows, 1, 1]", `grid: ["rows +* 2", 1, 1]`,
			[]string{`expression "rows +* 2": column 7: unexpected "*"`}},
		{"comma split by YAML", "grid: [rows, 1, 1]", `grid: [cdiv(rows, 2), 1]`,
			[]string{`expression "cdiv(rows": column 10: want ',' or ')' in the arguments of cdiv`, `quote an expression that has one`}},
		{"unknown constant", "block: [threads, 1, 1]", "block: [num_warps * 32, 1, 1]",
			[]string{`testdata/case.yaml:10: rmsnorm_fwd_rms block[0] "num_warps * 32": unknown name "num_warps" (known: rows, hidden, heads, head_dim, threads)`}},
		{"unknown function", "grid: [rows, 1, 1]", `grid: ["ceil(rows)", 1, 1]`,
			[]string{`column 1: unknown function "ceil" (cdiv, min, max, if)`}},
		{"dtype not handled", "dtype: float32", "dtype: float8_e4m3",
			[]string{`testdata/case.yaml:4: dtype "float8_e4m3" is not handled: ptxprop binds float32, bfloat16 and float16 storage (compute in float32)`}},
		{"unknown field", "    shared: 0\n", "    shared: 0\n    gird: [1]\n",
			[]string{"testdata/case.yaml:8: /launches/0: additional properties 'gird' not allowed"}},
		{"wrong version", "ptxprop_binding: 1", "ptxprop_binding: 2",
			[]string{"testdata/case.yaml:1: /ptxprop_binding: value must be 1"}},
		{"unknown contract", "contract: rmsnorm.forward", "contract: softmax",
			[]string{"testdata/case.yaml:2: /contract: value must be one of"}},
		{"yaml syntax", "params: [x,", "params: [[x,",
			[]string{"testdata/case.yaml:11: did not find expected ',' or ']'"}},
		{"constraint does not parse", "saved: rms_eps", "saved: rms_eps\nconstraints: [\"hidden % 8\"]",
			[]string{`testdata/case.yaml:7: constraint: expression "hidden % 8": column 11: want a comparison`}},
		{"constraints no shape meets", "saved: rms_eps", "saved: rms_eps\nconstraints: [\"hidden > 100000\"]",
			[]string{`testdata/case.yaml:7: no shape meets the constraints hidden > 100000: searched rows in {1, 2,`, `hidden in {`, `held fixed: heads = head_dim = 0`}},
		{"alias of a non-input", "saved: rms_eps", "saved: rms_eps\nalias: {y: rms}",
			[]string{`testdata/case.yaml:7: alias: "rms" is not an input tensor of rmsnorm.forward`}},
		{"block over .maxntid", "block: [256]", "block: [512]",
			[]string{"testdata/case.yaml:8: rms_norm_f32 at rows=1 hidden=1: impossible launch: block = (512, 1, 1) is 512 threads, but the entry allows .maxntid 256, 1, 1"}},
		{"block not .reqntid", "block: [128]", "block: [256]",
			[]string{"testdata/case.yaml:8: rmsnorm_fwd_kernel at rows=1 hidden=1: impossible launch: block = (256, 1, 1), but the entry requires .reqntid 128"}},
		{"row stride without strides", "saved: rms_eps", "saved: rms_eps\nrow_stride: hidden + 4",
			[]string{"testdata/case.yaml:7: row_stride: no launch passes a row tensor's stride ({stride: T}), so every tensor must be contiguous"}},
		{"row stride below hidden", "saved: rstd", "saved: rstd\nrow_stride: hidden - 1",
			[]string{"testdata/case.yaml:5: row_stride = 0 at rows=1 hidden=1, want hidden..2^31-1"}},
		{"scratch not declared", "[x, gamma, y, rms, rows, hidden, eps]", "[x, gamma, y, {scratch: tmp}, rows, hidden, eps]",
			[]string{`rmsnorm_fwd_rms param 3 (rmsnorm_fwd_rms_param_3 .u64): scratch "tmp" is not declared`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(c.base(), c.old, c.new, 1)
			if src == c.base() {
				t.Fatalf("the case changes nothing: %q not in the base", c.old)
			}
			_, err := Parse(basePath, []byte(src))
			if err == nil {
				t.Fatalf("loaded; want an error containing %q", c.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

type errorCase struct {
	name, old, new string
	want           []string
}

// sources are the bindings some cases break instead of base.
var sources = map[string]string{"block over .maxntid": nvcc13, "block not .reqntid": triton, "row stride below hidden": nvcc13}

func (c errorCase) base() string {
	if s, ok := sources[c.name]; ok {
		return s
	}
	return base
}

// nvcc13 is the foreign nvcc 13 binding (.maxntid 256, 1, 1), moved to
// testdata/case.yaml.
const nvcc13 = `ptxprop_binding: 1
contract: rmsnorm.forward
ptx: foreign/nvcc13/rms_norm.ptx
saved: rstd
launches:
  - entry: rms_norm_f32
    grid: [rows]
    block: [256]
    params: [y, rstd, x, gamma, eps, hidden, {stride: x}, {stride: y}]
`

// triton is the Triton 3.6 forward (.reqntid 128).
const triton = `ptxprop_binding: 1
contract: rmsnorm.forward
ptx: foreign/triton/rmsnorm_fwd.ptx
saved: rstd
launches:
  - entry: rmsnorm_fwd_kernel
    grid: [rows]
    block: [128]
    shared: 2048
    params: [x, y, gamma, rstd, {stride: x}, {stride: y}, hidden, eps, {ignore: 0}, {ignore: 0}]
`

func TestMissingBindingFile(t *testing.T) {
	_, err := Load("testdata/nope.yaml")
	want := "testdata/nope.yaml: cannot read the binding file: no such file or directory"
	if err == nil || err.Error() != want || !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v, want %q wrapping ErrInvalid", err, want)
	}
}

// TestConstraintRefusesShape: a shape outside the constraints is refused
// before any launch, naming the constraint and its line.
func TestConstraintRefusesShape(t *testing.T) {
	src := strings.Replace(base, "saved: rms_eps", "saved: rms_eps\nconstraints: [\"hidden % 8 == 0\", \"hidden <= 1024\"]", 1)
	b, err := Parse(basePath, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	err = b.AcceptShape(Shape{Rows: 3, Hidden: 12})
	want := `testdata/case.yaml:7: rows=3 hidden=12 is outside the constraint "hidden % 8 == 0"`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	if err := b.AcceptShape(Shape{Rows: 3, Hidden: 16}); err != nil {
		t.Fatal(err)
	}
	if r, h := b.MaxShape(); r != 0 || h != 1024 {
		t.Fatalf("MaxShape = %d, %d; want 0, 1024", r, h)
	}
	// Bounds written with constants count; bounds that depend on the shape
	// do not.
	src2 := strings.Replace(base, "saved: rms_eps", "saved: rms_eps\nconstraints: [\"hidden <= threads * 4\", \"rows < 100\", \"rows <= hidden\"]", 1)
	b2, err := Parse(basePath, []byte(src2))
	if err != nil {
		t.Fatal(err)
	}
	if r, h := b2.MaxShape(); r != 99 || h != 1024 {
		t.Fatalf("MaxShape = %d, %d; want 99, 1024", r, h)
	}
	if m := b.HiddenMultiple(); m != 8 {
		t.Fatalf("HiddenMultiple = %d, want 8", m)
	}
	src3 := strings.Replace(base, "saved: rms_eps", "saved: rms_eps\nconstraints: [\"hidden % 8 == 0\", \"hidden % (threads / 256 * 6) == 0\", \"rows % 3 == 0\"]", 1)
	b3, err := Parse(basePath, []byte(src3))
	if err != nil {
		t.Fatal(err)
	}
	if m := b3.HiddenMultiple(); m != 24 {
		t.Fatalf("HiddenMultiple = %d, want lcm(8, 6) = 24", m)
	}
	if c := b3.narrow(stubTB{}).Config(); c.HiddenMultiple != 24 {
		t.Fatalf("narrowed HiddenMultiple %d", c.HiddenMultiple)
	}
	n := b2.narrow(stubTB{}).Config()
	if n.MaxRows != 99 || n.MaxHidden != 1024 {
		t.Fatalf("narrowed config: rows %d hidden %d", n.MaxRows, n.MaxHidden)
	}
	if _, err := b.plan(Shape{Rows: 3, Hidden: 2048}); err == nil || !strings.Contains(err.Error(), `outside the constraint "hidden <= 1024"`) {
		t.Fatalf("plan at hidden=2048: %v", err)
	}
}

// TestJSONBinding: JSON is YAML, so a binding may be written in JSON.
func TestJSONBinding(t *testing.T) {
	src := `{"ptxprop_binding": 1, "contract": "rmsnorm.forward", "ptx": "../../kernels/ptx/rmsnorm_fwd.ptx",
	  "launches": [{"entry": "rmsnorm_fwd", "grid": ["rows"], "block": [256],
	    "params": ["x", "gamma", "y", "rows", "hidden", "eps"]}]}`
	b, err := Parse("testdata/case.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if b.Contract != "rmsnorm.forward" || b.Saved != "" || len(b.launches) != 1 {
		t.Fatalf("loaded %+v", b)
	}
}

// stubTB is a properties.TB with an empty Config, for narrow.
type stubTB struct{ properties.TB }

func (stubTB) Config() *properties.Config { return &properties.Config{MaxHidden: 4096} }

// TestPadUnpad: a padded tensor's rows land stride apart with NaN between
// them, come back as they were, and a write into a gap is named.
func TestPadUnpad(t *testing.T) {
	tt := &deviceTensor{storage: oracle.StorageFloat32, rows: 2, cols: 3, stride: 5, n: 10}
	p := tt.pad([]float32{1, 2, 3, 4, 5, 6})
	if len(p) != 10 || p[0] != 1 || p[5] != 4 || p[7] != 6 || !math.IsNaN(float64(p[3])) || !math.IsNaN(float64(p[9])) {
		t.Fatalf("pad: %v", p)
	}
	bits := func(i int) uint32 { return math.Float32bits(p[i]) }
	v, err := tt.unpad(p, bits, "y")
	if err != nil || len(v) != 6 || v[3] != 4 || v[5] != 6 {
		t.Fatalf("unpad: %v, %v", v, err)
	}
	p[8] = 0
	if _, err := tt.unpad(p, bits, "y"); err == nil || err.Error() != "y: the kernel wrote between rows: element 0 of the gap after row 1 (row stride 5, hidden 3)" {
		t.Fatalf("a write into the gap: %v", err)
	}
}
