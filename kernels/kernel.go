package kernels

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/op"
)

// ParamSpec describes one kernel parameter, in PTX order.
type ParamSpec struct {
	Name string
	// Kind is the scalar's kind, or the element kind of a pointer's buffer.
	Kind cudart.Kind
	// Role is RoleIn, RoleOut or RoleInOut for a pointer, 0 for a scalar.
	Role cudart.Role
	// Elems, for a pointer, is the number of elements the kernel may access
	// for a shape: the buffer (from the argument's offset on) must hold at
	// least that many.
	Elems func(op.Shape) int
	// Value, for a scalar that the shape determines (rows, hidden, chunk,
	// …), is the value it must have; nil for free scalars (eps, theta, pos).
	Value func(op.Shape) uint64
}

// IsPointer reports whether the parameter is a buffer pointer.
func (p ParamSpec) IsPointer() bool { return p.Role != 0 }

// PTXType returns the type the parameter has in the PTX entry signature as
// nvcc writes it: u64 for pointers, f32 for float, u32 for 32-bit integers,
// u64 for 64-bit integers, f64 for double.
func (p ParamSpec) PTXType() string {
	if p.IsPointer() {
		return "u64"
	}
	switch p.Kind {
	case cudart.F32:
		return "f32"
	case cudart.F64:
		return "f64"
	case cudart.I32, cudart.U32:
		return "u32"
	case cudart.I64, cudart.U64:
		return "u64"
	}
	return "?"
}

// Kernel describes one PTX entry. The zero value is not usable; the
// descriptors are built in this package (All) and copied with WithPTX.
type Kernel struct {
	Name    string // registry name; equal to Entry
	Entry   string // .entry name in the PTX
	Source  string // CUDA C source, relative to the package: "src/rmsnorm_fwd.cu"
	PTXFile string // committed PTX, relative to the package: "ptx/rmsnorm_fwd.ptx"
	PTX     []byte // the PTX text launched (the committed one unless WithPTX)
	Params  []ParamSpec
	// Geometry returns the launch configuration for a shape. It depends on
	// the shape only, never on the device.
	Geometry func(op.Shape) cudart.Geometry
	// Deterministic kernels produce the same bits on every launch: no
	// floating-point atomics, reduction order fixed by the shape.
	Deterministic bool
	// Reductions lists the float32 sums the kernel computes for a shape.
	Reductions func(op.Shape) []op.Reduction
	// Unreachable lists the branch directions of the committed PTX that
	// no launch through our launchers and contracts takes, each with the
	// reason; CoverageGaps those a run reaches only by chance (the float4
	// paths' alignment tests, reached through misaligned views). The suite
	// on the emulator must cover every other one (unreachable.go).
	Unreachable, CoverageGaps []Unreachable

	// loaded remembers k's module on each device it was launched on, so
	// that a launch does not re-hash the PTX text (a device's own cache is
	// keyed by the hash): the rapid loops of a contract run launch k side by
	// side on devices of their own; nil disables it.
	loaded *moduleCache
}

type moduleCache struct {
	mu   sync.Mutex
	mods map[cudart.Device]cudart.Module
}

// moduleCacheMax bounds a kernel's remembered devices: past it the cache
// starts again, so that devices closed long ago are not kept reachable.
const moduleCacheMax = 64

// module returns k's module on dev, loading it through dev unless k has
// been loaded there before.
func (k *Kernel) module(dev cudart.Device) (cudart.Module, error) {
	c := k.loaded
	if c == nil {
		return dev.Load(k.Name, k.PTX)
	}
	c.mu.Lock()
	m, ok := c.mods[dev]
	c.mu.Unlock()
	if ok {
		return m, nil
	}
	m, err := dev.Load(k.Name, k.PTX)
	if err != nil {
		return m, err
	}
	c.mu.Lock()
	if c.mods == nil || len(c.mods) >= moduleCacheMax {
		c.mods = map[cudart.Device]cudart.Module{}
	}
	c.mods[dev] = m
	c.mu.Unlock()
	return m, nil
}

// WithPTX returns a copy of k that launches ptx instead of k.PTX: the same
// entry, parameters and geometry. A mutant is such a copy.
func (k *Kernel) WithPTX(ptx []byte) *Kernel {
	c := *k
	c.Params = append([]ParamSpec(nil), k.Params...)
	c.PTX = append([]byte(nil), ptx...)
	c.loaded = &moduleCache{}
	return &c
}

// invalid returns an error wrapping cudart.ErrInvalid.
func invalid(format string, args ...any) error {
	return cudart.Errorf(cudart.ErrInvalid, format, args...)
}

// CheckArgs checks args against the descriptor for shape s: their number,
// each scalar's kind (and value, where the shape determines it), each
// pointer's element kind, role and length.
func (k *Kernel) CheckArgs(s op.Shape, args []cudart.Param) error {
	if len(args) != len(k.Params) {
		return invalid("%d arguments, want %d (%s)", len(args), len(k.Params), k.signature())
	}
	for i, p := range k.Params {
		a := args[i]
		if p.IsPointer() {
			if !a.IsBuffer() {
				return invalid("argument %d (%s): %v, want a %v buffer", i, p.Name, a, p.Kind)
			}
			if a.Buf.Kind() != p.Kind {
				return invalid("argument %d (%s): %v, want a %v buffer", i, p.Name, a.Buf, p.Kind)
			}
			if a.Role != p.Role {
				return invalid("argument %d (%s): role %v, want %v", i, p.Name, roleName(a.Role), roleName(p.Role))
			}
			if p.Elems != nil {
				if need, have := p.Elems(s), a.Buf.Len()-a.Off; have < need {
					return invalid("argument %d (%s): %v from offset %d holds %d elements, %v needs %d", i, p.Name, a.Buf, a.Off, have, s, need)
				}
			}
			continue
		}
		if a.IsBuffer() || a.Kind != p.Kind {
			return invalid("argument %d (%s): %v, want a %v scalar", i, p.Name, a, p.Kind)
		}
		if p.Value != nil {
			want := p.Value(s)
			if a.Kind.Size() == 4 {
				want &= math.MaxUint32
			}
			if a.Bits != want {
				return invalid("argument %d (%s) = %d, but %v needs %d", i, p.Name, a.Bits, s, want)
			}
		}
	}
	return nil
}

func roleName(r cudart.Role) string {
	switch r {
	case cudart.RoleIn:
		return "in"
	case cudart.RoleOut:
		return "out"
	case cudart.RoleInOut:
		return "inout"
	}
	return "none"
}

func (k *Kernel) signature() string {
	var b strings.Builder
	b.WriteString(k.Entry)
	b.WriteByte('(')
	for i, p := range k.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		if p.IsPointer() {
			fmt.Fprintf(&b, "%s %s*", roleName(p.Role), p.Kind)
		} else {
			b.WriteString(p.Kind.String())
		}
		b.WriteByte(' ')
		b.WriteString(p.Name)
	}
	b.WriteByte(')')
	return b.String()
}

// String returns the kernel's signature, e.g.
// "rmsnorm_fwd(in f32* x, in f32* gamma, out f32* y, u32 rows, u32 hidden, f32 eps)".
func (k *Kernel) String() string { return k.signature() }

// Launch loads k's PTX on dev (the device caches modules by the SHA-256 of
// the text; k remembers the module of the last device it used), checks args against the descriptor for shape s and launches
// k.Entry with k.Geometry(s), waiting for completion.
func (k *Kernel) Launch(dev cudart.Device, s op.Shape, args ...cudart.Param) error {
	if len(k.PTX) == 0 {
		return fmt.Errorf("kernels: %s: %w", k.Name, invalid("no PTX text (%s missing from the build)", k.PTXFile))
	}
	if err := k.CheckArgs(s, args); err != nil {
		return fmt.Errorf("kernels: %s: %w", k.Name, err)
	}
	g := k.Geometry(s)
	if g.Grid.Count() <= 0 || g.Block.Count() <= 0 {
		return fmt.Errorf("kernels: %s: %w", k.Name, invalid("empty launch %v for %v", g, s))
	}
	m, err := k.module(dev)
	if err != nil {
		return fmt.Errorf("kernels: %s: %w", k.Name, err)
	}
	if err := dev.Launch(m, k.Entry, g, args...); err != nil {
		return fmt.Errorf("kernels: %s %v: %w", k.Name, s, err)
	}
	return nil
}
