#!/usr/bin/env bash
# The nightly GPU job (make nightly): runs the test binaries that `make gpu-bin`
# built (a GPU machine needs no Go) and writes every log, every stage's report
# and the night's ONE contract report with its page to $OUT (default out/gpu):
#
#   $OUT/nightly-report.json  predictions, kill matrix, foreign verdicts, benchmark
#                             ratios, sanitizer and emulator findings, environment,
#                             commit and each stage's outcome (ptxprop nightly-merge)
#   $OUT/nightly.html         its page (ptxprop report html)
#
# Stages can be picked: scripts/gpu-nightly.sh properties bench merge. With no
# argument, or "nightly", it runs the nightly's stages and then merge:
#
#   unit        cudart/gpu tests (driver layer, guard bands, watchdog, params; every
#               approximate instruction the emulator models against the GPU on all
#               its inputs: about 2 minutes on an H200)
#   edge        every kernel over the edge grid of shapes, against the oracle
#   properties  every prediction at CHECKS (default 10000) checks ($OUT/contract-report.json)
#   falsify     the mutation analysis (kill matrix: $OUT/mutants-report.json)
#   foreign     ptxprop verify over the committed foreign bindings at FOREIGN_CHECKS
#               (default 100) checks ($OUT/foreign-report.json); verify's exit 1
#               (a prediction falsified: FALSIFY-GPUTRAIN-006 is, by design) is recorded
#               in the report, not a failure of the stage
#   bench       kernel bandwidth benchmarks, BENCH_COUNT (default 3) repetitions
#               ($OUT/bench.log), then scripts/torch_baseline.py --kernels on the same
#               shapes ($OUT/torch-kernels.jsonl) when python3 can import torch
#   sanitizer   compute-sanitizer's memcheck, racecheck, initcheck and synccheck over a
#               smoke launch of every kernel (the edge tests, -test.short), of every
#               bound kernel (verify at SAN_CHECKS, default 3, checks) and of the two
#               planted bugs (an out-of-bounds write and a shared-memory race, which
#               memcheck and racecheck must find): $OUT/sanitizer/<tool>-<target>.log
#   emu-checks  the emulator's own checks (races, uninitialised reads, out-of-bounds
#               reads and writes, guard bands trapped on access, and DEPEND-001's
#               dependence) on every kernel and binding: the property suite and verify
#               on -ptxprop.backend=emu (not emu-checked, which checks guard bands after
#               a launch as on a GPU and so misses a read past a buffer) at EMU_CHECKS
#               (default 100) checks under a schedule fuzzed from EMU_SCHEDULE (default:
#               a fresh seed each night, recorded) ($OUT/emu-report.json,
#               emu-foreign-report.json)
#   merge       ptxprop nightly-merge and report html over what the stages left
#
# and, not in the nightly, the older stages:
#
#   fmad        -fmad=false vs -fmad=true benchmarks (bin/ptx-fmad)
#   throughput  fixed-shape value/gradient checks per second, with scripts/torch_baseline.py
#               before and after (torch-1..2.log)
#   torch       the torch checks-per-second baseline alone
#   soak        every prediction at SOAK_CHECKS (default 100000) checks, tensors capped at
#               SOAK_MAX_ELEMENTS (default 4096) elements, split over SOAK_SHARDS processes
#               (default 4; each its own seed), merged into $OUT/soak-merged.json;
#               SOAK_RUN=pattern soaks only the tests it matches
#   devices     the properties stage on one GPU and then on DEVICES, in one job
#               ($OUT/devices-1.json, devices-all.json) and the wall time of each
#
# Every stage prints its start and its end with its exit status and elapsed
# time, and the suite's progress lines while it runs; its whole output goes to
# $OUT/<stage>.log, and its outcome to $OUT/stages.tsv (ok, failed, or skipped
# with the reason: no torch, no compute-sanitizer). A failing stage makes the
# exit status 1 but does not stop the others.
#
#   NIGHTLY_BACKEND=emu  the reduced form without a GPU: everything on the PTX
#                        emulator, the benchmarks and the sanitizer skipped (the
#                        binaries may be built without -tags cuda; make nightly-emu)
#   DRY_RUN=1            print each stage's command instead of running it
#   BIN=dir              where the binaries are (default bin)
#
# Contract runs and mutants use the GPUs DEVICES selects (default all visible
# ones; CUDA_VISIBLE_DEVICES masks them first, and ordinals count the visible
# ones). The throughput stage measures one GPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/gpu}
BIN=${BIN:-bin}
NIGHTLY_BACKEND=${NIGHTLY_BACKEND:-gpu}
DRY_RUN=${DRY_RUN:-}
CHECKS=${CHECKS:-10000}
DEADLINE=${DEADLINE:-0}         # e.g. 420s: write a partial report then
MAX_ELEMENTS=${MAX_ELEMENTS:-0} # cap on one generated tensor (0: default)
FOREIGN_CHECKS=${FOREIGN_CHECKS:-100}
BENCH_COUNT=${BENCH_COUNT:-3}
SAN_CHECKS=${SAN_CHECKS:-3}
SANITIZER=${SANITIZER:-compute-sanitizer}
EMU_CHECKS=${EMU_CHECKS:-100}
EMU_SCHEDULE=${EMU_SCHEDULE:-$(( $(date +%s) % 1000000 + 1 ))}
FALSIFY_FLAGS=${FALSIFY_FLAGS:--ptxprop.mutants=full}
SOAK_CHECKS=${SOAK_CHECKS:-100000}
SOAK_MAX_ELEMENTS=${SOAK_MAX_ELEMENTS:-4096}
SOAK_SHARDS=${SOAK_SHARDS:-4}
SOAK_RUN=${SOAK_RUN:-}
DEVICES=${DEVICES:-all}         # -ptxprop.devices: all, a count, or ordinals such as 0,2
CONTEXTS=${CONTEXTS:-1}         # -ptxprop.contexts of the properties stage: contexts on each GPU (more were slower on an H200)
PROFILE=${PROFILE:-}            # set: write CPU profiles of the properties and throughput stages ($OUT/*.cpu.prof) and
                                # a block profile of the throughput stage ($OUT/throughput.block.prof)
case $NIGHTLY_BACKEND in
gpu) export PTXPROP_REQUIRE_GPU=1; BACKEND=gpu ;;
emu) BACKEND=emu; DEVICES=1; CONTEXTS=1 ;;
*) echo "NIGHTLY_BACKEND=$NIGHTLY_BACKEND: want gpu or emu" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
OUTABS=$(cd "$OUT" && pwd)
root=$(pwd)
B=$root/$BIN
[ "${BIN#/}" != "$BIN" ] && B=$BIN
mapfile -t FOREIGN < <(ls binding/testdata/foreign/*/*.binding.yaml 2>/dev/null)
NIGHTLY="unit edge properties falsify foreign bench sanitizer emu-checks merge"
stages=${*:-nightly}
stages=${stages//nightly/$NIGHTLY}
status=0
T0=$SECONDS

# The lines of a stage's output shown while it runs: the suite's progress,
# test and benchmark results, sanitizer summaries.
PROGRESS='^(ptxprop [0-9]|--- FAIL|FAIL|ok |PASS$|panic:|BenchmarkKernels|[{]"case"|=+ (ERROR|RACECHECK) SUMMARY|--- (PASS|SKIP): Test[^/ ]* |verify: |[a-z_/.-]+: [0-9]+ predictions)'

record() { # name, status, exit, seconds, reason
  [ -n "$DRY_RUN" ] && return
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-}" >>"$OUTABS/stages.tsv"
}
skip() { # name, reason
  echo "== $1 skipped: $2"
  record "$1" skipped 0 0 "$2"
}
# run name limit dir [ok-exit-statuses] -- command...: runs command in dir
# with a time limit, its output in $OUT/name.log, the progress lines shown.
run() {
  local name=$1 limit=$2 dir=$3; shift 3
  local okrc="0"
  if [ "$1" != "--" ]; then okrc=$1; shift; fi
  shift # --
  local log=$OUTABS/$name.log
  mkdir -p "$(dirname "$log")"
  echo "== $name start $(date -u +%T) (nightly +$((SECONDS - T0)) s)"
  if [ -n "$DRY_RUN" ]; then
    echo "   (cd $dir && timeout $limit $(printf '%q ' "$@")> $log)"
    return 0
  fi
  local t0=$SECONDS rc
  (cd "$dir" && timeout "$limit" "$@") 2>&1 | tee "$log" | grep --line-buffered -E "$PROGRESS" | sed -u 's/^/   /'
  rc=${PIPESTATUS[0]}
  local took=$((SECONDS - t0))
  if [[ " $okrc " == *" $rc "* ]]; then
    echo "== $name end: ok (exit $rc) after $took s; log $log"
    record "$name" ok "$rc" "$took"
  else
    local why=""
    [ "$rc" -eq 124 ] && why="timed out after $limit s"
    echo "== $name end: FAILED (exit $rc${why:+, $why}) after $took s; log $log"
    tail -n 5 "$log" | sed 's/^/   | /'
    record "$name" failed "$rc" "$took" "$why"
    status=1
  fi
}
have_torch() { python3 -c 'import torch' 2>/dev/null; }

environment() { # what the run depended on, for the report's run.environment
  {
    echo "nightly.start=$(date -u +%FT%TZ)"
    echo "nightly.backend=$NIGHTLY_BACKEND"
    echo "nightly.checks=$CHECKS"
    echo "nightly.contexts=$CONTEXTS"
    echo "nightly.emu_checks=$EMU_CHECKS"
    echo "nightly.emu_schedule=$EMU_SCHEDULE"
    echo "nightly.foreign_checks=$FOREIGN_CHECKS"
    echo "nightly.bench_count=$BENCH_COUNT"
    echo "nightly.stages=$stages"
    echo "host=$(hostname 2>/dev/null)"
    command -v nvidia-smi >/dev/null && echo "nvidia-smi=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sort | uniq -c | sed 's/^ *//' | paste -sd';')"
    command -v "$SANITIZER" >/dev/null && echo "compute-sanitizer=$("$SANITIZER" --version 2>/dev/null | sed -n 's/^Version //p')"
    command -v python3 >/dev/null && echo "python3=$(python3 -c 'import platform; print(platform.python_version())' 2>/dev/null)"
    have_torch && echo "torch=$(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)"
  } >"$OUTABS/environment.txt"
}

echo "== nightly $(date -u +%FT%TZ): stages: $stages; backend $NIGHTLY_BACKEND; output $OUTABS${DRY_RUN:+ (dry run)}"
if [[ " $stages " == *" merge "* && "$stages" != merge && -z "$DRY_RUN" ]]; then
  # A fresh night: nothing a former one left is merged into this one. merge
  # alone joins what the stages already left (a night cut short).
  rm -rf "$OUTABS/stages.tsv" "$OUTABS/sanitizer" "$OUTABS"/{contract,mutants,foreign,emu,emu-foreign,nightly}-report.json \
    "$OUTABS/bench.log" "$OUTABS/torch-kernels.jsonl" "$OUTABS/nightly.html"
fi
[ -n "$DRY_RUN" ] || [ "$stages" = merge ] || environment # merge alone keeps the night's own

for s in $stages; do
  case $s in
  unit)
    if [ "$BACKEND" = emu ]; then skip unit "the driver layer's tests need the GPU (NIGHTLY_BACKEND=emu)"
    else run unit 360 . -- "$B/gpu.test" -test.v; fi ;;
  edge) # shellcheck disable=SC2046 # none or one flag
    run edge 300 kernels -- "$B/kernels.test" -test.v -test.run '^TestEdge' $([ "$BACKEND" = emu ] && echo -test.short) ;;
  properties)
    run properties 900 properties -- "$B/properties.test" -test.v -test.timeout 15m -test.parallel 32 -ptxprop.backend="$BACKEND" \
      -ptxprop.devices="$DEVICES" -ptxprop.contexts="$CONTEXTS" -rapid.checks="$CHECKS" -ptxprop.deadline="$DEADLINE" \
      -ptxprop.max-elements="$MAX_ELEMENTS" -ptxprop.report="$OUTABS/contract-report.json" ${PROFILE:+-test.cpuprofile "$OUTABS/properties.cpu.prof"} ;;
  # The kill matrix goes to a report of its own (a properties run replaces contract-report.json).
  falsify)
    [ -n "$DRY_RUN" ] || rm -f "$OUTABS/mutants-report.json"
    # shellcheck disable=SC2086 # FALSIFY_FLAGS is a list of flags
    run falsify 600 falsify -- "$B/falsify.test" -test.v -ptxprop.backend="$BACKEND" -ptxprop.devices="$DEVICES" $FALSIFY_FLAGS \
      -ptxprop.report="$OUTABS/mutants-report.json" ;;
  foreign)
    if [ ${#FOREIGN[@]} -eq 0 ]; then skip foreign "no binding/testdata/foreign/*/*.binding.yaml here"
    else run foreign 600 . "0 1" -- "$B/ptxprop" verify -ptxprop.backend="$BACKEND" -ptxprop.checks="$FOREIGN_CHECKS" \
      -ptxprop.max-elements="$MAX_ELEMENTS" -ptxprop.report="$OUTABS/foreign-report.json" "${FOREIGN[@]}"; fi ;;
  bench)
    if [ "$BACKEND" = emu ]; then skip bench "the emulator's timings mean nothing (NIGHTLY_BACKEND=emu)"; skip torch-kernels "no benchmarks to compare with"
    else
      run bench 900 kernels -- "$B/kernels.test" -test.run '^$' -test.bench '^BenchmarkKernels$' -test.benchtime 50x -test.count "$BENCH_COUNT"
      # torch in the same run, on the shapes the benchmarks timed.
      if have_torch; then
        run torch-kernels 1200 . -- python3 scripts/torch_baseline.py --kernels "$OUTABS/bench.log" --repeat "$BENCH_COUNT"
        [ -n "$DRY_RUN" ] || grep '^{' "$OUTABS/torch-kernels.log" >"$OUTABS/torch-kernels.jsonl"
      else skip torch-kernels "python3 cannot import torch: benchmarks without torch ratios"; fi
    fi ;;
  fmad)
    run fmad 300 kernels -- env PTXPROP_FMAD_PTX="$([ -d "$root/bin/ptx-fmad" ] && echo "$root/bin/ptx-fmad")" \
      "$B/kernels.test" -test.run '^$' -test.bench Fmad -test.benchtime 50x ;;
  sanitizer)
    if [ "$BACKEND" = emu ]; then skip sanitizer "compute-sanitizer needs the GPU (NIGHTLY_BACKEND=emu)"
    elif ! command -v "$SANITIZER" >/dev/null; then skip sanitizer "$SANITIZER not found (it ships with the CUDA toolkit)"
    else
      for tool in memcheck racecheck initcheck synccheck; do
        # --error-exitcode: a finding fails the stage, but for the planted bugs, which must be found.
        san=("$SANITIZER" --tool "$tool" --print-limit 200)
        run "sanitizer/$tool-edge" 900 kernels -- "${san[@]}" --error-exitcode 3 "$B/kernels.test" -test.v -test.short -test.run '^TestEdge'
        [ ${#FOREIGN[@]} -gt 0 ] && run "sanitizer/$tool-foreign" 900 . "0 1" -- "${san[@]}" --error-exitcode 3 "$B/ptxprop" verify \
          -ptxprop.backend=gpu -ptxprop.devices=1 -ptxprop.checks="$SAN_CHECKS" -ptxprop.report=off "${FOREIGN[@]}"
        run "sanitizer/$tool-planted" 300 kernels "0 1" -- env PTXPROP_SANITIZER_PLANTED=1 "${san[@]}" "$B/kernels.test" -test.v \
          -test.run '^TestSanitizerPlanted$'
      done
    fi ;;
  emu-checks)
    # The emulator sees what a GPU hides: a race that gives the right numbers
    # there, an uninitialised read, an out-of-bounds access inside an allocation.
    run emu-checks 1800 properties -- env -u PTXPROP_REQUIRE_GPU "$B/properties.test" -test.timeout 30m -ptxprop.backend=emu \
      -ptxprop.emu-schedule="$EMU_SCHEDULE" -rapid.checks="$EMU_CHECKS" -ptxprop.max-elements="$MAX_ELEMENTS" -ptxprop.report="$OUTABS/emu-report.json"
    [ ${#FOREIGN[@]} -gt 0 ] && run emu-checks-foreign 1200 . "0 1" -- env -u PTXPROP_REQUIRE_GPU "$B/ptxprop" verify -ptxprop.backend=emu \
      -ptxprop.emu-schedule="$EMU_SCHEDULE" -ptxprop.checks="$FOREIGN_CHECKS" -ptxprop.max-elements="$MAX_ELEMENTS" \
      -ptxprop.report="$OUTABS/emu-foreign-report.json" "${FOREIGN[@]}" ;;
  merge)
    echo "== merge start $(date -u +%T) (nightly +$((SECONDS - T0)) s)"
    if [ -n "$DRY_RUN" ]; then
      echo "   $B/ptxprop nightly-merge -o $OUTABS/nightly-report.json $OUTABS"
      echo "   $B/ptxprop report html -o $OUTABS/nightly.html $OUTABS/nightly-report.json"
      continue
    fi
    "$B/ptxprop" nightly-merge -o "$OUTABS/nightly-report.json" "$OUTABS" || status=1
    if [ -f "$OUTABS/nightly-report.json" ]; then
      "$B/ptxprop" summary "$OUTABS/nightly-report.json" | grep -v 'not run' | tail -n 40
      "$B/ptxprop" report html -o "$OUTABS/nightly.html" "$OUTABS/nightly-report.json" || status=1
    else
      status=1
    fi ;;
  throughput)
    # torch's loop varies by tens of percent from one run to the next on a
    # shared host: it runs before and after ours, all in one run.
    tb() { have_torch && run "torch-$1" 120 . -- python3 scripts/torch_baseline.py --seconds 2; }
    tb 1
    run throughput 300 properties -- "$B/properties.test" -test.run '^$' -test.bench Throughput \
      -test.benchtime 3s -ptxprop.backend="$BACKEND" -ptxprop.devices=1 -ptxprop.report="$OUTABS/throughput-report.json" \
      ${PROFILE:+-test.cpuprofile "$OUTABS/throughput.cpu.prof" -test.blockprofile "$OUTABS/throughput.block.prof" -test.blockprofilerate 10000}
    tb 2 ;;
  soak)
    # Every contract run is one rapid loop, check after check: the soak
    # splits every prediction over SOAK_SHARDS processes side by side, each
    # with its own random seed and SOAK_CHECKS/SOAK_SHARDS checks, and adds
    # their reports up (ptxprop merge).
    pids=()
    for i in $(seq 1 "$SOAK_SHARDS"); do
      (cd properties && timeout 3600 "$B/properties.test" -test.v -test.timeout 60m -test.parallel 32 -ptxprop.backend="$BACKEND" -ptxprop.devices="$DEVICES" \
        ${SOAK_RUN:+-test.run "$SOAK_RUN"} -rapid.checks=$((SOAK_CHECKS / SOAK_SHARDS)) -ptxprop.deadline="$DEADLINE" \
        -ptxprop.max-elements="$SOAK_MAX_ELEMENTS" -ptxprop.report="$OUTABS/soak-$i.json" >"$OUTABS/soak-$i.log" 2>&1) &
      pids+=($!)
    done
    echo "== soak: $SOAK_SHARDS shards of $((SOAK_CHECKS / SOAK_SHARDS)) checks ($(date -u +%T))"
    for i in "${!pids[@]}"; do
      wait "${pids[$i]}" || { status=1; echo "   shard $((i + 1)) failed"; }
      tail -n 2 "$OUTABS/soak-$((i + 1)).log"
    done
    "$B/ptxprop" merge -o "$OUTABS/soak-merged.json" "$OUTABS"/soak-[0-9]*.json || status=1
    "$B/ptxprop" summary "$OUTABS/soak-merged.json" | grep -v 'not run' ;;
  devices)
    # The same run on one GPU and on DEVICES, side by side in one job: the
    # ratio of the wall times is what spreading over the GPUs gains.
    for d in 1 all; do
      sel=$DEVICES; [ $d = 1 ] && sel=1
      run "devices-$d" 900 properties -- "$B/properties.test" -test.timeout 15m -test.parallel 32 -ptxprop.backend="$BACKEND" \
        -ptxprop.devices="$sel" -rapid.checks="$CHECKS" -ptxprop.max-elements="$MAX_ELEMENTS" -ptxprop.report="$OUTABS/devices-$d.json"
    done
    for d in 1 all; do echo "devices=$d: $("$B/ptxprop" summary "$OUTABS/devices-$d.json" | grep -m1 'predictions:')"; done ;;
  torch) if have_torch; then run torch 120 . -- python3 scripts/torch_baseline.py --seconds 5; else skip torch "python3 cannot import torch"; fi ;;
  *) echo "unknown stage $s"; status=2 ;;
  esac
done
echo "== nightly done after $((SECONDS - T0)) s: exit $status${DRY_RUN:+ (dry run)}"
[ -f "$OUTABS/nightly-report.json" ] && [ -z "$DRY_RUN" ] && echo "   report $OUTABS/nightly-report.json, page $OUTABS/nightly.html"
exit $status
