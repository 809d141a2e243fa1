package properties_test

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ptxprop/ptxprop/binding"
	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/op"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/outcome"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/ptx"
)

// The tests of PARITY-001's classification run it without a GPU: an
// emulator device that calls itself a GPU (asGPU) stands in for one, and
// the contract's own emulator is another emulator device.

// asGPU is an emulator device whose Info says "gpu". seed, when not nil,
// gives the schedule of its nth launch (0, 1, …), as a GPU schedules a
// launch as it pleases.
type asGPU struct {
	cudart.Device
	seed func(n int) int64
	cc   string // its compute capability ("": none)

	mu       sync.Mutex
	launches int
}

func (d *asGPU) Info() cudart.Info {
	i := d.Device.Info()
	i.Backend, i.ComputeCapability = "gpu", d.cc
	return i
}

func (d *asGPU) Launch(m cudart.Module, entry string, g cudart.Geometry, params ...cudart.Param) error {
	d.mu.Lock()
	n := d.launches
	d.launches++
	d.mu.Unlock()
	if d.seed != nil {
		if err := d.Device.SetSchedule(d.seed(n)); err != nil {
			return err
		}
	}
	return d.Device.Launch(m, entry, g, params...)
}

// openEmu opens an emulator device, closed when t ends.
func openEmu(t *testing.T) cudart.Device {
	d := cudart.New(emu.New(emu.Config{}), cudart.DefaultOptions())
	t.Cleanup(func() { d.Close() })
	return d
}

// parityOutcome runs PARITY-001 on im with gpu as the run's device and
// fresh emulators for the contract's own, and returns its outcome, which
// must be falsified.
func parityOutcome(t *testing.T, gpu cudart.Device, im properties.Impls) outcome.Outcome {
	t.Helper()
	o := parityRun(t, gpu, im)
	if o.Status != outcome.Falsified {
		t.Fatalf("outcome %s (%s), want falsified", o.Status, o.Reason)
	}
	return o
}

// parityRun runs PARITY-001 as parityOutcome does, whatever the outcome.
func parityRun(t *testing.T, gpu cudart.Device, im properties.Impls) outcome.Outcome {
	t.Helper()
	cfg := properties.Config{Device: gpu, MaxElements: 64, Recorder: &outcome.Recorder{}, Loops: suite.Checks(60),
		Open: func(string) (cudart.Device, error) {
			return cudart.New(emu.New(emu.Config{}), cudart.DefaultOptions()), nil
		}}
	q := properties.RunQuiet(t.Name(), cfg, func(tb properties.TB) { properties.ParityContract(tb, im) })
	o := q.Outcomes()[properties.Parity]
	t.Logf("%s: %s", o.Status, o.Reason)
	// These failures are provoked: their fail files are no finding.
	removeFailFile(o.Failfile)
	return o
}

// moved returns v changed by at least 1 (and by |v| where that is more):
// beyond any parity bound, whatever v is.
func moved(v float32) float32 {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return 0
	}
	return float32(float64(v) + 1 + math.Abs(float64(v)))
}

// onGPU reports whether dev is the stand-in GPU.
func onGPU(dev cudart.Device) bool { return dev.Info().Backend == "gpu" }

// A GPU whose bits change from launch to launch, the emulator's not: the
// disagreement is the GPU's non-determinism, named with the element and
// the GPU's two values, not the emulator's fault.
func TestParityClassifiesANonDeterministicGPU(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls, first, second := 0, float32(0), float32(0)
	impl := properties.RMSNormForwardOp.Func(func(dev cudart.Device, a *op.RMSNormForwardArgs) error {
		err := kernels.RMSNormFwd.RMSNormForward(dev, a)
		if err == nil && onGPU(dev) {
			mu.Lock()
			defer mu.Unlock()
			// Every other launch on the GPU moves its last element.
			if calls++; calls%2 == 1 {
				v := a.Y[len(a.Y)-1]
				first, a.Y[len(a.Y)-1] = moved(v), moved(v)
			} else {
				second = a.Y[len(a.Y)-1]
			}
		}
		return err
	}, kernels.RMSNormFwd)
	// No one GPU result to reproduce: inconclusive, not falsified (the
	// determinism prediction is the one that fails).
	o := parityRun(t, &asGPU{Device: openEmu(t)}, properties.Impls{impl})
	if o.Status != outcome.Inconclusive || o.NonDeterministic == "" {
		t.Errorf("outcome %s (non-deterministic %q), want inconclusive, flagged non-deterministic (a report refuses an inconclusive failure without the flag)", o.Status, o.NonDeterministic)
	}
	mu.Lock()
	values := fmt.Sprintf("%g (%08x) vs %g (%08x)", first, math.Float32bits(first), second, math.Float32bits(second))
	mu.Unlock()
	for _, want := range []string{"emulator vs gpu (GPU non-deterministic)",
		"the GPU is non-deterministic, the emulator not at fault", "GPU run 1 and GPU run 2 differ at y[row ", values} {
		if !strings.Contains(o.Reason, want) {
			t.Errorf("reason %q lacks %q", o.Reason, want)
		}
	}
	if strings.Contains(o.Reason, "real disagreement") {
		t.Errorf("reason %q calls it a real disagreement", o.Reason)
	}
}

// A GPU that computes other bits than the emulator, the same every time,
// for a kernel with no approximate instruction: a real disagreement.
func TestParityClassifiesARealDisagreement(t *testing.T) {
	t.Parallel()
	impl := properties.RMSNormForwardOp.Func(func(dev cudart.Device, a *op.RMSNormForwardArgs) error {
		err := kernels.RMSNormFwd.RMSNormForward(dev, a)
		if err == nil && onGPU(dev) {
			a.Y[0] = moved(a.Y[0])
		}
		return err
	}, kernels.RMSNormFwd)
	o := parityOutcome(t, &asGPU{Device: openEmu(t)}, properties.Impls{impl})
	for _, want := range []string{"emulator vs gpu (real disagreement)", "a real disagreement: the GPU repeats its bits over runs 1 to 3 and the emulator under schedule seeds 0 to 2"} {
		if !strings.Contains(o.Reason, want) {
			t.Errorf("reason %q lacks %q", o.Reason, want)
		}
	}
}

// The same for a kernel with approximate instructions the emulator does
// not compute as the GPU (an rsqrt.approx.f64, put into a copy of the RoPE
// forward's PTX that the implementation lists): the disagreement names them
// with their PTX lines, as the likely cause, past the parity bound too.
func TestParityClassifiesAnUnmodelledInstruction(t *testing.T) {
	t.Parallel()
	k := *kernels.RoPEFwdBatched.K
	k.PTX = withUnmodelled(t, k.PTX, k.Entry)
	impl := properties.RoPEForwardOp.Func(func(dev cudart.Device, a *op.RoPEForwardArgs) error {
		err := kernels.RoPEFwdBatched.RoPEForward(dev, a)
		if err == nil && onGPU(dev) {
			a.Y[0] = moved(a.Y[0])
		}
		return err
	}, kernelList{&k})
	o := parityOutcome(t, &asGPU{Device: openEmu(t)}, properties.Impls{impl})
	wants := []string{"emulator vs gpu (unmodelled approximate instruction)",
		"the GPU repeats its bits over runs 1 to 3 and the emulator under schedule seeds 0 to 2; approximate instructions the emulator does not compute as the GPU does: "}
	as, err := ptx.Approximations(k.PTX)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if !a.Modelled && a.Function == k.Entry {
			wants = append(wants, a.String())
		}
	}
	if len(wants) == 2 {
		t.Fatalf("%s has no unmodelled approximate instruction: the test needs one", k.Entry)
	}
	for _, want := range wants {
		if !strings.Contains(o.Reason, want) {
			t.Errorf("reason %q lacks %q", o.Reason, want)
		}
	}
}

// On a GPU of another compute capability than the one the emulator's
// models were measured on, every approximate instruction of the kernel may
// be computed otherwise: a disagreement through the RoPE forward's
// ex2.approx.f32, modelled for sm_90, names that instruction and both
// architectures rather than a real disagreement.
func TestParityNamesAnotherArchitecture(t *testing.T) {
	t.Parallel()
	impl := properties.RoPEForwardOp.Func(func(dev cudart.Device, a *op.RoPEForwardArgs) error {
		err := kernels.RoPEFwdBatched.RoPEForward(dev, a)
		if err == nil && onGPU(dev) {
			a.Y[0] = moved(a.Y[0])
		}
		return err
	}, kernels.RoPEFwdBatched)
	for _, c := range []struct{ cc, want string }{
		{"8.0", "emulator vs gpu (unmodelled approximate instruction)"},
		{"9.0", "emulator vs gpu (real disagreement)"},
	} {
		o := parityOutcome(t, &asGPU{Device: openEmu(t), cc: c.cc}, properties.Impls{impl})
		wants := []string{c.want}
		if c.cc != "9.0" {
			wants = append(wants, "as compute capability 9.0 (sm_90) does, and this GPU's is 8.0", "ex2.approx.f32 (PTX line")
		}
		for _, want := range wants {
			if !strings.Contains(o.Reason, want) {
				t.Errorf("compute capability %s: reason %q lacks %q", c.cc, o.Reason, want)
			}
		}
	}
}

// deviceParityOutcome runs MULTI-DEVICE-PARITY-001 on im over two
// emulator devices, ordinals 0 and 1, and returns its outcome.
func deviceParityOutcome(t *testing.T, im func(second cudart.Device) properties.Impls) outcome.Outcome {
	t.Helper()
	var devs []cudart.Device
	for i := range 2 {
		d := cudart.New(emu.Open(i, emu.Options{}), cudart.DefaultOptions())
		t.Cleanup(func() { d.Close() })
		devs = append(devs, d)
	}
	cfg := properties.Config{Device: devs[0], Devices: devs, MaxElements: 64, Recorder: &outcome.Recorder{}, Loops: suite.Checks(60)}
	q := properties.RunQuiet(t.Name(), cfg, func(tb properties.TB) { properties.DeviceParityContract(tb, im(devs[1])) })
	o := q.Outcomes()[properties.MultiDeviceParity]
	t.Logf("%s: %s", o.Status, o.Reason)
	removeFailFile(o.Failfile) // a provoked failure's
	if o.Status != outcome.Falsified {
		t.Fatalf("outcome %s (%s), want falsified", o.Status, o.Reason)
	}
	return o
}

// MULTI-DEVICE-PARITY-001 calls a device whose bits change from launch to
// launch non-deterministic, naming the element and its two values, and one
// that repeats other bits than the first device a real disagreement.
func TestDeviceParityClassifies(t *testing.T) {
	t.Parallel()
	t.Run("non-deterministic", func(t *testing.T) {
		var mu sync.Mutex
		calls, first, second := 0, float32(0), float32(0)
		o := deviceParityOutcome(t, func(dev1 cudart.Device) properties.Impls {
			return properties.Impls{properties.RMSNormForwardOp.Func(func(dev cudart.Device, a *op.RMSNormForwardArgs) error {
				err := kernels.RMSNormFwd.RMSNormForward(dev, a)
				if err == nil && dev == dev1 {
					mu.Lock()
					defer mu.Unlock()
					// Every other launch on device 1 moves its last element.
					if calls++; calls%2 == 1 {
						first = moved(a.Y[len(a.Y)-1])
						a.Y[len(a.Y)-1] = first
					} else {
						second = a.Y[len(a.Y)-1]
					}
				}
				return err
			}, kernels.RMSNormFwd)}
		})
		mu.Lock()
		values := fmt.Sprintf("%g (%08x) vs %g (%08x)", first, math.Float32bits(first), second, math.Float32bits(second))
		mu.Unlock()
		for _, want := range []string{"emu device 1 vs emu device 0 (emu device 1 non-deterministic)",
			"emu device 1 is non-deterministic, not another device", "its run 1 and run 2 differ at y[row ", values} {
			if !strings.Contains(o.Reason, want) {
				t.Errorf("reason %q lacks %q", o.Reason, want)
			}
		}
	})
	t.Run("real", func(t *testing.T) {
		o := deviceParityOutcome(t, func(dev1 cudart.Device) properties.Impls {
			return properties.Impls{properties.RMSNormForwardOp.Func(func(dev cudart.Device, a *op.RMSNormForwardArgs) error {
				err := kernels.RMSNormFwd.RMSNormForward(dev, a)
				if err == nil && dev == dev1 {
					a.Y[0] = moved(a.Y[0])
				}
				return err
			}, kernels.RMSNormFwd)}
		})
		want := "emu device 1 vs emu device 0 (real disagreement): element 0 (row 0, col 0): bits differ"
		if !strings.Contains(o.Reason, want) || !strings.Contains(o.Reason, "each repeat their own bits over runs 1 to 3") {
			t.Errorf("reason %q lacks %q or the evidence", o.Reason, want)
		}
	})
}

// A kernel whose float atomics add in the order of the schedule (the
// Triton RMSNorm backward's dγ), on a GPU that schedules every launch its
// own way: PARITY-001 finds the GPU non-deterministic, with no device
// that lies about its bits.
func TestParityClassifiesAScheduleDependentKernel(t *testing.T) {
	t.Parallel()
	b, err := binding.Load("../binding/testdata/foreign/triton/rmsnorm_bwd_atomic.binding.yaml")
	if err != nil {
		t.Fatal(err)
	}
	gpu := &asGPU{Device: openEmu(t), seed: func(n int) int64 { return int64(n + 1) }}
	// A GPU that does not repeat its bits leaves parity inconclusive. A
	// failure found under one GPU schedule need not replay under the next:
	// then inconclusive too, as a non-reproducing failure is.
	o := parityRun(t, gpu, properties.Impls{b.Impl()})
	switch gpuND := strings.Contains(o.Reason, "(GPU non-deterministic)"); {
	case gpuND && (o.Status != outcome.Inconclusive || o.NonDeterministic == ""):
		t.Fatalf("outcome %s (%s), want inconclusive: the GPU does not repeat its bits", o.Status, o.Reason)
	case !gpuND && o.Status != outcome.Falsified && (o.Status != outcome.Inconclusive || o.NonDeterministic == ""):
		t.Fatalf("outcome %s (%s), want falsified, or inconclusive as a failure that did not replay", o.Status, o.Reason)
	}
	// Rarely, the shrunk case's few orders repeat over the GPU's three
	// runs: then the emulator's schedules show the same dependence.
	want := regexp.MustCompile(`emulator vs gpu \(GPU non-deterministic\): .*GPU run 1 and GPU run [23] differ at dgamma\[\d+\]: ` +
		`|emulator vs gpu \(emulator non-deterministic under schedules\): .*under schedule seed [12] differ at dgamma\[\d+\]: `)
	if !want.MatchString(o.Reason) {
		t.Errorf("reason %q does not match %q", o.Reason, want)
	}
}

// The same kernel on a GPU that schedules every launch alike (seed 7)
// repeats its bits, but the emulator's differ from schedule to schedule:
// the kernel is schedule-dependent, which the emulator shows, or, where
// the shrunk case's few orders met none of the emulator's schedules, the
// float atomics say (never a real disagreement).
func TestParityClassifiesScheduleDependenceOnTheEmulator(t *testing.T) {
	t.Parallel()
	b, err := binding.Load("../binding/testdata/foreign/triton/rmsnorm_bwd_atomic.binding.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := parityOutcome(t, &asGPU{Device: openEmu(t), seed: func(int) int64 { return 7 }}, properties.Impls{b.Impl()})
	want := regexp.MustCompile(`emulator vs gpu \(emulator non-deterministic under schedules\): .*the kernel's result depends on the schedule, as it may on a GPU: the emulator under schedule seed 0 and the emulator under schedule seed [12] differ at dgamma\[\d+\]: ` +
		`|emulator vs gpu \(schedule-dependent float atomics\): .*the kernel adds floats atomically \(atom\.global\.gpu\.acq_rel\.add\.f32, PTX line \d+ of rmsnorm_bwd_atomic_kernel\)`)
	if !want.MatchString(o.Reason) {
		t.Errorf("reason %q does not match %q", o.Reason, want)
	}
}

// PARITY-001 names a bound kernel's float atomic with its qualifiers,
// Triton's acq_rel included, and its PTX line.
func TestParityNamesTritonFloatAtomics(t *testing.T) {
	t.Parallel()
	b, err := binding.Load("../binding/testdata/foreign/triton/rmsnorm_bwd_atomic.binding.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := properties.FloatAtomicSite(b.Impl())
	if !strings.HasPrefix(got, "atom.global.gpu.acq_rel.add.f32, PTX line ") || !strings.HasSuffix(got, " of rmsnorm_bwd_atomic_kernel") {
		t.Errorf("float atomic site %q", got)
	}
}

// kernelList describes an implementation by the kernels it lists.
type kernelList []*kernels.Kernel

func (l kernelList) Kernels() []*kernels.Kernel { return l }

// withUnmodelled returns src with an rsqrt.approx.f64 (whose error the
// PTX ISA does not bound: the emulator computes it exactly, not as sm_90)
// at the start of entry's body.
func withUnmodelled(t *testing.T, src []byte, entry string) []byte {
	t.Helper()
	s := string(src)
	i := strings.Index(s, ".entry "+entry+"(")
	if i < 0 {
		t.Fatalf("no entry %s", entry)
	}
	j := strings.Index(s[i:], "{")
	if j < 0 {
		t.Fatalf("entry %s has no body", entry)
	}
	j += i + 1
	return []byte(s[:j] + "\n\t.reg .f64 %unmodx<2>;\n\trsqrt.approx.f64 %unmodx1, %unmodx0;" + s[j:])
}
