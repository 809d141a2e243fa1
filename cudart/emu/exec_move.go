package emu

// execPack: mov.b64 d, {a, b} (element 0 in the low bits).
func execPack(w *warp, in *inst, m uint32) {
	d := w.r(in.d)
	eb := in.t2.bits()
	forLanes(m, func(l int) {
		var v uint64
		for i, s := range in.vec {
			v |= in.t2.trunc(w.regs[s*32+int32(l)]) << (uint(i) * eb)
		}
		d[l] = v
	})
}

func execUnpack(w *warp, in *inst, m uint32) {
	a := w.r(in.a)
	eb := in.t2.bits()
	forLanes(m, func(l int) {
		v := a[l]
		for i, s := range in.vec {
			w.regs[s*32+int32(l)] = in.t2.trunc(v >> (uint(i) * eb))
		}
	})
}

// execClock reads %clock/%clock64/%globaltimer: the launch's warp
// instruction count, deterministic and increasing.
func execClock(w *warp, in *inst, m uint32) {
	d := w.r(in.d)
	v := uint64(w.l.warpInsts)
	if in.sub == 1 {
		v >>= 32
	}
	forLanes(m, func(l int) { d[l] = v })
}
