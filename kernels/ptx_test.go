package kernels

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// ptxEntry is one .entry of a PTX module as the static checks need it.
type ptxEntry struct {
	params  []string // PTX types: u64, u32, f32, …
	maxntid int      // 0 when absent
	body    string   // from the opening brace to the matching closing one
}

var (
	reEntry   = regexp.MustCompile(`\.entry\s+(\w+)\s*\(`)
	reParam   = regexp.MustCompile(`^\s*\.param\s+\.(\w+)\s+(\w+)`)
	reMaxntid = regexp.MustCompile(`^\s*\.maxntid\s+(\d+),\s*(\d+),\s*(\d+)`)
)

// parseEntries splits a PTX module into its entries.
func parseEntries(ptx string) (map[string]ptxEntry, error) {
	out := map[string]ptxEntry{}
	for _, loc := range reEntry.FindAllStringSubmatchIndex(ptx, -1) {
		name := ptx[loc[2]:loc[3]]
		rest := ptx[loc[1]:]
		end := strings.Index(rest, ")")
		if end < 0 {
			return nil, fmt.Errorf("%s: unterminated parameter list", name)
		}
		var e ptxEntry
		for _, line := range strings.Split(rest[:end], "\n") {
			if m := reParam.FindStringSubmatch(line); m != nil {
				if want := fmt.Sprintf("%s_param_%d", name, len(e.params)); m[2] != want {
					return nil, fmt.Errorf("%s: parameter %q, want %q", name, m[2], want)
				}
				e.params = append(e.params, m[1])
			}
		}
		rest = rest[end+1:]
		open := strings.Index(rest, "{")
		if open < 0 {
			return nil, fmt.Errorf("%s: no body", name)
		}
		for _, line := range strings.Split(rest[:open], "\n") {
			if m := reMaxntid.FindStringSubmatch(line); m != nil {
				x, _ := strconv.Atoi(m[1])
				y, _ := strconv.Atoi(m[2])
				z, _ := strconv.Atoi(m[3])
				e.maxntid = x * y * z
			}
		}
		depth := 0
		for i := open; i < len(rest); i++ {
			switch rest[i] {
			case '{':
				depth++
			case '}':
				depth--
			}
			if depth == 0 {
				e.body = rest[open : i+1]
				break
			}
		}
		if e.body == "" {
			return nil, fmt.Errorf("%s: unbalanced braces", name)
		}
		out[name] = e
	}
	return out, nil
}

func entryOf(t *testing.T, k *Kernel) ptxEntry {
	t.Helper()
	es, err := parseEntries(string(k.PTX))
	if err != nil {
		t.Fatalf("%s: %v", k.PTXFile, err)
	}
	e, ok := es[k.Entry]
	if !ok {
		t.Fatalf("%s has no .entry %s", k.PTXFile, k.Entry)
	}
	return e
}

// edgeShapes are the shapes the static geometry checks run over.
func edgeShapes() []op.Shape {
	var out []op.Shape
	for _, h := range []int{1, 2, 31, 32, 33, 255, 256, 257, 896, 1536, 4096, 4097, 8192, 8193, 16384} {
		for _, r := range []int{1, 2, 7, 64, 1000, 2048, 4097, 16384, 100000} {
			out = append(out, op.Shape{Rows: r, Hidden: h})
			for _, hd := range []int{2, 64, 128} {
				if h%hd == 0 {
					out = append(out, op.Shape{Rows: r, Hidden: h, Heads: h / hd, HeadDim: hd})
				}
			}
		}
	}
	return out
}

func TestEmbeddedPTX(t *testing.T) {
	for _, k := range All() {
		if len(k.PTX) == 0 {
			t.Errorf("%s: no PTX (%s not embedded)", k.Name, k.PTXFile)
		}
		disk, err := os.ReadFile(k.PTXFile)
		if err != nil || !bytes.Equal(disk, k.PTX) {
			t.Errorf("%s: PTX differs from %s", k.Name, k.PTXFile)
		}
		if want := "ptx/" + strings.TrimSuffix(strings.TrimPrefix(k.Source, "src/"), ".cu") + ".ptx"; k.PTXFile != want {
			t.Errorf("%s: PTXFile %s, want %s (one PTX per source)", k.Name, k.PTXFile, want)
		}
		if k.Name != k.Entry {
			t.Errorf("%s: entry %s: the registry name is the entry name", k.Name, k.Entry)
		}
	}
	seen := map[string]bool{}
	for _, k := range All() {
		if seen[k.Name] {
			t.Errorf("%s registered twice", k.Name)
		}
		seen[k.Name] = true
	}
}

// lintPTX returns every way k's PTX contradicts its descriptor or the
// package's claims: the entry's parameter count and types, every parameter
// read (a parameter never loaded means a value baked in instead), no
// floating-point atomics in a Deterministic kernel, no approximate
// arithmetic beyond the documented exp2f, no .const tables or stray module
// data, no line info, a .maxntid that admits Geometry's block for every
// edge shape.
func lintPTX(k *Kernel) []string {
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	es, err := parseEntries(string(k.PTX))
	if err != nil {
		return []string{err.Error()}
	}
	e, ok := es[k.Entry]
	if !ok {
		return []string{"no .entry " + k.Entry}
	}
	if len(e.params) != len(k.Params) {
		fail("PTX entry has %d parameters, descriptor %d (%v)", len(e.params), len(k.Params), k)
	} else {
		for i, p := range k.Params {
			if e.params[i] != p.PTXType() {
				fail("parameter %d (%s) is .%s in the PTX, descriptor says .%s", i, p.Name, e.params[i], p.PTXType())
			}
			re := regexp.MustCompile(`ld\.param\.\w+\s+%\w+,\s*\[` + fmt.Sprintf("%s_param_%d", k.Entry, i) + `\]`)
			if !re.MatchString(e.body) {
				fail("parameter %d (%s) is never read (no ld.param): a shape or constant baked in instead?", i, p.Name)
			}
		}
	}
	if k.Deterministic {
		if m := reFloatAtomic.FindString(e.body); m != "" {
			fail("marked Deterministic but uses the floating-point atomic %q", m)
		}
	}
	if m := reApprox.FindString(e.body); m != "" {
		fail("uses %q: the documented op sequences use only correctly rounded div/sqrt/rcp and accurate sinf/cosf/log2f (exp2f's ex2.approx is the one documented exception)", m)
	}
	if reConst.MatchString(string(k.PTX)) {
		fail("declares .const data (a baked shape table?)")
	}
	for _, m := range reModuleData.FindAllStringSubmatch(string(k.PTX), -1) {
		if !allowedModuleData[m[2]] {
			fail("declares module data %s", m[2])
		}
	}
	if reLineInfo.MatchString(string(k.PTX)) {
		fail("carries line info (compile without -lineinfo/-G)")
	}
	if e.maxntid == 0 {
		fail("no .maxntid (__launch_bounds__)")
	}
	for _, s := range edgeShapes() {
		if (k.Params[len(k.Params)-1].Name == "theta" || strings.HasPrefix(k.Name, "per_head")) && s.Heads == 0 {
			continue
		}
		g := k.Geometry(s)
		if n := g.Block.Count(); n > e.maxntid || n > 1024 || n%32 != 0 {
			fail("%v: block %v of %d threads (maxntid %d, whole warps required)", s, g.Block, n, e.maxntid)
		}
		if g.Grid.Count() < 1 || g.Grid.Y > 65535 || g.Grid.Z > 65535 {
			fail("%v: grid %v", s, g.Grid)
		}
		if g.SharedBytes < 0 || g.SharedBytes > 48<<10-1024 {
			fail("%v: %d bytes of dynamic shared memory", s, g.SharedBytes)
		}
	}
	return bad
}

// allowedModuleData is the module-scope data a kernel may declare:
// accurate sinf/cosf's table of 2/π bits (rope.cu).
var allowedModuleData = map[string]bool{"__cudart_i2opi_f": true}

// TestStaticPTX runs lintPTX over every registered kernel.
func TestStaticPTX(t *testing.T) {
	for _, k := range All() {
		for _, msg := range lintPTX(k) {
			t.Errorf("%s: %s", k.Name, msg)
		}
	}
}

// TestLintCatchesMutants shows that the static checks see the defects they
// are meant to see, on PTX edited the way the upstream bugs looked.
func TestLintCatchesMutants(t *testing.T) {
	type mutant struct {
		name, want string
		k          *Kernel
		edit       func(string) string
	}
	muts := []mutant{
		{"float atomic", "floating-point atomic", kColSum, func(s string) string {
			return strings.Replace(s, "st.global.f32", "red.global.add.f32", 1)
		}},
		{"hidden baked in", "never read", kRMSNormFwd, func(s string) string {
			return regexp.MustCompile(`ld\.param\.u32\s+(%r\d+),\s*\[rmsnorm_fwd_param_4\];`).ReplaceAllString(s, "mov.u32 $1, 896;")
		}},
		{"parameter dropped", "parameters", kColSum, func(s string) string {
			return strings.Replace(s, ",\n\t.param .u32 colsum_f32_param_3", "", 1)
		}},
		{"approximate sqrt", "approx", kRMSNormFwd, func(s string) string {
			return strings.Replace(s, "sqrt.rn.f32", "sqrt.approx.f32", 1)
		}},
		{"const table", ".const", kRMSNormFwd, func(s string) string {
			return strings.Replace(s, ".address_size 64", ".address_size 64\n.const .align 4 .u32 shape[2] = {4096, 896};", 1)
		}},
	}
	for _, m := range muts {
		src := string(m.k.PTX)
		mut := m.edit(src)
		if mut == src {
			t.Fatalf("%s: the edit did not apply", m.name)
		}
		msgs := lintPTX(m.k.WithPTX([]byte(mut)))
		if !strings.Contains(strings.Join(msgs, "\n"), m.want) {
			t.Errorf("%s: lint said %q, want a complaint containing %q", m.name, msgs, m.want)
		}
	}
}

var reCParams = regexp.MustCompile(`(?s)__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(([^)]*)\)`)

// TestDescriptorsMatchSource checks parameter names, pointer-ness and
// const-ness against the CUDA C signature: a const pointer is an input, a
// non-const pointer an output.
func TestDescriptorsMatchSource(t *testing.T) {
	sigs := map[string][]string{}
	for _, k := range All() {
		if _, ok := sigs[k.Source]; ok {
			continue
		}
		src, err := os.ReadFile(k.Source)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		for _, m := range reCParams.FindAllStringSubmatch(string(src), -1) {
			sigs[k.Source+":"+m[1]] = strings.Split(m[2], ",")
		}
		sigs[k.Source] = nil
	}
	for _, k := range All() {
		cps, ok := sigs[k.Source+":"+k.Entry]
		if !ok {
			t.Errorf("%s: no __global__ %s in %s", k.Name, k.Entry, k.Source)
			continue
		}
		if len(cps) != len(k.Params) {
			t.Errorf("%s: %d parameters in %s, %d in the descriptor", k.Name, len(cps), k.Source, len(k.Params))
			continue
		}
		for i, cp := range cps {
			f := strings.Fields(strings.NewReplacer("*", " * ").Replace(cp))
			name := f[len(f)-1]
			ptr := strings.Contains(cp, "*")
			cnst := strings.HasPrefix(strings.TrimSpace(cp), "const ")
			p := k.Params[i]
			if name != p.Name {
				t.Errorf("%s: parameter %d is %q in the source, %q in the descriptor", k.Name, i, name, p.Name)
			}
			if ptr != p.IsPointer() {
				t.Errorf("%s: parameter %s pointer=%v in the source, %v in the descriptor", k.Name, p.Name, ptr, p.IsPointer())
			}
			if ptr && cnst != (p.Role == cudart.RoleIn) {
				t.Errorf("%s: parameter %s const=%v in the source but role %s", k.Name, p.Name, cnst, roleName(p.Role))
			}
			kinds := map[string]cudart.Kind{"float": cudart.F32, "unsigned": cudart.U32, "double": cudart.F64, "int": cudart.I32}
			for word, kind := range kinds {
				if strings.Contains(" "+cp+" ", " "+word+" ") || strings.Contains(cp, word+"*") {
					if kind != p.Kind {
						t.Errorf("%s: parameter %s is %s in the source, %v in the descriptor", k.Name, p.Name, word, p.Kind)
					}
				}
			}
		}
	}
}

var (
	reFloatAtomic = regexp.MustCompile(`\b(atom|red)(\.\w+)*\.(f16|f16x2|bf16|bf16x2|f32|f64)\b`)
	reConst       = regexp.MustCompile(`(?m)^\s*\.const\b|\.const\s+\.`)
	reModuleData  = regexp.MustCompile(`(?m)^\.(global|const)\s+.*?(\w+)\s*(\[|=|;)`)
	reLineInfo    = regexp.MustCompile(`(?m)^\s*\.(loc|file)\s`)
	reApprox      = regexp.MustCompile(`\b(sin|cos|lg2|rsqrt|sqrt|rcp|div|tanh)\.(approx|full)\b`)
)

// TestOnePTXPerFamily: descriptors of one source share one PTX text, so a
// shape can never select a different (specialised) module.
func TestOnePTXPerFamily(t *testing.T) {
	bySrc := map[string][]byte{}
	for _, k := range All() {
		if p, ok := bySrc[k.Source]; ok && !bytes.Equal(p, k.PTX) {
			t.Errorf("%s: PTX differs from the other entries of %s", k.Name, k.Source)
		}
		bySrc[k.Source] = k.PTX
	}
}

// TestBackwardTakesRMSNotEps pins the upstream double-eps bug: no RMSNorm
// backward entry takes eps or takes a square root (rms from the forward
// already includes eps), and the single-warp kernel's butterfly has all five
// levels whatever hidden is (the upstream loop was unrolled against a
// compile-time hidden_dim).
func TestBackwardTakesRMSNotEps(t *testing.T) {
	for _, k := range []*Kernel{kRMSNormBwdWarp32, kRMSNormBwdRowWarp, kRMSNormBwdChunk} {
		for _, p := range k.Params {
			if p.Name == "eps" {
				t.Errorf("%s takes eps; it must take rms (eps included) only", k.Name)
			}
		}
		if e := entryOf(t, k); strings.Contains(e.body, "sqrt.") {
			t.Errorf("%s computes a square root: rms must be used as given (it includes eps)", k.Name)
		}
	}
	e := entryOf(t, kRMSNormBwdWarp32)
	if n := strings.Count(e.body, "shfl.sync.bfly"); n != 5 {
		t.Errorf("rmsnorm_bwd_warp32: %d butterfly shuffles, want exactly 5 (offsets 16,8,4,2,1, independent of hidden)", n)
	}
	for _, off := range []string{"16", "8", "4", "2", "1"} {
		if !regexp.MustCompile(`mov\.u32\s+%r\d+,\s*` + off + `;`).MatchString(e.body) {
			t.Errorf("rmsnorm_bwd_warp32: no shuffle offset %s", off)
		}
	}
}

// TestChunkPartition checks the chunked backward's row partition: every
// row in exactly one block, no empty block, the chunk from rows only.
func TestChunkPartition(t *testing.T) {
	for rows := 1; rows < 70000; rows += 1 + rows/7 {
		c, b := ChunkRows(rows), ChunkBlocks(rows)
		if b*c < rows || (b-1)*c >= rows {
			t.Errorf("rows=%d: chunk %d × %d blocks does not partition the rows", rows, c, b)
		}
		if b > ChunkTargetBlocks {
			t.Errorf("rows=%d: %d blocks, more than %d", rows, b, ChunkTargetBlocks)
		}
	}
	for h := 1; h < 20000; h += 1 + h/5 {
		T := ChunkThreads(h)
		if T < 32 || T > BlockThreads || T%32 != 0 {
			t.Errorf("hidden=%d: %d threads", h, T)
		}
	}
}

// TestReductionsShape sanity-checks the reduction descriptions against the
// sources' documented bounds.
func TestReductionsShape(t *testing.T) {
	cases := []struct {
		got  op.Reduction
		want op.Reduction
	}{
		{kRMSNormFwd.Reductions(op.Shape{Rows: 1, Hidden: 896})[0], op.Reduction{Terms: 896, Serial: 4, Tree: 8}},
		{kRMSNormFwd.Reductions(op.Shape{Rows: 1, Hidden: 1536})[0], op.Reduction{Terms: 1536, Serial: 8, Tree: 8}},
		{kRMSNormFwd.Reductions(op.Shape{Rows: 1, Hidden: 257})[0], op.Reduction{Terms: 257, Serial: 2, Tree: 8}},
		{kColSum.Reductions(op.Shape{Rows: 1000, Hidden: 5})[0], op.Reduction{Terms: 1000, Serial: 125, Tree: 3}},
		{kPerHeadRMSNorm.Reductions(op.Shape{Rows: 1, Heads: 2, HeadDim: 128, Hidden: 256})[0], op.Reduction{Terms: 128, Serial: 4, Tree: 5}},
		{RMSNormBwdChunk.Reductions(op.Shape{Rows: 4096, Hidden: 896})[1], op.Reduction{Terms: 4096, Serial: 8 + 64, Tree: 3}},
		{RMSNormBwdWarp.Reductions(op.Shape{Rows: 4096, Hidden: 896})[1], op.Reduction{Terms: 4096, Serial: 512, Tree: 3}},
		{RMSNormBwdChunk.Reductions(op.Shape{Rows: 7, Hidden: 64})[0], op.Reduction{Terms: 64, Serial: 4, Tree: 5}},
	}
	for i, c := range cases {
		c.got.Name = ""
		if c.got != c.want {
			t.Errorf("case %d: %+v, want %+v", i, c.got, c.want)
		}
	}
}
