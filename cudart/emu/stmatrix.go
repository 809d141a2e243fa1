package emu

import "github.com/ptxprop/ptxprop/ptx"

func init() { decoders["stmatrix"] = (*decoder).decodeStmatrix }

// decodeStmatrix decodes stmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans]
// [.shared{::cta}].b16 [p], r (PTX ISA 7.8, sm_90), the inverse of
// ldmatrix: source register i of lane t holds row t/4, columns 2(t%4) and
// 2(t%4)+1 of matrix i (transposed with .trans), and lane 8i+r gives the
// address of row r of matrix i. Triton 3.6 emits it for layout conversions
// through shared memory.
func (d *decoder) decodeStmatrix(in inst, sc *scope, pin *ptx.Instruction) (inst, error) {
	return d.decodeMatrix(in, sc, pin, true)
}

func execStmatrix(w *warp, in *inst, m uint32) {
	if !w.matrixWarp(in, m, "stores to an address") {
		return
	}
	var el [4][8][8]uint16 // matrix, row, column
	var un [4][8][8]bool
	trans := in.sub == 1
	for t := 0; t < 32; t++ {
		r, c := t/4, 2*(t%4)
		for i, s := range in.vec {
			v := w.r(s)[t]
			u := w.l.undefOn && w.undef[s]&(1<<t) != 0
			if trans {
				el[i][c][r], el[i][c+1][r] = uint16(v), uint16(v>>16)
				un[i][c][r], un[i][c+1][r] = u, u
			} else {
				el[i][r][c], el[i][r][c+1] = uint16(v), uint16(v>>16)
				un[i][r][c], un[i][r][c+1] = u, u
			}
		}
	}
	w.matrixRows(in, func(i, r, lane int, addr uint64) bool {
		for c := 0; c < 8; c++ {
			if !w.store(in, lane, in.space, addr+uint64(2*c), 2, uint64(el[i][r][c]), un[i][r][c]) {
				return false
			}
		}
		return true
	})
}
