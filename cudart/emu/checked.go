package emu

import "github.com/ptxprop/ptxprop/cudart"

// Checked is the emulator as a Device sees a GPU backend: device-to-device
// copies, fills and page-locked memory, but no traps on guard bands and no
// write records. A Device over it checks guard bands and large inputs after
// each launch with ptxprop_verify, which the emulator then runs, as the GPU
// would: the path every checked launch takes on a GPU, on any machine.
// Open returns one for Options.DeviceChecks.
type Checked struct{ b *Backend }

// CheckedCaps are Checked's capabilities: the GPU's that matter to a
// Device's checks (fill, device-to-device copies, page-locked memory), and
// the emulator's own run-time controls.
const CheckedCaps = cudart.CapFill | cudart.CapCopyDtoD | cudart.CapPinned | cudart.CapAbort |
	cudart.CapSchedule | cudart.CapInstructionLimit

// Capabilities returns CheckedCaps.
func (c Checked) Capabilities() cudart.Caps { return CheckedCaps }

// Pinned returns Go memory, as a GPU backend returns page-locked memory:
// the Device builds its uploads and receives its copies back in it. It is
// full of 0xDD, as reused page-locked memory holds old bytes, so a Device
// that left part of an upload unwritten sends garbage.
func (c Checked) Pinned(n int) []byte {
	b := make([]byte, n)
	poison(b)
	return b
}

// Unpin overwrites what it is given with 0xDD, so a Device that kept a view
// of a copy back past Unpin reads garbage and its checks fail.
func (c Checked) Unpin(b []byte) { poison(b[:cap(b)]) }

func poison(b []byte) {
	for i := range b {
		b[i] = 0xDD
	}
}

// Info is the emulator's, its name saying that buffers are checked on the
// device.
func (c Checked) Info() cudart.Info {
	i := c.b.Info()
	i.Name += ", checked as on a GPU"
	return i
}
func (c Checked) LoadModule(name string, ptx []byte) (cudart.ModuleHandle, error) {
	return c.b.LoadModule(name, ptx)
}
func (c Checked) UnloadModule(h cudart.ModuleHandle) error { return c.b.UnloadModule(h) }
func (c Checked) Alloc(n int) (uint64, error)              { return c.b.Alloc(n) }
func (c Checked) Free(addr uint64) error                   { return c.b.Free(addr) }
func (c Checked) CopyHtoD(dst uint64, src []byte) error    { return c.b.CopyHtoD(dst, src) }
func (c Checked) CopyDtoH(dst []byte, src uint64) error    { return c.b.CopyDtoH(dst, src) }
func (c Checked) CopyDtoD(dst, src uint64, n int) error    { return c.b.CopyDtoD(dst, src, n) }
func (c Checked) Fill32(addr uint64, words int, v uint32) error {
	return c.b.Fill32(addr, words, v)
}
func (c Checked) Launch(h cudart.ModuleHandle, entry string, g cudart.Geometry, params [][]byte) error {
	return c.b.Launch(h, entry, g, params)
}
func (c Checked) Abort()                            { c.b.Abort() }
func (c Checked) SetSeed(seed int64)                { c.b.SetSeed(seed) }
func (c Checked) SetInstructionLimit(n int64) int64 { return c.b.SetInstructionLimit(n) }
func (c Checked) Close() error                      { return c.b.Close() }
