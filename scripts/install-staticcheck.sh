#!/usr/bin/env bash
# Installs staticcheck (honnef.co/go/tools) at the pinned version with
# `go install`, unless that version is already on PATH or in $(go env GOPATH)/bin.
# Prints the path of the binary on its last line. Idempotent.
set -euo pipefail

VERSION=v0.8.2
bin="$(go env GOBIN)"
[ -n "$bin" ] || bin="$(go env GOPATH)/bin"

for sc in "$(command -v staticcheck || true)" "$bin/staticcheck"; do
  if [ -n "$sc" ] && [ -x "$sc" ] && "$sc" -version 2>/dev/null | grep -q "(${VERSION#v})"; then
    echo "$sc"
    exit 0
  fi
done

echo "staticcheck: installing honnef.co/go/tools/cmd/staticcheck@$VERSION" >&2
go install "honnef.co/go/tools/cmd/staticcheck@$VERSION"
echo "$bin/staticcheck"
