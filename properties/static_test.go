package properties

import (
	"strings"
	"testing"
)

// The static half of FALSIFY-GPUTRAIN-006 sees a floating-point atomic
// whatever its qualifiers: Triton writes memory-order and scope qualifiers
// (acq_rel, gpu), half-precision atomics are f16x2/bf16x2 and vector ones
// .v4.f32; integer atomics (a spin lock's cas and exch) are not flagged.
func TestStaticFloatAtomics(t *testing.T) {
	for _, c := range []struct {
		inst  string
		float bool
	}{
		{"atom.global.add.f32 %f1, [%rd1], %f2;", true},
		{"red.global.add.f32 [%rd1], %f2;", true},
		{"atom.global.gpu.acq_rel.add.f32 %f1, [%rd1], %f2;", true},
		{"red.global.gpu.relaxed.add.noftz.bf16x2 [%rd1], %r2;", true},
		{"atom.shared.add.noftz.f16 %rs1, [%r1], %rs2;", true},
		{"red.global.v4.f32.add [%rd1], {%f1, %f2, %f3, %f4};", true},
		{"atom.global.add.f64 %fd1, [%rd1], %fd2;", true},
		{"atom.global.acq_rel.gpu.cas.b32 %r1, [%rd1], 0, 1;", false},
		{"atom.global.gpu.acq_rel.exch.b32 %r1, [%rd1], 0;", false},
		{"red.global.add.u32 [%rd1], 1;", false},
		{"add.f32 %f1, %f2, %f3;", false},
		{"@%p1 red.global.add.f32 [%rd1], %f2;", true},
		{"@%p1 atom.shared.add.f32 %f1, [%r1], %f2;\n\tred.add.f32 [%rd1], %f2;", true},
		{"call.uni xred.global.add.f32, (%rd1);", false}, // not an instruction's name
	} {
		ptx := []byte(".visible .entry k(\n.param .u64 k_param_0\n)\n{\nld.param.u64 %rd1, [k_param_0];\n" + c.inst + "\nret;\n}\n")
		err := staticNoFloatAtomics(entriesFunc(func() []PTXEntry { return []PTXEntry{{Entry: "k", PTX: ptx}} }))
		if (err != nil) != c.float || (err != nil && !strings.Contains(err.Error(), "floating-point atomic")) {
			t.Errorf("%s: %v, want a float atomic: %v", c.inst, err, c.float)
		}
	}
}

// Parameters an implementation passes no value in (a binding's {ignore}
// ones) need not be read; every other .param must be.
func TestStaticParamsReadSkipsUnread(t *testing.T) {
	ptx := []byte(".visible .entry k(\n.param .u64 .ptr .global .align 1 k_param_0,\n.param .u32 k_param_1\n)\n{\nld.param.u64 %rd1, [k_param_0];\nret;\n}\n")
	entry := func(unread ...string) any {
		return entriesFunc(func() []PTXEntry { return []PTXEntry{{Entry: "k", PTX: ptx, Unread: unread}} })
	}
	if err := staticParamsRead(entry()); err == nil || !strings.Contains(err.Error(), "k_param_1") {
		t.Errorf("an unread .param: %v, want it named", err)
	}
	if err := staticParamsRead(entry("k_param_1")); err != nil {
		t.Errorf("an unread .param the implementation passes nothing in: %v", err)
	}
}

// entriesFunc lists the entries f returns.
type entriesFunc func() []PTXEntry

func (f entriesFunc) PTXEntries() []PTXEntry { return f() }

// The sums over rows of a kernel that adds float32 values with a global or
// generic atom/red .add flush subnormals (PTX ISA); shared-memory atomics,
// other types and other operations do not.
func TestFlushingSums(t *testing.T) {
	for _, c := range []struct {
		inst  string
		flush bool
	}{
		{"atom.global.gpu.acq_rel.add.f32 %f1, [%rd1], %f2;", true},
		{"red.global.add.f32 [%rd1], %f2;", true},
		{"atom.add.f32 %f1, [%rd1], %f2;", true},
		{"red.global.v4.f32.add [%rd1], {%f1, %f2, %f3, %f4};", true},
		{"atom.global.v2.f32.add {%f1, %f2}, [%rd1], {%f3, %f4};", true},
		{"atom.shared.add.f32 %f1, [%r1], %f2;", false},
		{"atom.shared::cta.add.f32 %f1, [%r1], %f2;", false},
		{"atom.global.add.f64 %fd1, [%rd1], %fd2;", false},
		{"red.global.add.noftz.bf16x2 [%rd1], %r2;", false},
		{"atom.global.max.f32 %f1, [%rd1], %f2;", false},
		{"add.f32 %f1, %f2, %f3;", false},
		{"@%p1 red.global.add.f32 [%rd1], %f2;", true},
		{"@%p1 atom.shared.add.f32 %f1, [%r1], %f2;\n\tred.add.f32 [%rd1], %f2;", true},
		{"call.uni xred.global.add.f32, (%rd1);", false}, // not an instruction's name
	} {
		ptx := []byte(".visible .entry k(\n.param .u64 k_param_0\n)\n{\nld.param.u64 %rd1, [k_param_0];\n" + c.inst + "\nret;\n}\n")
		if got := flushingSums(entriesFunc(func() []PTXEntry { return []PTXEntry{{Entry: "k", PTX: ptx}} })); got != c.flush {
			t.Errorf("%s: flushing sums %v, want %v", c.inst, got, c.flush)
		}
	}
}
