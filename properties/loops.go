package properties

import (
	"fmt"
	"runtime"
	"sync"

	"pgregory.net/rapid"

	"github.com/ptxprop/ptxprop/properties/outcome"
)

// RapidLoop is one rapid loop of a contract run: rapid.Check from the base
// seed Seed (its check i draws from Seed and i, as rapid does) for Checks
// checks, the number rapid runs (after -short's cut). Checks 0 leaves
// rapid's settings as they are.
type RapidLoop struct {
	Seed   uint64
	Checks int
}

// RapidLoops splits a contract run's checks over parallel rapid loops. A
// runner that owns rapid's settings (package suite) supplies it: rapid
// v1.3.0 reads its seed and check count from package variables when a
// rapid.Check starts, so only the runner can give each loop its own.
type RapidLoops interface {
	// Plan returns the loops of a contract run that starts now, loop 0
	// first: its seed is the run's base seed, so that a single loop's
	// reproductions replay it. Their checks sum to the run's.
	Plan() []RapidLoop
	// Start calls start, which starts rapid.Check on a goroutine of its
	// own, with rapid set to l's seed and checks, and returns once the
	// channel start returns is closed: rapid has then read its settings
	// (its first property call, or its end), which Start may restore.
	Start(l RapidLoop, start func() <-chan struct{})
}

// oneLoop is the plan without a runner's RapidLoops: one rapid.Check
// under rapid's settings as they are, from the base seed cfg.Seed.
type oneLoop struct{ seed uint64 }

func (o oneLoop) Plan() []RapidLoop { return []RapidLoop{{Seed: o.seed}} }

func (oneLoop) Start(_ RapidLoop, start func() <-chan struct{}) { <-start() }

// runLoops runs prop as the rapid loops of plan, each on its own goroutine
// with the TB tb(k), and returns when every loop has ended. A panic out of
// rapid.Check (the harness's own failure: rapid recovers the property's)
// ends its loop and is returned, the first one.
func runLoops(starter RapidLoops, plan []RapidLoop, tb func(k int) rapid.TB, prop func(k int, rt *rapid.T)) (panicked any) {
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for k, l := range plan {
		wg.Add(1)
		starter.Start(l, func() <-chan struct{} {
			started := make(chan struct{})
			var once sync.Once
			ready := func() { once.Do(func() { close(started) }) }
			go func() {
				defer wg.Done()
				defer ready()
				defer func() {
					if p := recover(); p != nil {
						mu.Lock()
						if panicked == nil {
							panicked = p
						}
						mu.Unlock()
					}
				}()
				rapid.Check(tb(k), func(rt *rapid.T) {
					ready()
					prop(k, rt)
				})
			}()
			return started
		})
	}
	wg.Wait()
	return panicked
}

// perLoop holds a value of each rapid loop of a contract run, made at the
// loop's first use: what a contract's checks change and so must not share
// across loops that run at once (a device whose schedule a check sets).
// Loop 0 has first; later loops get make's, or first when make is nil.
type perLoop[V any] struct {
	first V
	make  func() (V, error)
	close func(V)
	mu    sync.Mutex
	made  map[int]V
}

// get returns loop k's value.
func (p *perLoop[V]) get(k int) (V, error) {
	if k == 0 || p.make == nil {
		return p.first, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.made[k]; ok {
		return v, nil
	}
	v, err := p.make()
	if err != nil {
		return v, fmt.Errorf("rapid loop %d: %w", k, err)
	}
	if p.made == nil {
		p.made = map[int]V{}
	}
	p.made[k] = v
	return v, nil
}

// of returns the value of o's loop; a value that cannot be made ends the
// contract run as an error (what says what it is).
func (p *perLoop[V]) of(o *Obs, what string) V {
	o.rt.Helper()
	v, err := p.get(o.loop)
	if err != nil {
		o.end(outcome.Errored, fmt.Sprintf("opening %s: %v", what, err))
		o.Fatalf("opening %s: %v", what, err)
	}
	return v
}

// closeMade closes the values made for loops after the first.
func (p *perLoop[V]) closeMade() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, v := range p.made {
		if p.close != nil {
			p.close(v)
		}
		delete(p.made, k)
	}
}

// loopTB is the TB rapid runs one loop on: it keeps what rapid says
// (captureTB), forwards logs and failures to the contract's TB, and ends
// its own goroutine on FailNow and SkipNow (the testing package allows a
// test's FailNow only on the test's goroutine).
type loopTB struct {
	captureTB
	out TB
}

func (l *loopTB) Helper()      { l.out.Helper() }
func (l *loopTB) Name() string { return l.out.Name() }

func (l *loopTB) Logf(format string, args ...any) {
	l.note(fmt.Sprintf(format, args...))
	l.out.Logf(format, args...)
}

func (l *loopTB) Log(args ...any) { l.Logf("%s", fmt.Sprint(args...)) }

func (l *loopTB) Errorf(format string, args ...any) {
	l.note(fmt.Sprintf(format, args...))
	l.Fail()
	l.out.Errorf(format, args...)
}

func (l *loopTB) Error(args ...any) { l.Errorf("%s", fmt.Sprint(args...)) }

func (l *loopTB) Fatalf(format string, args ...any) { l.Errorf(format, args...); runtime.Goexit() }
func (l *loopTB) Fatal(args ...any)                 { l.Error(args...); runtime.Goexit() }

func (l *loopTB) Fail() {
	l.mu.Lock()
	l.failed = true
	l.mu.Unlock()
}

func (l *loopTB) FailNow() { l.Fail(); l.out.Fail(); runtime.Goexit() }

func (l *loopTB) Failed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

func (l *loopTB) Skipf(format string, args ...any) {
	l.mu.Lock()
	l.skipped, l.skipReason = true, fmt.Sprintf(format, args...)
	l.mu.Unlock()
	l.out.Logf(format, args...)
	runtime.Goexit()
}

func (l *loopTB) Skip(args ...any) { l.Skipf("%s", fmt.Sprint(args...)) }
func (l *loopTB) SkipNow()         { l.Skipf("skipped") }
