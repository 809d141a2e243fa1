package emu

import (
	"fmt"
	"sort"
	"sync/atomic"
)

// Generic address windows. Global allocations live at globalBase and
// above; the other state spaces appear in the generic address space at
// fixed windows of 4 GiB, as on a GPU.
const (
	sharedWindow uint64 = 0x0000_1000_0000_0000
	localWindow  uint64 = 0x0000_2000_0000_0000
	constWindow  uint64 = 0x0000_3000_0000_0000
	paramWindow  uint64 = 0x0000_4000_0000_0000
	windowSize   uint64 = 1 << 32
	globalBase   uint64 = 0x0000_7F00_0000_0000
	allocGap     uint64 = 64 << 10 // unmapped bytes between allocations
	pageBits            = 12
	pageSize            = 1 << pageBits
)

// guard is a protected range inside an allocation.
type guard struct {
	lo, hi uint64
	what   string
}

// allocation is one global buffer.
type allocation struct {
	base, end    uint64
	lo, hi       uint64 // the buffer: the labelled range, or all of it
	data         []byte
	label        string // buffer name from Label
	lbase, lend  uint64 // labelled range
	guards       []guard
	init         []uint64   // written-byte bitmap; nil unless CheckUninitGlobal
	shadow       [][]uint64 // per-page per-byte write records
	epochs       []uint32   // launch number each shadow page belongs to
	valid        []uint64   // per page: its 64-byte chunks whose records are the epoch's (see stampRun)
	moduleGlobal string     // name of the module variable it holds, if any
	watchedIn    uint32     // launch in which a strong read read it (spin detection)
	// spec is what a parallel launch did with it: the launch number << 2 |
	// specRead or specWritten (spec.go).
	spec atomic.Uint64
}

// Write records (one uint64 per byte): bits 0-6 store count (saturating),
// bit 7 last store atomic, bits 8-31 the last writer's clock, bits 32-63
// the last writer's global warp number + 1 (see order.go).
const (
	wcMask     = 0x7F
	wcAtomic   = 0x80
	wcClkShft  = 8
	wcWarpShft = 32
)

func (a *allocation) markInit(off, n int) {
	if a.init == nil {
		return
	}
	for i := off; i < off+n; i++ {
		a.init[i>>6] |= 1 << (i & 63)
	}
}

func (a *allocation) isInit(off, n int) bool {
	if a.init == nil {
		return true
	}
	for i := off; i < off+n; i++ {
		if a.init[i>>6]&(1<<(i&63)) == 0 {
			return false
		}
	}
	return true
}

func (a *allocation) writeCount(off int, launch uint32) uint32 {
	p := off >> pageBits
	po := off & (pageSize - 1)
	if p >= len(a.shadow) || a.shadow[p] == nil || a.epochs[p] != launch || a.valid[p]>>(po>>6)&1 == 0 {
		return 0
	}
	return uint32(a.shadow[p][po] & wcMask)
}

// page returns the write-record page for byte off in launch, allocating it
// on first use and clearing records left by an earlier launch.
func (a *allocation) page(off int, launch uint32) []uint64 {
	p := off >> pageBits
	a.initShadow()
	pg := a.shadow[p]
	if pg == nil {
		pg = make([]uint64, pageSize)
		a.shadow[p] = pg
	} else if a.epochs[p] != launch {
		clear(pg)
	} else if v := a.valid[p]; v != ^uint64(0) {
		for c := range pageSize / 64 {
			if v>>c&1 == 0 {
				clear(pg[64*c : 64*c+64])
			}
		}
	}
	a.epochs[p], a.valid[p] = launch, ^uint64(0)
	return pg
}

// initShadow makes the per-page record slices on first use.
func (a *allocation) initShadow() {
	if a.shadow == nil {
		n := (len(a.data) + pageSize - 1) >> pageBits
		a.shadow, a.epochs, a.valid = make([][]uint64, n), make([]uint32, n), make([]uint64, n)
	}
}

// describe names the byte at addr for diagnostics.
func (a *allocation) describe(addr uint64) string {
	for _, g := range a.guards {
		if addr >= g.lo && addr < g.hi {
			if addr >= a.lend && a.label != "" {
				return fmt.Sprintf("%s (byte %d past the end of %s)", g.what, addr-a.lend, a.label)
			}
			if addr < a.lbase && a.label != "" {
				return fmt.Sprintf("%s (byte %d before the start of %s)", g.what, a.lbase-addr, a.label)
			}
			return g.what
		}
	}
	name := a.name()
	if a.label != "" && addr >= a.lbase && addr < a.lend {
		return fmt.Sprintf("%s byte %d", name, addr-a.lbase)
	}
	return fmt.Sprintf("%s offset %d", name, addr-a.base)
}

// globalMem is the device's global memory: allocations sorted by address.
type globalMem struct {
	allocs []*allocation
	next   uint64
	launch uint32 // number of the current (or last) launch
}

func (g *globalMem) alloc(n int, trackInit bool) *allocation {
	a := &allocation{base: g.next, end: g.next + uint64(n), data: make([]byte, n)}
	a.lo, a.hi = a.base, a.end
	if trackInit {
		a.init = make([]uint64, (n+63)/64)
	}
	g.next += (uint64(n) + allocGap + 255) &^ 255
	g.allocs = append(g.allocs, a) // addresses only grow: the slice stays sorted
	return a
}

func (g *globalMem) free(addr uint64) bool {
	i := sort.Search(len(g.allocs), func(i int) bool { return g.allocs[i].base >= addr })
	if i == len(g.allocs) || g.allocs[i].base != addr {
		return false
	}
	g.allocs = append(g.allocs[:i], g.allocs[i+1:]...)
	return true
}

// find returns the allocation containing addr, or nil. It changes
// nothing, so that the CTAs of a launch may call it at once.
func (g *globalMem) find(addr uint64) *allocation {
	i := sort.Search(len(g.allocs), func(i int) bool { return g.allocs[i].end > addr })
	if i < len(g.allocs) && addr >= g.allocs[i].base {
		return g.allocs[i]
	}
	return nil
}

// name names the buffer an allocation holds.
func (a *allocation) name() string {
	switch {
	case a.moduleGlobal != "":
		return "global variable " + a.moduleGlobal
	case a.label != "":
		return a.label
	}
	return fmt.Sprintf("allocation %#x[%d]", a.base, len(a.data))
}

// outside describes an address (the start of an access) that is not inside
// a buffer: where it lies relative to the buffer of a, the allocation it
// falls in, or else to the nearest buffer. Distances are measured from the
// buffer's own start and end, not from its allocation's.
func (g *globalMem) outside(a *allocation, addr uint64) string {
	if a == nil {
		return "outside every live allocation: " + g.nearest(addr)
	}
	in := ""
	for _, gd := range a.guards {
		if addr >= gd.lo && addr < gd.hi {
			in = "in " + gd.what + ": "
		}
	}
	switch {
	case addr < a.lo:
		return fmt.Sprintf("%s%d bytes before the start of %s", in, a.lo-addr, a.name())
	case addr >= a.hi:
		return fmt.Sprintf("%s%d bytes past the end of %s", in, addr-a.hi, a.name())
	}
	return fmt.Sprintf("crosses the end of %s (%d bytes before it)", a.name(), a.hi-addr)
}

// nearest describes where an unmapped address lies relative to the nearest
// buffer.
func (g *globalMem) nearest(addr uint64) string {
	var best *allocation
	var dist uint64
	for _, a := range g.allocs {
		var d uint64
		switch {
		case addr < a.lo:
			d = a.lo - addr
		case addr >= a.hi:
			d = addr - a.hi + 1
		}
		if best == nil || d < dist {
			best, dist = a, d
		}
	}
	if best == nil {
		return "no live allocations"
	}
	if addr < best.lo {
		return fmt.Sprintf("%d bytes before the start of %s", best.lo-addr, best.name())
	}
	return fmt.Sprintf("%d bytes past the end of %s", addr-best.hi, best.name())
}
