package oracle

import (
	"fmt"
	"math"
)

// RoPEStyle selects how a head's headDim values are paired for rotation.
type RoPEStyle int

const (
	// RoPENeoX pairs (i, i+headDim/2) for i < headDim/2 (GPT-NeoX, Llama HF).
	RoPENeoX RoPEStyle = iota
	// RoPEGPTJ pairs adjacent values (2i, 2i+1) (GPT-J, Meta Llama reference).
	RoPEGPTJ
)

// String returns "neox" or "gptj".
func (s RoPEStyle) String() string {
	switch s {
	case RoPENeoX:
		return "neox"
	case RoPEGPTJ:
		return "gptj"
	}
	return fmt.Sprintf("RoPEStyle(%d)", int(s))
}

// pair returns the indices within a head of the two values rotated by the
// i-th frequency.
func (s RoPEStyle) pair(i, headDim int) (a, b int) {
	if s == RoPEGPTJ {
		return 2 * i, 2*i + 1
	}
	return i, i + headDim/2
}

// RoPEFrequencies writes freq_i = θ^(−2i/headDim) for i < headDim/2 into
// dst (length headDim/2).
func RoPEFrequencies(dst []float64, headDim int, theta float64) {
	mustLen("dst", dst, headDim/2)
	for i := range dst {
		dst[i] = math.Pow(theta, -2*float64(i)/float64(headDim))
	}
}

// RoPEAngles writes the rotation angles of one row, angle_i = pos·θ^(−2i/headDim)
// for i < headDim/2, into dst (length headDim/2). Properties and bounds
// share it so they agree on what "the angle" is.
func RoPEAngles(dst []float64, pos float64, headDim int, theta float64) {
	RoPEFrequencies(dst, headDim, theta)
	anglesOf(dst, dst, pos)
}

// anglesOf writes pos·freq_i into dst, from the frequencies RoPEFrequencies
// wrote into freq (dst may be freq): the loops over rows compute the
// frequencies, a power each, once, and RoPEAngles' values are exactly
// these products.
func anglesOf(dst, freq []float64, pos float64) {
	for i, f := range freq {
		dst[i] = f * pos
	}
}

// rope rotates every head of every row by R(sign·angle).
func rope(y, x []float64, pos []float64, rows, heads, headDim int, theta float64, style RoPEStyle, sign float64) {
	ropeByAngles(y, x, pos, rows, heads, headDim, theta, style, func(a float64) (s, c float64) {
		s, c = math.Sincos(a)
		return s * sign, c
	})
}

// ropeByAngles checks the arguments of a rotation over T and rotates every
// head of every row by the angles RoPEAngles gives, whose sine and cosine
// in T sincos returns. The reference and its complex extension differ only
// in sincos.
func ropeByAngles[T float64 | complex128](y, x []T, pos []float64, rows, heads, headDim int, theta float64, style RoPEStyle, sincos func(a float64) (s, c T)) {
	mustRoPE(ropeOut, y, x, pos, rows, heads, headDim)
	w, half := heads*headDim, headDim/2
	freq, ang := make([]float64, half), make([]float64, half)
	RoPEFrequencies(freq, headDim, theta)
	sn := make([]T, half)
	cs := make([]T, half)
	for r := 0; r < rows; r++ {
		anglesOf(ang, freq, pos[r])
		for i, a := range ang {
			sn[i], cs[i] = sincos(a)
		}
		rotateRow(y[r*w:(r+1)*w], x[r*w:(r+1)*w], sn, cs, headDim, style)
	}
}

// rotateRow rotates each head of one row x (a multiple of headDim values)
// into y: the pair (a, b) of frequency i becomes
// (x_a·cos_i − x_b·sin_i, x_a·sin_i + x_b·cos_i) with the sines sn and
// cosines cs of the row's angles. The reference, its complex extension and
// the float32 evaluation differ only in how they form sn and cs.
func rotateRow[T scalar](y, x, sn, cs []T, headDim int, style RoPEStyle) {
	y = y[:len(x)]
	for base := 0; base < len(x); base += headDim {
		for i := range sn {
			ia, ib := style.pair(i, headDim)
			x0, x1 := x[base+ia], x[base+ib]
			y[base+ia] = x0*cs[i] - x1*sn[i]
			y[base+ib] = x0*sn[i] + x1*cs[i]
		}
	}
}

// RoPENeoXForward applies rotary embeddings in the NeoX layout. x and y are
// [rows][heads·headDim], pos holds one position per row, headDim is even.
// For each head and i < h = headDim/2, with angle a_i = pos·θ^(−2i/headDim):
//
//	y_i   = x_i·cos a_i − x_{i+h}·sin a_i
//	y_{i+h} = x_i·sin a_i + x_{i+h}·cos a_i
func RoPENeoXForward(y, x []float64, pos []float64, rows, heads, headDim int, theta float64) {
	rope(y, x, pos, rows, heads, headDim, theta, RoPENeoX, 1)
}

// RoPENeoXBackward applies the transpose rotation R(−a) of RoPENeoXForward,
// which is its gradient: dx = R(a)ᵀ·dy.
func RoPENeoXBackward(dx, dy []float64, pos []float64, rows, heads, headDim int, theta float64) {
	rope(dx, dy, pos, rows, heads, headDim, theta, RoPENeoX, -1)
}

// RoPEGPTJForward applies rotary embeddings in the GPT-J layout: the same
// frequencies as RoPENeoXForward, applied to adjacent pairs (2i, 2i+1).
// It exists so properties can show that a NeoX kernel is not GPT-J.
func RoPEGPTJForward(y, x []float64, pos []float64, rows, heads, headDim int, theta float64) {
	rope(y, x, pos, rows, heads, headDim, theta, RoPEGPTJ, 1)
}

// RoPEGPTJBackward is the transpose of RoPEGPTJForward.
func RoPEGPTJBackward(dx, dy []float64, pos []float64, rows, heads, headDim int, theta float64) {
	rope(dx, dy, pos, rows, heads, headDim, theta, RoPEGPTJ, -1)
}
