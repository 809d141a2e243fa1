package kernels

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ptxprop/ptxprop/cudart"
)

// argCheck collects every problem with a launcher's arguments so that one
// error names them all.
type argCheck struct{ problems []string }

func (c *argCheck) addf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// dims checks that every named dimension is in [1, MaxElements].
func (c *argCheck) dims(names []string, vals ...int) bool {
	ok := true
	for i, v := range vals {
		if v <= 0 || v > MaxElements {
			c.addf("%s=%d, want 1..%d", names[i], v, MaxElements)
			ok = false
		}
	}
	return ok
}

// elements checks that a tensor of n elements is addressable by the kernels.
func (c *argCheck) elements(what string, n int) bool {
	if n > MaxElements {
		c.addf("%s has %d elements, more than %d", what, n, MaxElements)
		return false
	}
	return true
}

func (c *argCheck) length(name string, got, want int) {
	if got != want {
		c.addf("len(%s)=%d, want %d", name, got, want)
	}
}

func (c *argCheck) err(op string) error {
	if len(c.problems) == 0 {
		return nil
	}
	return fmt.Errorf("kernels: %s: %w", op, invalid("%s", strings.Join(c.problems, "; ")))
}

// scratch owns the device buffers of one host-level call.
type scratch struct {
	dev  cudart.Device
	op   string
	bufs []cudart.Buffer
}

func newScratch(dev cudart.Device, op string) *scratch { return &scratch{dev: dev, op: op} }

func (s *scratch) alloc(name string, kind cudart.Kind, n int) (cudart.Buffer, error) {
	return s.allocAt(name, kind, n, 0)
}

// allocAt allocates n elements of kind as a view off elements into its
// allocation (cudart.Device.AllocAt).
func (s *scratch) allocAt(name string, kind cudart.Kind, n, off int) (cudart.Buffer, error) {
	b, err := s.dev.AllocAt(kind, n, off)
	if err != nil {
		return cudart.Buffer{}, fmt.Errorf("kernels: %s: alloc %s: %w", s.op, name, err)
	}
	s.bufs = append(s.bufs, b)
	return b, nil
}

// upload allocates a buffer for a host slice ([]float32 or []uint32) and
// copies it in.
func (s *scratch) upload(name string, data any) (cudart.Buffer, error) {
	return s.uploadAt(name, data, 0)
}

// uploadAt is upload into a view off elements into its allocation.
func (s *scratch) uploadAt(name string, data any, off int) (cudart.Buffer, error) {
	var kind cudart.Kind
	var n int
	switch v := data.(type) {
	case []float32:
		kind, n = cudart.F32, len(v)
	case []uint32:
		kind, n = cudart.U32, len(v)
	default:
		return cudart.Buffer{}, fmt.Errorf("kernels: %s: upload %s: %w", s.op, name, invalid("unsupported slice %T", data))
	}
	b, err := s.allocAt(name, kind, n, off)
	if err != nil {
		return cudart.Buffer{}, err
	}
	if err := s.dev.Write(b, data); err != nil {
		return cudart.Buffer{}, fmt.Errorf("kernels: %s: upload %s: %w", s.op, name, err)
	}
	return b, nil
}

func (s *scratch) download(name string, dst []float32, b cudart.Buffer) error {
	if dst == nil {
		return nil
	}
	if err := s.dev.Read(dst, b); err != nil {
		return fmt.Errorf("kernels: %s: download %s: %w", s.op, name, err)
	}
	return nil
}

// free releases every buffer (the device checks their guard bands one
// last time) and returns every error.
func (s *scratch) free() error {
	var errs []error
	for i := len(s.bufs) - 1; i >= 0; i-- {
		if err := s.dev.Free(s.bufs[i]); err != nil {
			errs = append(errs, fmt.Errorf("kernels: %s: free: %w", s.op, err))
		}
	}
	s.bufs = nil
	return errors.Join(errs...)
}

func names(s ...string) []string { return s }
