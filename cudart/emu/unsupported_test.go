package emu

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
)

// TestUnsupportedNamedAtLoad checks that what the emulator does not
// implement is refused when the module is loaded, naming the instruction,
// modifier, type or directive and its PTX line, and that the hints it may
// ignore load.
func TestUnsupportedNamedAtLoad(t *testing.T) {
	const body = `.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0)
%s
{
	.reg .pred %%p<2>;
	.reg .b32 %%r<8>;
	.reg .b64 %%rd<8>;
	.reg .f32 %%f<8>;
	.shared .align 8 .b64 bar0;
	mov.u32 %%r1, %%tid.x;
	%s
	ret;
}
`
	const line = 13 // of the instruction
	for _, c := range []struct{ dir, inst, want string }{
		{"", "mbarrier.init.shared::cta.b64 [bar0], 1;", "PTX line 13: unsupported instruction mbarrier.init.shared::cta.b64"},
		{"", "wgmma.fence.sync.aligned;", "PTX line 13: unsupported instruction wgmma.fence.sync.aligned"},
		{"", "mapa.shared::cluster.u32 %r2, %r1, 0;", "PTX line 13: unsupported instruction mapa"},
		{"", "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [bar0];", "PTX line 13: unsupported instruction cp.async.bulk.tensor"},
		{"", "cvt.rna.tf32.f32 %r2, %f1;", "PTX line 13: cvt.rna.tf32.f32: type .tf32 is not supported"},
		{"", "cvt.rn.satfinite.e4m3x2.f32 %r2, %f1, %f2;", "PTX line 13: cvt.rn.satfinite.e4m3x2.f32: type .e4m3x2 is not supported"},
		{"", "add.rn.ftz.f32x2 %rd1, %rd2, %rd3;", "PTX line 13: add.rn.ftz.f32x2: type .f32x2 is not supported"},
		{"", "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], 1, [bar0];", "PTX line 13: red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 (asynchronous"},
		{"", "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r1], %r2, [bar0];", "PTX line 13: st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 (asynchronous"},
		{"", "max.xorsign.abs.f32 %f1, %f2, %f3;", "PTX line 13: max.xorsign.abs.f32: .xorsign.abs is not supported"},
		{"", "atom.global.add.u32 %r2, [%rd1], %r1, %r3;", "PTX line 13: atom.global.add.u32 takes 3 operands"},
		{".explicitcluster", "mov.u32 %r2, %r1;", "kernel k, PTX line 4: .explicitcluster: cluster launches are not supported"},
		{".reqnctapercluster 2, 1, 1", "mov.u32 %r2, %r1;", "kernel k, PTX line 4: .reqnctapercluster [2 1 1]: clusters of more than one CTA"},
		{".maxclusterrank 4", "mov.u32 %r2, %r1;", "kernel k, PTX line 4: .maxclusterrank [4]: clusters of more than one CTA"},
		// Hints without an effect the emulator could show load.
		{"", "ld.global.L1::evict_last.L2::cache_hint.b32 %r2, [%rd1], %rd2;", ""},
		{"", "st.global.L2::cache_hint.b32 [%rd1], %r2, %rd2;", ""},
		{"", "fence.proxy.async.shared::cta;", ""},
		{".reqnctapercluster 1, 1, 1", "mov.u32 %r2, %cluster_ctarank;", ""},
		{".maxnreg 128", "mov.u32 %r2, %r1;", ""},
	} {
		src := fmt.Sprintf(body, c.dir, c.inst)
		if got := strings.Split(src, "\n")[line-1]; !strings.Contains(got, c.inst) {
			t.Fatalf("line %d is %q", line, got)
		}
		_, err := New(Config{}).LoadModule("m", []byte(src))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: %v", c.dir, c.inst, err)
		case c.want != "" && (err == nil || !errors.Is(err, cudart.ErrInvalid) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %s: load error %v, want one containing %q", c.dir, c.inst, err, c.want)
		}
	}
}
