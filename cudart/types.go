package cudart

import (
	"fmt"
	"math"
	"time"
)

// Kind is the element type of a buffer or the type of a scalar parameter.
type Kind uint8

// The kinds a buffer element or a kernel parameter can have.
const (
	F32 Kind = iota + 1
	F64
	I32
	U32
	I64
	U64
)

var kindNames = map[Kind]string{F32: "f32", F64: "f64", I32: "s32", U32: "u32", I64: "s64", U64: "u64"}

// String returns the PTX spelling of the kind (f32, s32, u64, …).
func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Size returns the size of one element in bytes, or 0 for an invalid kind.
func (k Kind) Size() int {
	switch k {
	case F32, I32, U32:
		return 4
	case F64, I64, U64:
		return 8
	}
	return 0
}

// Dim3 is a CUDA grid or block extent.
type Dim3 struct{ X, Y, Z uint32 }

// D1 is a one-dimensional Dim3.
func D1(x int) Dim3 { return Dim3{uint32(x), 1, 1} }

// Count returns X·Y·Z, treating a zero extent as 1.
func (d Dim3) Count() int {
	n := 1
	for _, v := range []uint32{d.X, d.Y, d.Z} {
		if v > 0 {
			n *= int(v)
		}
	}
	return n
}

// Geometry is a launch configuration: grid, block and dynamic shared memory.
type Geometry struct {
	Grid, Block Dim3
	SharedBytes int
}

func (g Geometry) String() string {
	return fmt.Sprintf("grid=(%d,%d,%d) block=(%d,%d,%d) shared=%d",
		g.Grid.X, g.Grid.Y, g.Grid.Z, g.Block.X, g.Block.Y, g.Block.Z, g.SharedBytes)
}

// Buffer is a typed device allocation of Len elements. Its value is a handle:
// copy it freely; it is valid until Free or the device is closed.
type Buffer struct {
	id    uint64
	kind  Kind
	n     int
	owner *device // the Device that allocated it
}

// Kind returns the element kind.
func (b Buffer) Kind() Kind { return b.kind }

// Len returns the number of elements.
func (b Buffer) Len() int { return b.n }

// Valid reports whether b is a live handle (not the zero Buffer).
func (b Buffer) Valid() bool { return b.id != 0 }

func (b Buffer) String() string { return fmt.Sprintf("buf#%d[%d]%s", b.id, b.n, b.kind) }

// Role says how a kernel uses a buffer parameter. It drives poisoning and
// input verification.
type Role uint8

// Buffer roles.
const (
	RoleIn    Role = iota + 1 // read only: verified unmodified after the launch
	RoleOut                   // written only: poisoned before the launch
	RoleInOut                 // read and written (e.g. an aliased residual)
)

// Param is one kernel argument: a scalar of a Kind or a buffer with a Role and
// an element offset. Use the constructors below.
type Param struct {
	Kind Kind   // scalar kind; zero for a buffer
	Bits uint64 // scalar value bits, little-endian, Kind.Size() bytes used
	Buf  Buffer // buffer argument
	Off  int    // element offset into Buf
	Role Role   // buffer role
}

// IsBuffer reports whether p is a pointer argument.
func (p Param) IsBuffer() bool { return p.Buf.Valid() }

// Size returns the marshalled size of the parameter in bytes.
func (p Param) Size() int {
	if p.IsBuffer() {
		return 8
	}
	return p.Kind.Size()
}

// ScalarF32 returns a float32 scalar parameter.
func ScalarF32(v float32) Param { return Param{Kind: F32, Bits: uint64(math.Float32bits(v))} }

// ScalarF64 returns a float64 scalar parameter.
func ScalarF64(v float64) Param { return Param{Kind: F64, Bits: math.Float64bits(v)} }

// ScalarI32 returns an int32 scalar parameter.
func ScalarI32(v int32) Param { return Param{Kind: I32, Bits: uint64(uint32(v))} }

// ScalarU32 returns a uint32 scalar parameter.
func ScalarU32(v uint32) Param { return Param{Kind: U32, Bits: uint64(v)} }

// ScalarU64 returns a uint64 scalar parameter.
func ScalarU64(v uint64) Param { return Param{Kind: U64, Bits: v} }

// In passes b as a read-only input.
func In(b Buffer) Param { return Param{Buf: b, Role: RoleIn} }

// Out passes b as an output that the kernel must write completely.
func Out(b Buffer) Param { return Param{Buf: b, Role: RoleOut} }

// InOut passes b as read and written.
func InOut(b Buffer) Param { return Param{Buf: b, Role: RoleInOut} }

// At returns p pointing off elements further into its buffer.
func (p Param) At(off int) Param { p.Off = off; return p }

func (p Param) String() string {
	if p.IsBuffer() {
		r := map[Role]string{RoleIn: "in", RoleOut: "out", RoleInOut: "inout"}[p.Role]
		if p.Off != 0 {
			return fmt.Sprintf("%s %v+%d", r, p.Buf, p.Off)
		}
		return fmt.Sprintf("%s %v", r, p.Buf)
	}
	switch p.Kind {
	case F32:
		return fmt.Sprintf("f32 %g", math.Float32frombits(uint32(p.Bits)))
	case F64:
		return fmt.Sprintf("f64 %g", math.Float64frombits(p.Bits))
	case I32:
		return fmt.Sprintf("s32 %d", int32(uint32(p.Bits)))
	case I64:
		return fmt.Sprintf("s64 %d", int64(p.Bits))
	}
	return fmt.Sprintf("%s %d", p.Kind, p.Bits)
}

// Info describes the device for the contract report.
type Info struct {
	Backend           string  // "gpu" or "emu"
	Name              string  // device name
	Ordinal           int     // the device's index among its backend's (Options.Ordinal)
	UUID              string  // the GPU's UUID ("GPU-…"); empty for the emulator
	PCIBusID          string  // the GPU's PCI address (domain:bus:device.function); empty for the emulator
	ComputeCapability string  // "9.0"; empty for the emulator
	SMs               int     // streaming multiprocessors; 0 if not applicable
	Driver            string  // driver version
	CUDA              string  // CUDA driver API version
	CopyBandwidth     float64 // device-to-device copy, bytes/s (read+write); 0 if unmeasured
}

// Stats counts what a Device has done; properties use it to show that one
// loaded module served every shape.
type Stats struct {
	ModuleLoads int // modules actually loaded (cache misses)
	CacheHits   int // Load calls served from the cache
	Launches    int
	Allocs      int
	LiveBuffers int
	// Handoffs counts the calls that reached the backend (one each for a
	// whole checked launch where the backend batches); Busy is the wall time
	// during which at least one of them was in progress (for a checked
	// launch on a device-checking backend, from before its upload is written
	// to after its copy back is read, and including any wait for the
	// backend); LockWait is the time callers waited for the Device while
	// another call held it, and LockHeld the time some call held it (when
	// LockHeld nears the wall time, the lock limits how many calls go on at
	// once, whatever the number of goroutines).
	Handoffs int
	Busy     time.Duration
	LockWait time.Duration
	LockHeld time.Duration
	// MaxFlights is the most launches that were in flight at once: on a
	// device-checking backend (the GPU) a launch gives up the Device's lock
	// while the backend runs it, so other goroutines' calls go on.
	MaxFlights int
}
