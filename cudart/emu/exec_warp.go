package emu

func execActivemask(w *warp, in *inst, m uint32) {
	d := w.r(in.d)
	forLanes(m, func(l int) { d[l] = uint64(w.active) })
}
