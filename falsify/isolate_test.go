package falsify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/cudart/emu"
	"github.com/ptxprop/ptxprop/properties/suite"
	"github.com/ptxprop/ptxprop/reports"
)

// Workers and isolation. Mutants can run in child processes of the test
// binary (TestChild), for two reasons:
//
//   - isolation: on a GPU a kernel fault (an illegal address, a trap)
//     leaves CUDA unusable in the whole process (see package cudart/gpu),
//     and a hung kernel poisons the device; every mutant after it would
//     "die" of it. A child reports each result as it finishes and exits as
//     soon as its device is unusable; the parent starts a new child for the
//     mutants left.
//   - parallelism: the emulator runs one launch at a time per device and
//     rapid v1.3.0 keeps its check count and seed process-wide (a contract
//     run's own are set by suite.RunContract, one run at a time), so
//     mutants run side by side only in separate processes.
//
// The child runs with the parent session's backend and devices, whatever
// the process's flags say (childArgs), and says "ready" on descriptor 4 once
// they are open. The parent then hands out one mutant at a time over a pipe
// (file descriptor 3 in the child) and reads each result back as a JSON
// line (descriptor 4).

// workers returns how many children run mutants, 0 for in-process.
func workers(s *Session) int {
	gpu := s.Device().Info().Backend == "gpu"
	n := opts.Workers
	if n <= 0 {
		n = len(s.Devices())
		if !gpu {
			n = min(runtime.NumCPU(), 4)
		}
	}
	switch opts.Isolate {
	case "never":
		return 0
	case "always":
		return n
	}
	if gpu || n > 1 {
		return n
	}
	return 0
}

// runMutants runs ms, in this process or in child processes, calling
// report (serialised) as each result arrives. Results keep ms's order.
func runMutants(t *testing.T, s *Session, ms []Mutant, report func(Result)) []Result {
	t.Helper()
	n := workers(s)
	if n == 0 {
		var out []Result
		for _, m := range ms {
			r := s.Run(m)
			out = append(out, r)
			report(r)
		}
		return out
	}
	n = min(n, len(ms))
	out := make([]Result, len(ms))
	queue := make(chan int, len(ms))
	for i := range ms {
		queue <- i
	}
	close(queue)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var fatal []string
	devs := s.Devices()
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := worker(s, ms, queue, childDevices(devs, w%len(devs)), func(i int, r Result) {
				mu.Lock()
				defer mu.Unlock()
				out[i] = r
				report(r)
			}); err != nil {
				mu.Lock()
				fatal = append(fatal, err.Error())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(fatal) > 0 {
		t.Fatalf("child processes failed: %s", strings.Join(fatal, "; "))
	}
	return out
}

// child is one running child process.
type child struct {
	cmd    *exec.Cmd
	jobs   io.WriteCloser
	res    *bufio.Reader
	stderr *bytes.Buffer
}

// childDevices is the -ptxprop.devices of the child that runs mutants on
// devs[k]: that device first, then the others (MULTI-DEVICE-PARITY-001
// compares them).
func childDevices(devs []cudart.Info, k int) string {
	if len(devs) == 1 {
		return fmt.Sprintf("%d-%d", devs[k].Ordinal, devs[k].Ordinal)
	}
	list := []string{fmt.Sprint(devs[k].Ordinal)}
	for i, d := range devs {
		if i != k {
			list = append(list, fmt.Sprint(d.Ordinal))
		}
	}
	return strings.Join(list, ",")
}

// childArgs are the arguments of a child running s's mutants on the
// devices a -ptxprop.devices value selects (childDevices): this process's
// flags, then the settings of s that decide where and how a mutant runs.
// Those come last (the last of a repeated flag wins) because s need not run
// with this process's flags: a test opens emulator devices in a binary
// given -ptxprop.backend=gpu (the GPU nightly), and a child left to the
// flags would open the GPU instead, or nothing.
func childArgs(s *Session, devices string) []string {
	args := []string{"-test.run=^TestChild$", "-test.timeout=0", "-ptxprop.child", "-ptxprop.devices=" + devices}
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "test.run", "test.timeout", "ptxprop.child", "test.v", "test.count", "test.paniconexit0", "test.parallel", "ptxprop.devices":
			return
		}
		args = append(args, "-"+f.Name+"="+f.Value.String())
	})
	backend := s.opts.Run.Backend
	if backend == "" || backend == "auto" {
		backend = s.dev.Info().Backend // what auto chose here: the child must not choose again
	}
	return append(args, "-ptxprop.backend="+backend,
		fmt.Sprintf("-ptxprop.emu-adversarial=%d", s.opts.Run.EmuAdversarial),
		fmt.Sprintf("-ptxprop.max-elements=%d", s.opts.Run.MaxElements))
}

// ready is the line a child writes on its results pipe once its devices
// are open, before it reads a job.
const ready = "ready"

// startChild starts a child process running s's mutants on the devices a
// -ptxprop.devices value selects (childDevices) and waits until it has
// opened them. A child that cannot is an error of the harness, not the
// verdict on the mutant it would have run.
func startChild(s *Session, devices string) (*child, error) {
	args := childArgs(s, devices)
	jobR, jobW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	resR, resW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c := &child{cmd: exec.Command(os.Args[0], args...), jobs: jobW, res: bufio.NewReaderSize(resR, 1<<20), stderr: &bytes.Buffer{}}
	c.cmd.Stdout, c.cmd.Stderr = c.stderr, c.stderr
	c.cmd.ExtraFiles = []*os.File{jobR, resW}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	jobR.Close()
	resW.Close()
	if line, err := c.res.ReadString('\n'); err != nil || strings.TrimSpace(line) != ready {
		werr := c.stop()
		return nil, fmt.Errorf("the child process for devices %s did not start (%v): %s", devices, werr, tail(c.stderr.String(), 400))
	}
	return c, nil
}

// stop closes the child's job pipe and waits for it.
func (c *child) stop() error {
	c.jobs.Close()
	return c.cmd.Wait()
}

// worker runs mutants from queue in children on devices (childDevices),
// restarting a child that died or found its device unusable.
func worker(s *Session, ms []Mutant, queue <-chan int, devices string, done func(int, Result)) error {
	var c *child
	defer func() {
		if c != nil {
			c.stop()
		}
	}()
	fresh := 0 // mutants run by the current child
	for i := range queue {
		for {
			if c == nil {
				var err error
				if c, err = startChild(s, devices); err != nil {
					return err
				}
				fresh = 0
			}
			if _, err := fmt.Fprintln(c.jobs, ms[i].String()); err == nil {
				line, err := c.res.ReadBytes('\n')
				if err == nil {
					var r Result
					if err := json.Unmarshal(line, &r); err != nil {
						return fmt.Errorf("child result for %v: %w", ms[i], err)
					}
					done(i, r)
					fresh++
					break
				}
			}
			// The child is gone: it died running ms[i], or found its device
			// unusable after the previous mutant and exited.
			werr := c.stop()
			msg := tail(c.stderr.String(), 400)
			c = nil
			if fresh == 0 {
				m := ms[i]
				done(i, Result{Mutant: m.String(), Kind: m.Kind(), Kernel: m.Target(), Description: m.Description(),
					Status: reports.MutantError, Repro: s.opts.Repro + m.String(), Device: firstOrdinal(devices),
					Reason: fmt.Sprintf("the child process running it died (%v): %s", werr, msg)})
				break
			}
		}
	}
	return nil
}

// firstOrdinal is the device a childDevices value runs mutants on.
func firstOrdinal(devices string) int {
	var o int
	fmt.Sscanf(devices, "%d", &o)
	return o
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestChild is the child process's side: it runs the mutants named on
// descriptor 3, one per line, writes each result as a JSON line on
// descriptor 4, and exits when the job pipe closes or its device is no
// longer usable.
func TestChild(t *testing.T) {
	if !opts.Child {
		t.Skip("runs only as a child process of TestNamedMutants or TestGenericMutants")
	}
	jobs, res := os.NewFile(3, "jobs"), os.NewFile(4, "results")
	defer res.Close()
	if session == nil {
		// Not getSession: a child without its devices must fail, not skip
		// (the parent reports its output).
		s, err := SessionOn(opts, *suite.T(t).Config())
		if err != nil {
			t.Fatalf("opening the devices: %v", err)
		}
		session = s
	}
	s := session
	if _, err := fmt.Fprintln(res, ready); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(jobs)
	for sc.Scan() {
		m, err := ParseMutant(sc.Text())
		if err != nil {
			t.Fatal(err)
		}
		r := s.Run(m)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := res.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		if err := healthy(s.Device()); err != nil {
			t.Logf("stopping: device unusable after %v: %v", m, err)
			return
		}
	}
}

// healthy checks that the device still allocates, copies and frees, and
// asks a backend that can tell (the GPU's Usable) whether a sticky fault
// left it unusable: a Device may keep a small write as a pending store and
// answer the read back from it, so the copies alone need not reach the
// driver, and a child that carried on with a faulted GPU would fail to load
// every later mutant.
func healthy(dev cudart.Device) error {
	if u, ok := dev.Backend().(interface{ Usable() error }); ok {
		if err := u.Usable(); err != nil {
			return err
		}
	}
	b, err := dev.Alloc(cudart.F32, 1)
	if err != nil {
		return err
	}
	defer dev.Free(b)
	if err := dev.Write(b, []float32{1.5}); err != nil {
		return err
	}
	got := make([]float32, 1)
	if err := dev.Read(got, b); err != nil {
		return err
	}
	if got[0] != 1.5 {
		return fmt.Errorf("wrote 1.5 to the device, read back %v", got[0])
	}
	return nil
}

// faulted is a backend that reports a sticky fault through Usable, as the
// GPU's does after a mutant's kernel fault, while its copies still work.
type faulted struct{ cudart.Backend }

func (faulted) Usable() error { return fmt.Errorf("an earlier kernel fault") }

// A child must stop after a mutant that left its device unusable, even when
// the device's own copies still succeed (a small write kept as a pending
// store answers the read back without the driver).
func TestHealthyAsksUsable(t *testing.T) {
	if err := healthy(cudart.New(emu.New(emu.Config{}), cudart.DefaultOptions())); err != nil {
		t.Fatalf("healthy on a working emulator: %v", err)
	}
	if err := healthy(cudart.New(faulted{emu.New(emu.Config{})}, cudart.DefaultOptions())); err == nil {
		t.Fatal("healthy passed a device whose backend reports a sticky fault")
	}
}
