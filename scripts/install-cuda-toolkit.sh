#!/usr/bin/env bash
# Installs Debian's nvidia-cuda-toolkit (nvcc, cuda.h, the libcuda.so link stub).
# The package lives in the non-free component, so this first makes sure the
# apt sources list `contrib non-free` next to `main`. Idempotent; needs root.
set -euo pipefail

if command -v nvcc >/dev/null 2>&1 && [ -f /usr/include/cuda.h ]; then
  echo "cuda toolkit: already installed ($(nvcc --version | tail -n 1))"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

changed=0
# deb822 sources (Debian 12+): add contrib/non-free to every Components: line.
for f in /etc/apt/sources.list.d/*.sources; do
  [ -e "$f" ] || continue
  if grep -qE '^Components:' "$f" && ! grep -qE '^Components:.*non-free( |$)' "$f"; then
    $SUDO sed -i -E '/^Components:/{/contrib/!s/$/ contrib/;/non-free( |$)/!s/$/ non-free/}' "$f"
    changed=1
  fi
done
# one-line sources.list format.
if [ -f /etc/apt/sources.list ] && grep -qE '^deb .* main' /etc/apt/sources.list \
   && ! grep -qE '^deb .* non-free( |$)' /etc/apt/sources.list; then
  $SUDO sed -i -E '/^deb /{/contrib/!s/ main/ main contrib/;/non-free( |$)/!s/ main/ main non-free/}' /etc/apt/sources.list
  changed=1
fi
[ "$changed" = 1 ] && echo "apt sources: enabled contrib non-free"

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit >/dev/null
echo "cuda toolkit: $(nvcc --version | tail -n 1)"
