package emu

import (
	"fmt"
	"math/bits"

	"github.com/ptxprop/ptxprop/cudart"
)

// Warp-synchronous operations (inst.sub for kWarpSync).
const (
	wsShflUp uint8 = iota
	wsShflDown
	wsShflBfly
	wsShflIdx
	wsVoteAll
	wsVoteAny
	wsVoteUni
	wsVoteBallot
	wsBarWarp
	wsMatchAny
	wsMatchAll
	wsRedux
	wsElect
)

// shflPoison is what a lane receives when it reads a lane that does not
// take part in the shuffle: the PTX ISA leaves the value undefined.
const shflPoison = 0x7FFFDEAD

func (in *inst) memberSlot() int32 { return in.e }

// warpSync executes a *.sync instruction for lanes m: at once when every
// non-exited lane of the membermask is here, jointly with lanes waiting at
// a compatible instruction (same operation, same membermask) when those
// complete the set, or else the lanes wait.
func (w *warp) warpSync(in *inst, m uint32) {
	l := w.l
	if m == 0 {
		w.next()
		return
	}
	mask := uint32(w.firstValue(in.e, m))
	for mm := m; mm != 0; mm &= mm - 1 {
		lane := bits.TrailingZeros32(mm)
		if uint32(w.regs[in.e*32+int32(lane)]) != mask {
			l.fault(cudart.ErrLaunch, w, in, lane, fmt.Sprintf("lanes of one warp execute %s with different membermasks (%#08x and %#08x)", in.src.Op, mask, uint32(w.regs[in.e*32+int32(lane)])))
			return
		}
	}
	if m&^mask != 0 {
		lane := bits.TrailingZeros32(m &^ mask)
		l.fault(cudart.ErrLaunch, w, in, lane, fmt.Sprintf("lane %d executes %s but is not in its membermask %#08x (undefined behaviour)", lane, in.src.Op, mask))
		return
	}
	if l.undefOn {
		w.checkDefined(in, in.e, m, "passes to "+in.src.Op+" a membermask")
	}
	need := mask & w.valid &^ w.exited
	if need&^m == 0 {
		for mm := m; mm != 0; mm &= mm - 1 {
			l.srcs[bits.TrailingZeros32(mm)] = in
		}
		w.execSync(in, m)
		w.next()
		return
	}
	avail := m | w.compatibleWaiting(in, mask)
	if need&^avail == 0 {
		others := avail &^ m
		w.gatherSources(in, m, others)
		w.execSync(in, avail)
		w.release(others)
		w.next()
		return
	}
	// Wait for the other lanes.
	w.syncWait |= m
	for mm := m; mm != 0; mm &= mm - 1 {
		w.lanePC[bits.TrailingZeros32(mm)] = w.pc
	}
	w.active &^= m
	if w.active != 0 {
		w.next()
	} else {
		w.regroup()
	}
}

// compatibleWaiting returns the lanes waiting at a warp-synchronous
// instruction with the same operation and membermask as in.
func (w *warp) compatibleWaiting(in *inst, mask uint32) uint32 {
	insts := w.l.k.insts
	var c uint32
	for mm := w.syncWait; mm != 0; mm &= mm - 1 {
		lane := bits.TrailingZeros32(mm)
		x := &insts[w.lanePC[lane]]
		if x.sig == in.sig && uint32(w.regs[x.e*32+int32(lane)]) == mask {
			c |= 1 << lane
		}
	}
	return c
}

func (w *warp) gatherSources(in *inst, group, others uint32) {
	insts := w.l.k.insts
	for mm := group; mm != 0; mm &= mm - 1 {
		w.l.srcs[bits.TrailingZeros32(mm)] = in
	}
	for mm := others; mm != 0; mm &= mm - 1 {
		lane := bits.TrailingZeros32(mm)
		w.l.srcs[lane] = &insts[w.lanePC[lane]]
	}
}

// release lets lanes that waited at a warp-synchronous instruction go on.
func (w *warp) release(lanes uint32) {
	w.syncWait &^= lanes
	for mm := lanes; mm != 0; mm &= mm - 1 {
		lane := bits.TrailingZeros32(mm)
		w.park(1<<lane, w.lanePC[lane]+1)
	}
}

// trySyncCompletion completes a warp-synchronous instruction whose missing
// lanes have exited. It reports whether lanes became runnable.
func (w *warp) trySyncCompletion() bool {
	insts := w.l.k.insts
	for mm := w.syncWait; mm != 0; mm &= mm - 1 {
		lane := bits.TrailingZeros32(mm)
		in := &insts[w.lanePC[lane]]
		mask := uint32(w.regs[in.e*32+int32(lane)])
		need := mask & w.valid &^ w.exited
		avail := w.compatibleWaiting(in, mask)
		if need&^avail == 0 && avail != 0 {
			w.gatherSources(in, 0, avail)
			w.execSync(in, avail)
			if w.l.err != nil {
				return false
			}
			w.release(avail)
			return true
		}
	}
	return false
}

// execSync performs the operation for the participating lanes p; lane i's
// operands come from w.l.srcs[i] (its own instruction).
func (w *warp) execSync(in *inst, p uint32) {
	l := w.l
	if l.b.taint != nil {
		w.taintSync(in, p)
	}
	src := &l.srcs
	regs := w.regs
	switch in.sub {
	case wsShflUp, wsShflDown, wsShflBfly, wsShflIdx:
		vals := &l.scratch
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			vals[lane] = regs[src[lane].a*32+int32(lane)]
		}
		type out struct {
			v  uint64
			ok bool
		}
		var res [32]out
		var undef, aUndef uint32
		if l.undefOn {
			for mm := p; mm != 0; mm &= mm - 1 {
				lane := bits.TrailingZeros32(mm)
				aUndef |= w.undef[src[lane].a] & (1 << lane)
			}
		}
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			s := src[lane]
			j, ok := shflSource(s.sub, lane, uint32(regs[s.b*32+int32(lane)]), uint32(regs[s.c*32+int32(lane)]))
			v := uint64(shflPoison)
			if p&(1<<j) != 0 {
				v = vals[j]
			}
			res[lane] = out{uint64(uint32(v)), ok}
			if l.undefOn && (aUndef>>j&1 != 0 || (w.undef[s.b]|w.undef[s.c])>>lane&1 != 0) {
				undef |= 1 << lane
			}
		}
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			s := src[lane]
			regs[s.d*32+int32(lane)] = res[lane].v
			if s.d2 >= 0 {
				setPred(w.preds, s.d2, lane, res[lane].ok)
			}
			if l.undefOn {
				w.setUndef(s.d, lane, undef>>lane&1 != 0)
				if s.d2 >= 0 {
					setPred(w.pundef, s.d2, lane, (w.undef[s.b]|w.undef[s.c])>>lane&1 != 0)
				}
			}
		}
	case wsVoteAll, wsVoteAny, wsVoteUni, wsVoteBallot:
		var ballot uint32
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			s := src[lane]
			if (w.preds[s.a]>>lane&1 != 0) != s.aneg {
				ballot |= 1 << lane
			}
		}
		var anyUndef bool
		if l.undefOn {
			for mm := p; mm != 0; mm &= mm - 1 {
				lane := bits.TrailingZeros32(mm)
				anyUndef = anyUndef || w.pundef[src[lane].a]>>lane&1 != 0
			}
		}
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			s := src[lane]
			if l.undefOn {
				if in.sub == wsVoteBallot {
					w.setUndef(s.d, lane, anyUndef)
				} else {
					setPred(w.pundef, s.d, lane, anyUndef)
				}
			}
			switch in.sub {
			case wsVoteBallot:
				regs[s.d*32+int32(lane)] = uint64(ballot)
			case wsVoteAll:
				setPred(w.preds, s.d, lane, ballot == p)
			case wsVoteAny:
				setPred(w.preds, s.d, lane, ballot != 0)
			case wsVoteUni:
				setPred(w.preds, s.d, lane, ballot == 0 || ballot == p)
			}
		}
	case wsBarWarp:
		w.syncEpoch = l.nextGen()
	case wsMatchAny, wsMatchAll:
		vals := &l.scratch
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			vals[lane] = src[lane].t.trunc(regs[src[lane].a*32+int32(lane)])
		}
		all := true
		first := vals[bits.TrailingZeros32(p)]
		for mm := p; mm != 0; mm &= mm - 1 {
			all = all && vals[bits.TrailingZeros32(mm)] == first
		}
		var res [32]uint64
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			if in.sub == wsMatchAll {
				if all {
					res[lane] = uint64(p)
				}
				continue
			}
			var same uint32
			for nn := p; nn != 0; nn &= nn - 1 {
				j := bits.TrailingZeros32(nn)
				if vals[j] == vals[lane] {
					same |= 1 << j
				}
			}
			res[lane] = uint64(same)
		}
		anyUndef := l.undefOn && w.anyUndef(p)
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			s := src[lane]
			regs[s.d*32+int32(lane)] = res[lane]
			if s.d2 >= 0 {
				setPred(w.preds, s.d2, lane, all)
			}
			if l.undefOn {
				w.setUndef(s.d, lane, anyUndef)
				if s.d2 >= 0 {
					setPred(w.pundef, s.d2, lane, anyUndef)
				}
			}
		}
	case wsRedux:
		var acc uint64
		firstLane := true
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			v := src[lane].t.ext(regs[src[lane].a*32+int32(lane)])
			if firstLane {
				acc, firstLane = v, false
			} else {
				acc = in.f2(acc, v)
			}
		}
		anyUndef := l.undefOn && w.anyUndef(p)
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			regs[src[lane].d*32+int32(lane)] = uint64(uint32(acc))
			if l.undefOn {
				w.setUndef(src[lane].d, lane, anyUndef)
			}
		}
	case wsElect:
		leader := bits.TrailingZeros32(p)
		for mm := p; mm != 0; mm &= mm - 1 {
			lane := bits.TrailingZeros32(mm)
			s := src[lane]
			if s.d >= 0 {
				regs[s.d*32+int32(lane)] = uint64(leader)
			}
			if s.d2 >= 0 {
				setPred(w.preds, s.d2, lane, lane == leader)
			}
		}
	}
}

// shflSource computes the source lane of a shuffle exactly as the PTX ISA
// defines it: b is the lane or offset, c packs the clamp value (bits 0-4)
// and the segment mask (bits 8-12). ok is false when the source is out of
// range, in which case the lane reads its own value.
func shflSource(mode uint8, lane int, b, c uint32) (int, bool) {
	bval := int(b & 0x1F)
	cval := int(c & 0x1F)
	segmask := int(c>>8) & 0x1F
	maxLane := lane&segmask | cval&^segmask
	minLane := lane & segmask
	var j int
	var ok bool
	switch mode {
	case wsShflUp:
		j = lane - bval
		ok = j >= maxLane
	case wsShflDown:
		j = lane + bval
		ok = j <= maxLane
	case wsShflBfly:
		j = lane ^ bval
		ok = j <= maxLane
	default:
		j = minLane | bval&^segmask
		ok = j <= maxLane
	}
	if !ok {
		j = lane
	}
	return j, ok
}

func setPred(preds []uint32, slot int32, lane int, v bool) {
	if v {
		preds[slot] |= 1 << lane
	} else {
		preds[slot] &^= 1 << lane
	}
}

// anyUndef reports whether operand a of any participating lane is undefined.
func (w *warp) anyUndef(p uint32) bool {
	for mm := p; mm != 0; mm &= mm - 1 {
		lane := bits.TrailingZeros32(mm)
		if w.undef[w.l.srcs[lane].a]>>lane&1 != 0 {
			return true
		}
	}
	return false
}
