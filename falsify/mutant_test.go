package falsify

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/ptx"
	"github.com/ptxprop/ptxprop/reports"
)

// TestNamesRoundTrip: every mutant's String parses back to an equal
// mutant — every real site of every kernel, every named mutant, and 10,000
// generated generic names (sites or not: the syntax round-trips).
func TestNamesRoundTrip(t *testing.T) {
	all, per, err := GenericMutants()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 1000 {
		t.Errorf("only %d generic sites", len(all))
	}
	seen := map[string]bool{}
	for _, g := range all {
		s := g.String()
		if seen[s] {
			t.Errorf("duplicate mutant name %s", s)
		}
		seen[s] = true
		m, err := ParseMutant(s)
		if err != nil {
			t.Fatalf("ParseMutant(%q): %v", s, err)
		}
		if m != Mutant(g) {
			t.Fatalf("ParseMutant(%q) = %#v, want %#v", s, m, g)
		}
	}
	t.Logf("%d generic sites: %v", len(all), per)
	for _, n := range NamedMutants() {
		m, err := ParseMutant(n.String())
		if err != nil {
			t.Fatalf("ParseMutant(%q): %v", n.Name, err)
		}
		if m.String() != n.Name || m.Kind() != reports.MutantNamed {
			t.Errorf("ParseMutant(%q) = %v (%v)", n.Name, m, m.Kind())
		}
		if seen[n.Name] {
			t.Errorf("named mutant %s collides with a generic name", n.Name)
		}
		seen[n.Name] = true
	}
	var names []string
	for _, k := range kernels.All() {
		names = append(names, k.Name)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		g := Generic{Kernel: names[r.IntN(len(names))], Op: Ops()[r.IntN(len(Ops()))], PC: r.IntN(5000), Arg: -1}
		if g.Op == ImmInc || g.Op == ImmDec {
			g.Arg = r.IntN(6)
		}
		h, err := parseGeneric(g.String())
		if err != nil || h != g {
			t.Fatalf("parseGeneric(%q) = %v, %v; want %v", g.String(), h, err, g)
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		g := Generic{Kernel: rapid.SampledFrom(names).Draw(rt, "kernel"), Op: rapid.SampledFrom(Ops()).Draw(rt, "op"),
			PC: rapid.IntRange(0, 1<<20).Draw(rt, "pc"), Arg: -1}
		if g.Op == ImmInc || g.Op == ImmDec {
			g.Arg = rapid.IntRange(0, 9).Draw(rt, "arg")
		}
		if h, err := parseGeneric(g.String()); err != nil || h != g {
			rt.Fatalf("parseGeneric(%q) = %v, %v", g.String(), h, err)
		}
	})
}

// TestNamesRejected: malformed names do not parse.
func TestNamesRejected(t *testing.T) {
	for _, s := range []string{"", "nosuch-mutant", "rmsnorm_fwd", "rmsnorm_fwd/arith-swap", "rmsnorm_fwd/arith-swap@37",
		"rmsnorm_fwd/arith-swap@pc", "rmsnorm_fwd/arith-swap@pc-1", "rmsnorm_fwd/arith-swap@pc07", "rmsnorm_fwd/nosuch@pc1",
		"nosuch_kernel/arith-swap@pc1", "rmsnorm_fwd/imm-inc@pc3", "rmsnorm_fwd/arith-swap@pc3.1", "rmsnorm_fwd/imm-inc@pc3.01",
		"rmsnorm_fwd/arith-swap@pc3 ", "/arith-swap@pc3"} {
		if m, err := ParseMutant(s); err == nil {
			t.Errorf("ParseMutant(%q) = %v, want an error", s, m)
		}
	}
}

// TestSitesApply: generic mutants apply, print PTX that parses back, and
// change the entry they name and nothing else — a sample of 8 per kernel
// and operator, every one with -ptxprop.mutants=full.
func TestSitesApply(t *testing.T) {
	for _, k := range kernels.All() {
		all, err := Sites(k)
		if err != nil {
			t.Fatal(err)
		}
		sites := all
		if !opts.Full {
			sites = Sample(all, 8, opts.Seed)
		}
		orig, err := ptx.Parse(k.PTX)
		if err != nil {
			t.Fatal(err)
		}
		ops := map[Op]int{}
		for _, g := range sites {
			ops[g.Op]++
			text, err := g.Apply(k)
			if err != nil {
				t.Fatalf("%v: %v", g, err)
			}
			m, err := ptx.Parse(text)
			if err != nil {
				t.Fatalf("%v: the mutated PTX does not parse: %v", g, err)
			}
			if ptx.Equal(m, orig) {
				t.Fatalf("%v: the mutant is the original program", g)
			}
			for _, e := range orig.Entries() {
				if e.Name == k.Entry {
					continue
				}
				if !bytes.Equal(ptx.Print(&ptx.Module{Items: []ptx.Item{e}}), ptx.Print(&ptx.Module{Items: []ptx.Item{m.Function(e.Name)}})) {
					t.Fatalf("%v changed entry %s too", g, e.Name)
				}
			}
		}
		t.Logf("%-24s %4d sites, %d applied: %v", k.Name, len(all), len(sites), ops)
		if _, err := (Generic{Kernel: k.Name, Op: ArithSwap, PC: 1 << 20, Arg: -1}).Apply(k); err == nil {
			t.Errorf("%s: a site past the end applies", k.Name)
		}
	}
}

// TestOperators checks each operator on a small hand-written entry.
func TestOperators(t *testing.T) {
	src := `.version 7.8
.target sm_70
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{
	.reg .pred %p<3>;
	.reg .f32 %f<5>;
	.reg .b32 %r<9>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [k_param_0];
	ld.param.u32 %r1, [k_param_1];
	mov.u32 %r2, %tid.x;
	setp.lt.u32 %p1, %r2, %r1;
	@%p1 bra $L__done;
	add.rn.f32 %f1, %f2, 0f3F800000;
	mul.lo.s32 %r3, %r2, 4;
	mov.u32 %r4, 16;
	shfl.sync.bfly.b32 %r5|%p2, %r3, %r4, 31, -1;
	sub.s32 %r6, %r5, %r2;
	st.global.f32 [%rd1], %f1;
	bar.sync 0;
$L__done:
	ret;
}
`
	k := &kernels.Kernel{Name: "k", Entry: "k", PTX: []byte(src)}
	want := map[string]string{
		"setp.lt.u32 %p1, %r2, %r1;":         "cmp-flip@pc3 → setp.le.u32 %p1, %r2, %r1;",
		"@%p1 bra $L__done;":                 "pred-neg@pc4 → @!%p1 bra $L__done;",
		"add.rn.f32 %f1, %f2, 0f3F800000;":   "arith-swap@pc5 → sub.rn.f32 %f1, %f2, 0f3F800000;",
		"mul.lo.s32 %r3, %r2, 4;":            "arith-swap@pc6 → div.s32 %r3, %r2, 4;",
		"shfl.sync.bfly.b32 %r5|%p2, %r3, 8": "shfl-offset@pc8 → shfl.sync.bfly.b32 %r5|%p2, %r3, 8, 31, -1;",
		"shfl.sync.down.b32":                 "shfl-mode@pc8 → shfl.sync.down.b32 %r5|%p2, %r3, %r4, 31, -1;",
		"sub.s32 %r6, %r2, %r5;":             "swap-args@pc9 → sub.s32 %r6, %r2, %r5;",
		"imm-inc float":                      "imm-inc@pc5.2 → add.rn.f32 %f1, %f2, 0f3F802000;",
		"imm-dec int":                        "imm-dec@pc6.2 → mul.lo.s32 %r3, %r2, 3;",
	}
	sites, err := Sites(k)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, g := range sites {
		text, err := g.Apply(k)
		if err != nil {
			t.Fatalf("%v: %v", g, err)
		}
		m, err := ptx.Parse(text)
		if err != nil {
			t.Fatalf("%v: %v", g, err)
		}
		ins := instructions(m.Function("k"))
		name := strings.TrimPrefix(g.String(), "k/")
		switch g.Op {
		case StoreDel, BarDel:
			if len(ins) != len(instructions(mustEntry(t, k)))-1 {
				t.Errorf("%s deleted nothing", name)
			}
			got[name] = true
			continue
		}
		got[name+" → "+strings.Join(strings.Fields(ins[g.PC].in.String()), " ")] = true
	}
	for what, w := range want {
		if !got[w] {
			t.Errorf("%s: no mutant %q among %v", what, w, keys(got))
		}
	}
	for _, w := range []string{"store-del@pc10", "bar-del@pc11"} {
		if !got[w] {
			t.Errorf("no mutant %s", w)
		}
	}
	for name := range got {
		if strings.HasPrefix(name, "swap-args@pc5") || strings.HasPrefix(name, "imm-inc@pc4") {
			t.Errorf("unexpected mutant %s", name)
		}
	}
}

func mustEntry(t *testing.T, k *kernels.Kernel) *ptx.Function {
	_, fn, err := parseEntry(k)
	if err != nil {
		t.Fatal(err)
	}
	return fn
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestSample: the sample is reproducible, stratified and a subset.
func TestSample(t *testing.T) {
	all, _, err := GenericMutants()
	if err != nil {
		t.Fatal(err)
	}
	a, b := Sample(all, 2, 7), Sample(all, 2, 7)
	if !slices.Equal(a, b) {
		t.Fatal("Sample is not reproducible")
	}
	if c := Sample(all, 2, 8); slices.Equal(a, c) {
		t.Error("Sample ignores its seed")
	}
	count := map[string]int{}
	for _, g := range a {
		if !slices.Contains(all, g) {
			t.Fatalf("%v is not a site", g)
		}
		count[g.Kernel+"/"+g.Op.String()]++
	}
	for k, n := range count {
		if n > 2 {
			t.Errorf("%s sampled %d times", k, n)
		}
	}
	if len(Sample(all, 0, 1)) != len(all) {
		t.Error("Sample(all, 0) is not everything")
	}
}

// TestEmbeddedPTX: every mutant patch has its committed PTX and no PTX is
// without its patch, the MANIFEST written by `make falsify-ptx` matches
// them and lists the kernel source each patch applies to, and every named
// mutant builds.
func TestEmbeddedPTX(t *testing.T) {
	f, err := os.Open("ptx/MANIFEST")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "nvcc:") || strings.HasPrefix(line, "flags:") {
			if strings.HasPrefix(line, "flags:") && strings.TrimSpace(strings.TrimPrefix(line, "flags:")) != "-ptx -arch=compute_70 -fmad=false -O3" {
				t.Errorf("MANIFEST %s: not the kernels' flags", line)
			}
			continue
		}
		sum, path, ok := strings.Cut(line, "  ")
		if !ok {
			t.Errorf("MANIFEST: bad line %q", line)
			continue
		}
		listed[path] = true
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("MANIFEST lists %s: %v", path, err)
			continue
		}
		h := sha256.Sum256(data)
		if hex.EncodeToString(h[:]) == sum {
			continue
		}
		if strings.HasPrefix(path, "../") {
			// A kernel source or header changed since the mutants were
			// compiled: they are still valid variants, but no longer the
			// shipped kernel plus the bug.
			t.Logf("note: %s changed since `make falsify-ptx`; rerun it to rebuild the mutants on it", path)
		} else {
			t.Errorf("%s does not match MANIFEST: run `make falsify-ptx`", path)
		}
	}
	patches, _ := filepath.Glob("src/*.patch")
	if len(patches) == 0 {
		t.Fatal("no src/*.patch")
	}
	for _, src := range patches {
		name := strings.TrimSuffix(filepath.Base(src), ".patch")
		p := "ptx/" + name + ".ptx"
		if !listed[src] || !listed[p] {
			t.Errorf("%s or %s missing from MANIFEST: run `make falsify-ptx`", src, p)
		}
		if mutantPTX(name) == nil {
			t.Errorf("%s is not embedded", p)
		}
		base, err := patchBase(src)
		if err != nil {
			t.Error(err)
		} else if !listed["../"+base] {
			t.Errorf("%s: its kernel source %s is missing from MANIFEST: run `make falsify-ptx`", src, base)
		}
	}
	ptxs, _ := filepath.Glob("ptx/*.ptx")
	for _, p := range ptxs {
		if src := "src/" + strings.TrimSuffix(filepath.Base(p), ".ptx") + ".patch"; !slices.Contains(patches, src) {
			t.Errorf("%s has no %s: delete it or restore the patch", p, src)
		}
	}
	for _, n := range NamedMutants() {
		tg, err := n.build()
		if err != nil {
			t.Errorf("%s does not build: %v", n.Name, err)
			continue
		}
		if tg.close != nil {
			tg.close()
		}
		if len(tg.probes) == 0 || !slices.Contains(n.Killers, tg.probes[0].id) {
			t.Errorf("%s: its first probe is not an expected killer", n.Name)
		}
		for _, id := range n.Killers {
			if _, ok := properties.Lookup(id); !ok {
				t.Errorf("%s: unknown prediction %s", n.Name, id)
			}
		}
	}
}

// patchBase returns the kernel source a mutant patch applies to, the one
// path of its "+++ b/kernels/src/<family>.cu" line (as the Makefile reads it).
func patchBase(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var bases []string
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "+++ b/"); ok && strings.HasPrefix(rest, "kernels/src/") {
			bases = append(bases, strings.Fields(rest)[0])
		}
	}
	if len(bases) != 1 {
		return "", fmt.Errorf("%s: %d '+++ b/kernels/src/…' lines, want 1", path, len(bases))
	}
	return bases[0], nil
}

// TestRecord: results go into a valid report; a generic run replaces the
// generic mutants of an older sample and keeps the named ones; the
// predictions that killed nothing are flagged unproven.
func TestRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	info := cudart.Info{Backend: "emu", Name: "test"}
	named := []Result{
		{Mutant: "eps-hardcoded", Kind: reports.MutantNamed, Kernel: "rmsnorm_fwd_rms", Description: "d", Status: reports.MutantKilled,
			KilledBy: properties.EpsParity, Contract: "EpsParityContract", Checks: 3, Failure: "rms: element 0 …",
			Counterexample: []string{"hidden: 1", "eps: 1e-06"}, Repro: "go test ./falsify …"},
	}
	old := []Result{{Mutant: "rmsnorm_fwd/arith-swap@pc37", Kind: reports.MutantGeneric, Kernel: "rmsnorm_fwd", Status: reports.MutantSurvived, Reason: "x"}}
	generic := []Result{
		{Mutant: "rmsnorm_fwd_rms/arith-swap@pc36", Kind: reports.MutantGeneric, Kernel: "rmsnorm_fwd_rms", Status: reports.MutantKilled,
			KilledBy: properties.RMSFwd, Checks: 2, Failure: "rms: …"},
		{Mutant: "rmsnorm_fwd_rms/bar-del@pc130", Kind: reports.MutantGeneric, Kernel: "rmsnorm_fwd_rms", Status: reports.MutantEquivalent, Reason: "equivalent: …"},
	}
	for _, step := range []struct {
		rs      []Result
		replace reports.MutantKind
	}{{named, ""}, {old, reports.MutantGeneric}, {generic, reports.MutantGeneric}} {
		if _, err := Record(path, step.rs, step.replace, []cudart.Info{info}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	r, err := reports.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range r.Mutants {
		names = append(names, m.Name)
	}
	if want := []string{"eps-hardcoded", "rmsnorm_fwd_rms/arith-swap@pc36", "rmsnorm_fwd_rms/bar-del@pc130"}; !slices.Equal(names, want) {
		t.Errorf("mutants %v, want %v", names, want)
	}
	if s := r.MutationScore(""); s.Killed != 2 || s.Counted() != 2 {
		t.Errorf("mutation score %s, want 2/2", s)
	}
	m := r.Mutant("rmsnorm_fwd_rms/arith-swap@pc36")
	if m.Operator != "arith-swap" || !strings.HasPrefix(m.Site, "kernels/ptx/rmsnorm_fwd.ptx:") || m.ChecksToKill != 2 {
		t.Errorf("generic mutant recorded as %+v", m)
	}
	if c := r.Mutant("eps-hardcoded").Counterexample; c == nil || len(c.Draws) != 2 || c.Draws[1].Label != "eps" {
		t.Errorf("counterexample %+v", c)
	}
	for _, id := range []string{properties.EpsParity, properties.RMSFwd} {
		if p := r.Prediction(id); p == nil || p.HasFlag(reports.FlagUnproven) {
			t.Errorf("%s: %+v, want present and not unproven", id, p)
		}
	}
	if p := r.Prediction(properties.LNForward); p == nil || !p.HasFlag(reports.FlagUnproven) {
		t.Errorf("%s should be flagged unproven: %+v", properties.LNForward, p)
	}
}

// TestEveryPredictionHasAMutant: every registered prediction that runs on a
// device is the first expected killer of some named mutant, so that
// TestNamedMutants shows it can fail (MarkUnproven then flags none of them).
func TestEveryPredictionHasAMutant(t *testing.T) {
	first := map[string][]string{}
	for _, n := range NamedMutants() {
		first[n.Killers[0]] = append(first[n.Killers[0]], n.Name)
	}
	for _, p := range properties.All() {
		if !p.Device || strings.HasPrefix(p.ID, "TEST-") {
			continue
		}
		if len(first[p.ID]) == 0 {
			t.Errorf("no named mutant is expected to be killed first by %s (%s)", p.ID, p.Title)
		} else {
			t.Logf("%-40s %s", p.ID, strings.Join(first[p.ID], ", "))
		}
	}
}

// Spread picks n at even strides, the first and the last included, in
// order; n ≤ 0 or n ≥ len returns a copy of all.
func TestSpread(t *testing.T) {
	gs := make([]Generic, 10)
	for i := range gs {
		gs[i] = Generic{Kernel: "k", PC: i}
	}
	pcs := func(gs []Generic) []int {
		var out []int
		for _, g := range gs {
			out = append(out, g.PC)
		}
		return out
	}
	for _, c := range []struct {
		n    int
		want []int
	}{{4, []int{0, 3, 6, 9}}, {1, []int{0}}, {2, []int{0, 9}}, {0, pcs(gs)}, {10, pcs(gs)}, {11, pcs(gs)}} {
		if got := pcs(Spread(gs, c.n)); !slices.Equal(got, c.want) {
			t.Errorf("Spread(10, %d) = %v, want %v", c.n, got, c.want)
		}
	}
}
