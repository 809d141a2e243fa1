#!/usr/bin/env bash
# nvcc_corpus.sh OUT_DIR — compile CUDA C sources to sm_90 PTX with nvcc, for ptxprop's
# emulator corpus. Run from the repository root:
#     bash scripts/corpus/nvcc_corpus.sh OUT_DIR
# Sources: kernels/src/*.cu, binding/testdata/foreign/nvcc13/rms_norm.cu,
#          scripts/corpus/cuda_kernels.cu, scripts/corpus/cuda_atomic_v4.cu.
# Each is compiled three ways into OUT_DIR/nvcc/:
#     <name>.ptx           nvcc -arch=sm_90 -ptx -O3
#     <name>.fastmath.ptx  ... --use_fast_math
#     <name>.nofma.ptx     ... -fmad=false (the flag ptxprop's own Makefile uses)
# A failing compile is reported and skipped. Then it prints a table of special instructions
# and an opcode histogram (via ptx_corpus.py --summary-only; an awk fallback without python).
set -u
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT_DIR   (run from the repository root)" >&2
  exit 2
fi
OUT="$1/nvcc"
HERE="$(cd "$(dirname "$0")" && pwd)"
NVCC="${NVCC:-nvcc}"
mkdir -p "$OUT"
if [ ! -d kernels/src ]; then
  echo "nvcc_corpus: run from the repository root (kernels/src not found)" >&2
  exit 2
fi
command -v "$NVCC" >/dev/null 2>&1 || { echo "nvcc_corpus: $NVCC not found" >&2; exit 2; }
"$NVCC" --version >"$OUT/nvcc_version.txt" 2>&1
echo "[nvcc_corpus] $(grep release "$OUT/nvcc_version.txt")" >&2

srcs=()
for f in kernels/src/*.cu; do srcs+=("$f"); done
srcs+=(binding/testdata/foreign/nvcc13/rms_norm.cu "$HERE/cuda_kernels.cu" "$HERE/cuda_atomic_v4.cu")

ok=0; fail=0; failed=()
for src in "${srcs[@]}"; do
  if [ ! -f "$src" ]; then echo "[nvcc_corpus] missing $src" >&2; fail=$((fail+1)); failed+=("$src"); continue; fi
  base="$(basename "$src" .cu)"
  case "$src" in
    binding/testdata/foreign/*) name="foreign_$base" ;;
    kernels/src/*) name="ptxprop_$base" ;;
    *) name="$base" ;;
  esac
  inc="-I$(dirname "$src")"
  for variant in default fastmath nofma; do
    case "$variant" in
      default)  flags=(); suffix="" ;;
      fastmath) flags=(--use_fast_math); suffix=".fastmath" ;;
      nofma)    flags=(-fmad=false); suffix=".nofma" ;;
    esac
    out="$OUT/$name$suffix.ptx"
    echo "[nvcc_corpus] $src -> $out ${flags[*]:-}" >&2
    if "$NVCC" -arch=sm_90 -ptx -O3 "${flags[@]}" "$inc" "$src" -o "$out" 2>"$out.log"; then
      ok=$((ok+1))
      [ -s "$out.log" ] || rm -f "$out.log"
    else
      fail=$((fail+1)); failed+=("$src ($variant)")
      echo "[nvcc_corpus] FAILED $src ($variant):" >&2
      sed 's/^/    /' "$out.log" | head -20 >&2
      rm -f "$out"
    fi
  done
done

echo "nvcc PTX: $ok compiled, $fail failed, in $OUT"
for f in "${failed[@]+"${failed[@]}"}"; do echo "  FAILED $f"; done
echo

if command -v python3 >/dev/null 2>&1 && python3 "$HERE/ptx_corpus.py" "$OUT" --summary-only; then
  :
else
  echo "(python summary unavailable; awk histogram follows)"
  echo "kernel / special instructions:"
  for p in "$OUT"/*.ptx; do
    printf '%-44s' "$(basename "$p" .ptx)"
    for pat in 'sqrt\.approx' 'sqrt\.rn' 'rsqrt\.approx' 'ex2\.approx' 'lg2\.approx' \
               'sin\.approx' 'cos\.approx' 'tanh\.approx' 'div\.full' 'div\.rn' 'div\.approx' \
               'rcp\.approx' 'rcp\.rn' 'atom\.' 'red\.' 'ld\.global[.a-z0-9]*\.v4' 'cp\.async' \
               'bar\.sync' 'shfl\.sync' 'redux\.' 'mbarrier\.'; do
      n=$(grep -v '^\s*//' "$p" | grep -cE "(^|[[:space:]])$pat")
      [ "$n" -gt 0 ] && printf ' %sx%s' "$(echo "$pat" | tr -d '\\')" "$n"
    done
    echo
  done
  echo; echo "opcode histogram:"
  cat "$OUT"/*.ptx | sed -e 's://.*$::' | awk '
    { gsub(/^[ \t{}]+/, ""); if ($0 == "") next
      if ($1 ~ /^@/) { $1 = "" ; sub(/^ +/, "") }
      if ($1 ~ /^\./ || $1 ~ /:$/ || $1 ~ /^[)(]/) next
      op = $1; sub(/;$/, "", op); if (op ~ /^[a-z][a-z0-9_.:]*$/) c[op]++ }
    END { for (k in c) printf "%7d  %s\n", c[k], k }' | sort -rn
fi
