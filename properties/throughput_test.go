package properties_test

import (
	"flag"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/properties"
	"github.com/ptxprop/ptxprop/properties/suite"
)

var throughputWorkers = flag.Int("throughput.workers", 0, "goroutines running checks side by side in BenchmarkThroughput's parallel runs (0: 4×GOMAXPROCS)")

// BenchmarkThroughput measures checks per second at fixed shapes, the figure
// to set beside scripts/torch_baseline.py on the same machine: a value check
// is one RMSNorm forward on the device compared element by element with the
// float64 oracle under the derived bound; a gradient check is one batched
// backward compared with the analytic oracle and, along a random direction,
// with Richardson finite differences of the float64 forward.
//
// Each shape runs twice: workers=1 is one rapid run, check after check;
// workers=N runs N rapid runs side by side (as `go test` runs the contracts
// in parallel), sharing the one device, so the float64 oracle and bounds of
// one check overlap with the device work of another. N defaults to four
// times GOMAXPROCS: a worker waiting for the device leaves its CPU to
// another (on the H200's 16 CPUs at 64×1024, value checks/s were 4152 with
// 16 workers, 5511 with 32; after later changes, in one run, 6842 with 32,
// 7165 with 48 and 7566 with 64; once the host copies were pooled, 96 and
// 128 workers gave no more than 64: 7488 and 7196 against 7264, then 7286
// and 6942 against 7324, the run's CPUs being all in use).
//
// Besides checks/s each run reports, per check: the Device's calls
// (dev-calls), the time some call of it was at the backend (dev-busy), the
// time callers waited for the Device's lock (dev-wait) and the time it was
// held (dev-lock: when dev-lock·checks/s nears 1 s, the lock limits the
// run), the process's CPU time (cpu: when cpu·checks/s nears GOMAXPROCS
// seconds, the host's CPUs limit the run) and, on the GPU, the time the
// backend's one-at-a-time section was held (held: when held·checks/s nears
// 1 s, that section limits it) and the time callers waited for it
// (sem-wait: large while held·checks/s stays well below 1 s, the hand-off
// from one holder to the next limits it).
func BenchmarkThroughput(b *testing.B) {
	par := *throughputWorkers
	if par <= 0 {
		par = 4 * runtime.GOMAXPROCS(0)
	}
	for _, s := range [][2]int{{16, 256}, {64, 1024}} {
		rows, hidden := s[0], s[1]
		for _, w := range []int{1, par} {
			b.Run(fmt.Sprintf("value/%dx%d/workers=%d", rows, hidden, w), func(b *testing.B) {
				run(b, w, func(t properties.TB) { properties.FixedShapeValueCheck(t, kernels.RMSNormFwd, rows, hidden) })
			})
			b.Run(fmt.Sprintf("gradient/%dx%d/workers=%d", rows, hidden, w), func(b *testing.B) {
				run(b, w, func(t properties.TB) { properties.FixedShapeGradientCheck(t, kernels.RMSNormBwdChunk, rows, hidden) })
			})
		}
	}
}

// run warms up with one short run, then runs b.N checks split over workers
// goroutines and reports checks/s.
func run(b *testing.B, workers int, f func(properties.TB)) {
	tb := suite.T(b)
	restore := suite.SetRapid(suite.Rapid{Checks: 10})
	f(tb) // warm up: module load, first allocations
	restore()
	per := (b.N + workers - 1) / workers
	defer suite.SetRapid(suite.Rapid{Checks: per})()
	dev := tb.Config().Device
	if dev == nil {
		b.Fatal(tb.Config().NoDevice)
	}
	before := dev.Stats()
	cpuBefore := suite.ProcessCPU()
	h, _ := dev.Backend().(interface {
		Held() time.Duration
		SemWait() time.Duration
	})
	var heldBefore, semBefore time.Duration
	if h != nil {
		heldBefore, semBefore = h.Held(), h.SemWait()
	}
	b.ResetTimer()
	if workers == 1 {
		f(tb)
	} else {
		var wg sync.WaitGroup
		tbs := make([]*workerTB, workers)
		for i := range tbs {
			tbs[i] = &workerTB{TB: tb}
			wg.Add(1)
			go func(t *workerTB) {
				defer wg.Done()
				f(t)
			}(tbs[i])
		}
		wg.Wait()
		b.StopTimer()
		for _, t := range tbs {
			if t.failed {
				b.Fatalf("a worker's checks failed: %s", t.msg)
			}
		}
	}
	n := float64(per * workers)
	b.ReportMetric(n/b.Elapsed().Seconds(), "checks/s")
	after := dev.Stats()
	b.ReportMetric(float64(after.Handoffs-before.Handoffs)/n, "dev-calls/check")
	b.ReportMetric((after.Busy-before.Busy).Seconds()*1e6/n, "dev-busy-µs/check")
	b.ReportMetric((after.LockWait-before.LockWait).Seconds()*1e6/n, "dev-wait-µs/check")
	b.ReportMetric((after.LockHeld-before.LockHeld).Seconds()*1e6/n, "dev-lock-µs/check")
	if c := suite.ProcessCPU(); c > 0 { // with GOMAXPROCS, how near the run is to being CPU-bound
		b.ReportMetric((c-cpuBefore).Seconds()*1e6/n, "cpu-µs/check")
	}
	if h != nil { // the backend's one-at-a-time section (cudart/gpu: sem)
		b.ReportMetric((h.Held()-heldBefore).Seconds()*1e6/n, "held-µs/check")
		b.ReportMetric((h.SemWait()-semBefore).Seconds()*1e6/n, "sem-wait-µs/check")
	}
}

// workerTB lets a contract run on a goroutine other than the benchmark's:
// a failure is recorded and ends that goroutine (Goexit runs its defers),
// and the benchmark reports it once every worker has stopped.
type workerTB struct {
	properties.TB
	mu     sync.Mutex
	failed bool
	msg    string
}

func (t *workerTB) Errorf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = true
	if t.msg == "" {
		t.msg = fmt.Sprintf(format, args...)
	}
}

func (t *workerTB) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}

func (t *workerTB) Fatal(args ...any) { t.Fatalf("%s", fmt.Sprint(args...)) }
func (t *workerTB) Error(args ...any) { t.Errorf("%s", fmt.Sprint(args...)) }
func (t *workerTB) FailNow()          { t.Fatalf("FailNow") }
func (t *workerTB) Fail()             { t.Errorf("Fail") }
func (t *workerTB) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}
func (t *workerTB) SkipNow()                         { runtime.Goexit() }
func (t *workerTB) Skipf(format string, args ...any) { runtime.Goexit() }
func (t *workerTB) Skip(args ...any)                 { runtime.Goexit() }
