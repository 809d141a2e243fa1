package suite

// The cost probe (package cost) runs when the suite runs on the emulator:
// a GPU run records no costs. In a sharded run it runs on shard 0 alone,
// as merge refuses one cost from two shards.

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/ptxprop/ptxprop/cudart"
	"github.com/ptxprop/ptxprop/kernels"
	"github.com/ptxprop/ptxprop/kernels/cost"
	"github.com/ptxprop/ptxprop/reports"
)

// costMemo keeps the probe's counts by kernel name and PTX hash for the
// process: they are a function of the two, and the suite's own tests build
// many reports.
var costMemo struct {
	sync.Mutex
	m map[string][]reports.Cost
}

// probeCosts returns the costs of the kernels of ks that are ptxprop's
// own, with the committed PTX (a kernel of that name with other PTX is
// not the one the probe would launch: it gets none), measuring each once
// a process; a kernel the probe cannot launch is named in the returned
// notes.
func probeCosts(ks []reports.Kernel) (costs []reports.Cost, notes []string) {
	costMemo.Lock()
	defer costMemo.Unlock()
	if costMemo.m == nil {
		costMemo.m = map[string][]reports.Cost{}
	}
	for _, rk := range ks {
		if rk.Origin != reports.KernelOurs {
			continue
		}
		k, ok := kernels.Lookup(rk.Name)
		if !ok {
			continue
		}
		if sum := sha256.Sum256(k.PTX); rk.PTXSHA256 != hex.EncodeToString(sum[:]) {
			continue
		}
		key := rk.Name + "@" + rk.PTXSHA256
		cs, ok := costMemo.m[key]
		if !ok {
			var err error
			if cs, err = cost.Measure(k); err != nil {
				notes = append(notes, err.Error())
			}
			costMemo.m[key] = cs
		}
		costs = append(costs, cs...)
	}
	return costs, notes
}

// addCosts adds to rep the cost probe's counts of its kernels when the run
// is on the emulator (info, of the run's first device) and is not a shard
// other than shard 0; a kernel the probe could not launch is a note of the
// run.
func (r *runner) addCosts(rep *reports.Report, info cudart.Info) {
	if len(r.devs) == 0 || info.Backend != "emu" || r.shard != nil && r.shard.Index != 0 {
		return
	}
	costs, notes := probeCosts(rep.Kernels)
	rep.Costs = append(rep.Costs, costs...)
	for _, n := range notes {
		rep.Run.Notes = append(rep.Run.Notes, "cost probe: "+n)
	}
}

// mergeCosts puts costs into old, replacing its count of the same kernel
// and shape: a merge joins reports of one commit, whose counts agree.
func mergeCosts(old *reports.Report, costs []reports.Cost) {
	for _, c := range costs {
		if o := old.Cost(c.Kernel, c.Shape); o != nil {
			*o = c
		} else {
			old.Costs = append(old.Costs, c)
		}
	}
}
