package properties

import (
	"math"
	"math/bits"
	"sync"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/properties/gen"
)

// scratchPool recycles the scratch slices of checks (inputs widened for
// the oracle, oracle values and bounds, naive evaluations that do not
// outlive the check): at GPU shapes a check would otherwise allocate, zero
// and collect megabytes. Pool k holds slices of capacity 2^k.
type scratchPool[T any] [bits.UintSize]sync.Pool

// get returns a slice of n elements with unspecified contents, for values
// the caller writes in full before reading; give it back with put once
// nothing refers to it.
func (p *scratchPool[T]) get(n int) []T {
	k := 0
	if n > 1 {
		k = bits.Len(uint(n - 1)) // 2^k ≥ n
	}
	if s, ok := p[k].Get().(*[]T); ok {
		return (*s)[:n]
	}
	return make([]T, n, 1<<k)
}

// put returns slices to the pool. Slices whose capacity is not a power of
// two (nil, or not from get) are dropped.
func (p *scratchPool[T]) put(s ...[]T) {
	for _, b := range s {
		c := cap(b)
		if c == 0 || c&(c-1) != 0 {
			continue
		}
		b = b[:0]
		p[bits.Len(uint(c-1))].Put(&b)
	}
}

var (
	scratch64 scratchPool[float64]
	scratch32 scratchPool[float32]
)

// values is lim.Values in a slice from scratch32, which a check that ends
// the tensor's life may return to the pool (see rmsCase.keep).
func values(rt *rapid.T, lim gen.Limits, label string, rows, cols int, dists ...gen.Dist) gen.Tensor {
	return lim.ValuesInto(scratch32.get(rows*cols), rt, label, rows, cols, dists...)
}

// scratchWiden is gen.F64 into a slice from scratch64.
func scratchWiden(x []float32) []float64 {
	y := scratch64.get(len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// poisoned returns a slice of n NaNs from scratch32, for a kernel output:
// an element the implementation never writes cannot pass for a result.
func poisoned(n int) []float32 {
	y := scratch32.get(n)
	if n == 0 {
		return y
	}
	y[0] = float32(math.NaN())
	for k := 1; k < n; k *= 2 { // doubling copies: memmove's wide stores
		copy(y[k:], y[:k])
	}
	return y
}
