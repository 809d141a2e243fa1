#!/usr/bin/env bash
# The nightly GPU job: runs the test binaries that `make gpu-bin` built (a
# GPU machine needs no Go) and writes every log and the contract report to
# $OUT (default out/gpu). Stages can be picked: scripts/gpu-nightly.sh unit edge bench properties falsify torch
#
#   unit        cudart/gpu tests (driver layer, guard bands, watchdog, params)
#   edge        every kernel over the edge grid of shapes, against the oracle
#   bench       kernel bandwidth benchmarks, and -fmad=false vs -fmad=true (bin/ptx-fmad)
#   properties  every prediction at CHECKS (default 10000) checks; parity with the emulator
#   throughput  fixed-shape value/gradient checks per second, with scripts/torch_baseline.py
#               before and after (torch-1..2.log)
#   soak        the soundness run: every prediction at SOAK_CHECKS (default 100000) checks, tensors
#               capped at SOAK_MAX_ELEMENTS (default 4096) elements, split over SOAK_SHARDS processes
#               (default 4; each its own seed) whose reports $OUT/soak-N.json are merged into
#               $OUT/soak-merged.json; SOAK_RUN=pattern soaks only the tests it matches
#   falsify     the mutation analysis on the GPU (kill matrix: $OUT/mutants-report.json)
#   torch       the torch baseline, if torch is installed
#   devices     (not in the default list) the properties stage on one GPU and then on DEVICES, in one
#               job: $OUT/devices-1.json and devices-all.json, and the wall time of each
#
# Every stage that runs contracts or mutants uses the GPUs DEVICES selects (default all visible ones;
# CUDA_VISIBLE_DEVICES masks them first, and ordinals count the visible ones): contract runs spread
# over them, one context per GPU in one process, mutants one child process per GPU, and the report
# lists the devices and where each prediction ran. The throughput stage measures one GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/gpu}
CHECKS=${CHECKS:-10000}
DEADLINE=${DEADLINE:-0}         # e.g. 420s: write a partial report then
MAX_ELEMENTS=${MAX_ELEMENTS:-0} # cap on one generated tensor (0: default)
SOAK_CHECKS=${SOAK_CHECKS:-100000}
SOAK_MAX_ELEMENTS=${SOAK_MAX_ELEMENTS:-4096}
SOAK_SHARDS=${SOAK_SHARDS:-4}
SOAK_RUN=${SOAK_RUN:-}
DEVICES=${DEVICES:-all}         # -ptxprop.devices: all, a count, or ordinals such as 0,2
PROFILE=${PROFILE:-}            # set: write CPU profiles of the properties and throughput stages ($OUT/*.cpu.prof) and
                                # a block profile of the throughput stage ($OUT/throughput.block.prof: where
                                # goroutines wait, for the device's lock or its one-at-a-time section)
mkdir -p "$OUT"
OUTABS=$(cd "$OUT" && pwd)
root=$(pwd)
stages=${*:-unit edge bench properties throughput falsify torch}
export PTXPROP_REQUIRE_GPU=1
status=0
run() { # name, timeout, command...
  local name=$1 limit=$2; shift 2
  echo "== $name ($(date -u +%T))"
  local t0=$SECONDS
  timeout "$limit" "$@" >"$OUTABS/$name.log" 2>&1
  local rc=$?
  echo "   exit $rc after $((SECONDS - t0)) s; log $OUTABS/$name.log"
  [ $rc -eq 0 ] || status=1
  tail -n 3 "$OUTABS/$name.log"
}
for s in $stages; do
  case $s in
  unit) run unit 120 bin/gpu.test -test.v ;;
  edge) (cd kernels && run edge 300 ../bin/kernels.test -test.v) ;;
  bench) (cd kernels && PTXPROP_FMAD_PTX=$( [ -d "$root/bin/ptx-fmad" ] && echo "$root/bin/ptx-fmad") run bench 300 ../bin/kernels.test -test.run '^$' -test.bench . -test.benchtime 50x) ;;
  properties) (cd properties && run properties 900 ../bin/properties.test -test.v -test.timeout 15m -test.parallel 32 -ptxprop.backend=gpu \
      -ptxprop.devices="$DEVICES" -rapid.checks="$CHECKS" -ptxprop.deadline="$DEADLINE" -ptxprop.max-elements="$MAX_ELEMENTS" -ptxprop.report="$OUTABS/contract-report.json" \
      ${PROFILE:+-test.cpuprofile "$OUTABS/properties.cpu.prof"}) ;;
  throughput)
    # torch's loop varies by tens of percent from one run to the next on a
    # shared host: it runs before and after ours, all in one run.
    tb() { python3 -c 'import torch' 2>/dev/null && run "torch-$1" 120 python3 scripts/torch_baseline.py --seconds 2; }
    tb 1
    (cd properties && run throughput 300 ../bin/properties.test -test.run '^$' -test.bench Throughput \
      -test.benchtime 3s -ptxprop.backend=gpu -ptxprop.devices=1 -ptxprop.report="$OUTABS/throughput-report.json" \
      ${PROFILE:+-test.cpuprofile "$OUTABS/throughput.cpu.prof" -test.blockprofile "$OUTABS/throughput.block.prof" -test.blockprofilerate 10000})
    tb 2 ;;
  soak)
    # Every contract run is one rapid loop, check after check: the soak
    # splits every prediction over SOAK_SHARDS processes side by side, each
    # with its own random seed and SOAK_CHECKS/SOAK_SHARDS checks, and adds
    # their reports up (ptxprop merge). SOAK_RUN limits it to some tests
    # (a -test.run pattern).
    pids=()
    for i in $(seq 1 "$SOAK_SHARDS"); do
      (cd properties && timeout 3600 ../bin/properties.test -test.v -test.timeout 60m -test.parallel 32 -ptxprop.backend=gpu -ptxprop.devices="$DEVICES" \
        ${SOAK_RUN:+-test.run "$SOAK_RUN"} -rapid.checks=$((SOAK_CHECKS / SOAK_SHARDS)) -ptxprop.deadline="$DEADLINE" \
        -ptxprop.max-elements="$SOAK_MAX_ELEMENTS" -ptxprop.report="$OUTABS/soak-$i.json" >"$OUTABS/soak-$i.log" 2>&1) &
      pids+=($!)
    done
    echo "== soak: $SOAK_SHARDS shards of $((SOAK_CHECKS / SOAK_SHARDS)) checks ($(date -u +%T))"
    for i in "${!pids[@]}"; do
      wait "${pids[$i]}" || { status=1; echo "   shard $((i + 1)) failed"; }
      tail -n 2 "$OUTABS/soak-$((i + 1)).log"
    done
    bin/ptxprop merge -o "$OUTABS/soak-merged.json" "$OUTABS"/soak-[0-9]*.json || status=1
    bin/ptxprop summary "$OUTABS/soak-merged.json" | grep -v 'not run' ;;
  # The kill matrix goes to a report of its own (a properties run replaces contract-report.json).
  falsify) rm -f "$OUTABS/mutants-report.json"
    (cd falsify && run falsify 600 ../bin/falsify.test -test.v -ptxprop.backend=gpu -ptxprop.devices="$DEVICES" -ptxprop.mutants=full -ptxprop.report="$OUTABS/mutants-report.json") ;;
  devices)
    # The same run on one GPU and on DEVICES, side by side in one job: the
    # ratio of the wall times is what spreading over the GPUs gains.
    for d in 1 all; do
      sel=$DEVICES; [ $d = 1 ] && sel=1
      (cd properties && run "devices-$d" 900 ../bin/properties.test -test.timeout 15m -test.parallel 32 -ptxprop.backend=gpu \
        -ptxprop.devices="$sel" -rapid.checks="$CHECKS" -ptxprop.max-elements="$MAX_ELEMENTS" -ptxprop.report="$OUTABS/devices-$d.json")
    done
    for d in 1 all; do echo "devices=$d: $(bin/ptxprop summary "$OUTABS/devices-$d.json" | grep -m1 'predictions:')"; done ;;
  torch) python3 -c 'import torch' 2>/dev/null && run torch 120 python3 scripts/torch_baseline.py --seconds 5 ;;
  *) echo "unknown stage $s"; status=2 ;;
  esac
done
exit $status
