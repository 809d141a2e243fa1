# Makefile — ptxprop build entry points.
#
# Go builds and tests need none of this: the PTX is committed and embedded.
# These targets regenerate what is committed, or set up the tools to do it.
#
#   make toolkit   install nvcc (Debian nvidia-cuda-toolkit) via scripts/install-cuda-toolkit.sh
#   make ptx       compile kernels/src/*.cu to kernels/ptx/*.ptx and rewrite kernels/ptx/MANIFEST
#   make falsify-ptx  apply falsify/src/*.patch to kernels/src and compile the
#                  named mutants to falsify/ptx/*.ptx (and falsify/ptx/MANIFEST)
#
# Others add their targets below; keep each one small and commented.

.PHONY: toolkit ptx

toolkit:
	bash scripts/install-cuda-toolkit.sh

# ---------------------------------------------------------------------------
# ptx: one PTX module per kernel family (kernels/src/<name>.cu ->
# kernels/ptx/<name>.ptx). The flags are part of the kernels' documented op
# sequences (the tolerances depend on them), so kernels/manifest_test.go
# checks that MANIFEST records exactly these:
#   -arch=compute_70  virtual architecture only: PTX the driver JITs for any
#                     GPU from Volta on (H100/H200 included), and the emulator reads
#   -fmad=false       no contraction of a*b+c into an FMA; every FMA in the
#                     PTX is an explicit fmaf() in the source
#   -O3               optimised; no -lineinfo or -G, so the PTX stays lean and
#                     holds no file paths
# nvcc runs inside kernels/ on relative paths and writes no timestamps, so
# the output is byte-for-byte reproducible (compile twice and compare).
#
# MANIFEST holds the nvcc version, the flags and the SHA-256 of every source
# (.cu and the shared .cuh headers) and of every PTX file. A test recomputes
# the source hashes and fails when a source changed but `make ptx` was not run.
NVCC      ?= nvcc
NVCCFLAGS := -ptx -arch=compute_70 -fmad=false -O3

KSRC := kernels/src
KPTX := kernels/ptx
CU   := $(sort $(wildcard $(KSRC)/*.cu))
CUH  := $(sort $(wildcard $(KSRC)/*.cuh))
PTX  := $(patsubst $(KSRC)/%.cu,$(KPTX)/%.ptx,$(CU))

ptx: $(PTX) $(KPTX)/MANIFEST

# Every PTX depends on every header: a helper change recompiles all families.
$(KPTX)/%.ptx: $(KSRC)/%.cu $(CUH)
	cd kernels && $(NVCC) $(NVCCFLAGS) src/$*.cu -o ptx/$*.ptx

# Written to a temporary file and renamed, so a failed run leaves the old one.
$(KPTX)/MANIFEST: $(PTX) $(CU) $(CUH) Makefile
	@{ echo "# Written by 'make ptx'; checked by kernels/manifest_test.go. Do not edit."; \
	  echo "nvcc: $$($(NVCC) --version | grep release)"; \
	  echo "flags: $(NVCCFLAGS)"; \
	  (cd kernels && sha256sum $(patsubst kernels/%,%,$(CU) $(CUH) $(PTX))); \
	} > $@.tmp && mv $@.tmp $@

# ---------------------------------------------------------------------------
# gpu-bin: test binaries for the GPU machine, which has no Go (and
# bin/ptxprop, the CLI, to verify bindings on the GPU and to merge and
# summarise reports there, built with -tags cuda like the tests): one
# bin/<last path element>.test per package of GPU_PKGS that exists, built with
# -tags cuda (cudart/gpu registers the "gpu" backend, built over
# gorgonia.org/cu). The build needs cuda.h — from /usr/local/cuda when
# present, else the Debian toolkit's /usr/include — and links -lcuda against
# the toolkit's stub libcuda.so (GPU_CGO_LDFLAGS: the stubs directory comes
# first), so no driver is needed to build. The binaries then need the
# driver's libcuda.so.1 at load time (the dynamic loader refuses to start
# them without it); a machine that has it but no usable GPU still runs them:
# the GPU tests skip and the property tests use the emulator. Run one there as
#   PTXPROP_REQUIRE_GPU=1 ./bin/gpu.test -test.v
# (PTXPROP_REQUIRE_GPU turns "no device" from a skip into a failure).
GPU_PKGS ?= ./cudart/gpu ./kernels ./properties ./falsify
# The commit the binaries are built from, recorded in their reports (the
# machine they run on may have no checkout, or another one).
GPU_COMMIT := $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
ifneq ($(wildcard /usr/local/cuda/include/cuda.h),)
GPU_CGO_CFLAGS  ?= -I/usr/local/cuda/include
GPU_CGO_LDFLAGS ?= -L/usr/local/cuda/lib64/stubs -L/usr/local/cuda/lib64
else
GPU_CGO_CFLAGS  ?= -I/usr/include
GPU_CGO_LDFLAGS ?= -L/usr/lib/x86_64-linux-gnu/stubs
endif

.PHONY: gpu-bin
gpu-bin:
	@mkdir -p bin
	@set -e; for p in $(GPU_PKGS); do \
	  if ls $$p/*.go >/dev/null 2>&1; then \
	    echo "go test -c -tags cuda -ldflags '-X …BuildCommit=$(GPU_COMMIT)' -o bin/$$(basename $$p).test $$p"; \
	    CGO_ENABLED=1 CGO_CFLAGS="$(GPU_CGO_CFLAGS)" CGO_LDFLAGS="$(GPU_CGO_LDFLAGS)" \
	      go test -c -tags cuda -ldflags "-X github.com/ptxprop/ptxprop/properties/suite.BuildCommit=$(GPU_COMMIT)" -o bin/$$(basename $$p).test $$p; \
	  else echo "gpu-bin: skipping $$p (no Go files)"; fi; \
	done
	@echo "go build -tags cuda -ldflags '-X …BuildCommit=$(GPU_COMMIT)' -o bin/ptxprop ./cmd/ptxprop"
	@CGO_ENABLED=1 CGO_CFLAGS="$(GPU_CGO_CFLAGS)" CGO_LDFLAGS="$(GPU_CGO_LDFLAGS)" \
	  go build -tags cuda -ldflags "-X github.com/ptxprop/ptxprop/properties/suite.BuildCommit=$(GPU_COMMIT)" -o bin/ptxprop ./cmd/ptxprop

# ---------------------------------------------------------------------------
# nightly: the nightly job, scripts/gpu-nightly.sh (its header says what each
# stage does), on the GPU machine from make gpu-bin's binaries — no Go there:
# every prediction at NIGHTLY_CHECKS checks, falsify, the foreign bindings,
# the benchmarks beside torch, compute-sanitizer and the emulator's own
# checks, into one report and its page, $(NIGHTLY_OUT)/nightly-report.json
# and nightly.html. Exits 1 when a stage failed (the others still run).
# nightly-dry-run prints the commands instead. nightly-emu builds host
# binaries (no cuda tag) in bin/emu and runs the script's reduced form on
# the PTX emulator at tiny check counts (benchmarks and sanitizer skipped),
# into out/nightly-emu: the whole job on a CPU. At these counts some of the
# suite's self-tests fail (they need more checks to see what they plant), so
# the script's exit status is shown, not obeyed; the target fails when the
# one report is missing or invalid.
NIGHTLY_OUT    ?= out/gpu
NIGHTLY_CHECKS ?= 10000
EMU_BIN        := bin/emu
.PHONY: nightly nightly-dry-run nightly-emu
nightly:
	OUT=$(NIGHTLY_OUT) CHECKS=$(NIGHTLY_CHECKS) bash scripts/gpu-nightly.sh nightly

nightly-dry-run:
	DRY_RUN=1 OUT=$(NIGHTLY_OUT) CHECKS=$(NIGHTLY_CHECKS) bash scripts/gpu-nightly.sh nightly

nightly-emu:
	@mkdir -p $(EMU_BIN)
	@set -e; for p in kernels properties falsify; do \
	  echo "go test -c -o $(EMU_BIN)/$$p.test ./$$p"; \
	  go test -c -ldflags "-X github.com/ptxprop/ptxprop/properties/suite.BuildCommit=$(GPU_COMMIT)" -o $(EMU_BIN)/$$p.test ./$$p; \
	done
	go build -ldflags "-X github.com/ptxprop/ptxprop/properties/suite.BuildCommit=$(GPU_COMMIT)" -o $(EMU_BIN)/ptxprop ./cmd/ptxprop
	-NIGHTLY_BACKEND=emu BIN=$(EMU_BIN) OUT=out/nightly-emu CHECKS=5 EMU_CHECKS=3 FOREIGN_CHECKS=3 MAX_ELEMENTS=4096 \
	  FALSIFY_FLAGS="-ptxprop.mutants=full -test.run ^TestNamedMutants$$" bash scripts/gpu-nightly.sh nightly
	$(EMU_BIN)/ptxprop validate out/nightly-emu/nightly-report.json

# ---------------------------------------------------------------------------
# PTXPROP: the CLI that targets run wherever its exit status matters. It is
# built, not run with `go run`, which reports every failure as exit status
# 1 and so hides 2 (bad usage, a bad binding) and 130 (interrupted).
# By default make builds it at bin/host/ptxprop each time a target needs
# it (go build does nothing when it is up to date), apart from gpu-bin's
# bin/ptxprop (built with -tags cuda, it does not start without the
# driver's libcuda.so.1). PTXPROP=path names another: one that exists is
# used as it is (on the GPU machine, which has no Go: PTXPROP=bin/ptxprop),
# one that does not is built there.
PTXPROP ?= bin/host/ptxprop

.PHONY: FORCE
FORCE:
ifeq ($(origin PTXPROP),file)
$(PTXPROP): FORCE
endif
$(PTXPROP):
	@mkdir -p $(dir $@)
	go build -ldflags "-X github.com/ptxprop/ptxprop/properties/suite.BuildCommit=$(GPU_COMMIT)" -o $@ ./cmd/ptxprop

# ---------------------------------------------------------------------------
# verify-foreign: ptxprop verify over the committed foreign bindings (Triton
# 3.6 and nvcc 13 PTX, binding/testdata/foreign), writing FOREIGN_REPORT and
# printing its summary. The atomic Triton backward is falsified by design
# (FALSIFY-GPUTRAIN-006), so verify's exit status 1 (a finding) is not a
# failure of the target; 2 (a bad binding) and 130 (interrupted) are, and
# the target exits with them. go test ./binding asserts the verdicts. On the
# GPU machine, with make gpu-bin's CLI: make verify-foreign PTXPROP=bin/ptxprop.
FOREIGN := $(sort $(wildcard binding/testdata/foreign/*/*.binding.yaml))
FOREIGN_REPORT ?= out/foreign-report.json
FOREIGN_CHECKS ?= 100

.PHONY: verify-foreign
verify-foreign: $(PTXPROP)
	@mkdir -p $(dir $(FOREIGN_REPORT))
	$(PTXPROP) verify -ptxprop.checks=$(FOREIGN_CHECKS) -ptxprop.report=$(FOREIGN_REPORT) $(FOREIGN); \
	  rc=$$?; if [ $$rc -gt 1 ]; then exit $$rc; fi

# ---------------------------------------------------------------------------
# The two commands of the README, and their helpers.
#
#   make          (= make all = make report) download the modules, run the
#                 property suite at CHECKS checks per contract on the GPU (if
#                 built with GOFLAGS=-tags=cuda and present) or on the PTX
#                 emulator, write out/contract-report.json, print its summary;
#                 exits non-zero when a prediction is not discharged
#   make test     every package's tests at rapid's default checks (go test
#                 ./..., Go's default timeout), then `report`
#   make test-terminal  `make test` on a pseudo-terminal, as a person runs it
#                 from a shell (what CI runs, with CHECKS=1000)
#   make lint     gofmt -l (must print nothing), go vet and staticcheck
#                 (installed at a pinned version by scripts/install-staticcheck.sh)
#   make falsify  the mutation analysis: every named mutant and the generic
#                 sample, gated on the mutation score; writes the kill
#                 matrix to out/mutants-report.json (FALSIFY_REPORT)
#   make bench    kernel bandwidth benchmarks (meaningful on a GPU)
.DEFAULT_GOAL := all
# 200 checks per contract keep `make` within 3 minutes on 2 cores with the
# emulator, the build included; CHECKS=1000 (or more) runs deeper.
CHECKS ?= 200
REPORT ?= out/contract-report.json

.PHONY: all report test lint falsify bench
all: report

# report runs go test inside properties/ (go test's local directory mode),
# which prints the test binary's output as it comes, progress lines
# included; `go test ./properties` would hold it back until the end. The
# suite prints the report's summary itself.
report:
	go mod download
	cd properties && go test -count=1 -timeout 60m -ptxprop.checks=$(CHECKS) -ptxprop.report=$(abspath $(REPORT))

test:
	go test -count=1 ./...
	$(MAKE) report

# test-terminal: `make test` under script(1) (util-linux; Debian's
# bsdutils, an essential package), which runs it on a fresh pseudo-terminal
# as its controlling terminal, stdin and stdout, and copies what it shows
# here: the tests and the property suite see a terminal, as they do when a
# person types `make test`, which CI, without one, would otherwise never
# see. -e returns the exit status of `make test` (128+N if a signal N ended
# it); -q prints no start and end banners; the typescript goes to
# /dev/null. Variables given on the command line (CHECKS=1000) reach the
# inner make through MAKEFLAGS.
.PHONY: test-terminal
test-terminal:
	@command -v script >/dev/null || { echo "test-terminal: needs script(1): apt-get install bsdutils (Debian) or util-linux" >&2; exit 2; }
	script -qec "$(MAKE) test" /dev/null

# test-checked: the property suite on the emulator seen as a GPU
# (-ptxprop.backend=emu-checked): every launch's guard bands and inputs are checked
# afterwards by the verify kernel, as on a GPU, so the GPU's checking path
# runs without one. CI runs it at CHECKED_CHECKS checks per prediction.
CHECKED_CHECKS ?= 100
.PHONY: test-checked
test-checked:
	cd properties && go test -count=1 -timeout 30m -ptxprop.backend=emu-checked -ptxprop.checks=$(CHECKED_CHECKS) -ptxprop.report=off

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt -l reports unformatted files:"; echo "$$out"; exit 1; fi
	go vet ./...
	@sc=$$(bash scripts/install-staticcheck.sh) && sc=$$(echo "$$sc" | tail -n 1) && echo "$$sc ./..." && "$$sc" ./...

# falsify: go test ./falsify alone is the quick run (named mutants and a few
# generic ones, no report); this is the full one. Its report is a file of
# its own, removed first, so it holds this run's kill matrix and nothing a
# property run (make report, which replaces $(REPORT)) could overwrite.
# FALSIFY_FLAGS passes more settings (e.g. -ptxprop.generic-per-op=0 for
# every generic mutant).
FALSIFY_REPORT ?= out/mutants-report.json
FALSIFY_FLAGS ?=
falsify: $(PTXPROP)
	@mkdir -p $(dir $(FALSIFY_REPORT))
	rm -f $(FALSIFY_REPORT)
	go test ./falsify -count=1 -timeout 60m -v -ptxprop.mutants=full -ptxprop.report=$(abspath $(FALSIFY_REPORT)) $(FALSIFY_FLAGS)
	$(PTXPROP) summary $(FALSIFY_REPORT)

bench:
	go test ./kernels -run '^$$' -bench . -benchtime 20x

# ---------------------------------------------------------------------------
# falsify-ptx: the named mutants' variant kernels, each a shipped kernel
# plus one deliberate bug. falsify/src/<name>.patch is a unified diff of one
# kernels/src/<family>.cu (named by its "+++ b/kernels/src/<family>.cu"
# line) under a header that says what the bug is; the target applies it to
# a copy of that source in a temporary directory and compiles the copy to
# falsify/ptx/<name>.ptx (committed and embedded by package falsify), with
# the `ptx` target's flags (NVCCFLAGS): a variant is compiled exactly like
# the kernel it replaces. kernels/src is on the include path for the
# headers; applying needs GNU patch. A patch must apply exactly (no fuzz;
# offsets are fine): one whose context no longer matches the kernel, that
# names no kernel source or more than one, or that fails to compile stops
# the target with the reason and leaves the committed PTX as it was (nvcc
# writes <name>.ptx.tmp, renamed into place once complete). falsify/doc.go
# says how to edit a patch.
#
# falsify/ptx/MANIFEST holds the SHA-256 of every patch, every PTX, and the
# kernel sources and headers they were built on; TestEmbeddedPTX (package
# falsify) checks it. A .ptx without its patch stops the target too.
FSRC   := falsify/src
FPTX   := falsify/ptx
FPATCH := $(sort $(wildcard $(FSRC)/*.patch))
FPTXS  := $(patsubst $(FSRC)/%.patch,$(FPTX)/%.ptx,$(FPATCH))
# fbase: the kernel sources the patches $(1) apply to, from their +++ lines.
fbase  = $(if $(1),$(shell sed -n 's|^+++ b/\(kernels/src/[^[:space:]]*\).*|\1|p' $(1)))
FBASE  := $(sort $(call fbase,$(FPATCH)))

.PHONY: falsify-ptx
falsify-ptx: $(FPTXS) $(FPTX)/MANIFEST

# Secondary expansion (for the rules from here on): a mutant's PTX depends
# on the kernel source its patch names.
.SECONDEXPANSION:
$(FPTX)/%.ptx: $(FSRC)/%.patch $$(call fbase,$(FSRC)/$$*.patch) $(CUH)
	@set -e; base='$(call fbase,$<)'; \
	if [ "$$(echo $$base | wc -w)" != 1 ]; then \
	  echo "falsify-ptx: $<: want one '+++ b/kernels/src/<family>.cu' line, found '$$base'" >&2; exit 1; fi; \
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp" $@.tmp' EXIT; \
	echo "patch -o $$tmp/$*.cu $$base < $< && $(NVCC) $(NVCCFLAGS) -I$(KSRC) $$tmp/$*.cu -o $@"; \
	if ! patch --fuzz=0 --no-backup-if-mismatch --reject-file=- -o "$$tmp/$*.cu" "$$base" < $< > "$$tmp/log" 2>&1; then \
	  cat "$$tmp/log" >&2; \
	  echo "falsify-ptx: $< does not apply to $$base: update the patch (falsify/doc.go says how); $@ is unchanged" >&2; exit 1; fi; \
	sed -n 's|^Hunk.*offset.*|falsify-ptx: $<: &|p' "$$tmp/log"; \
	$(NVCC) $(NVCCFLAGS) -I$(KSRC) "$$tmp/$*.cu" -o $@.tmp || { \
	  echo "falsify-ptx: $< applied to $$base does not compile; $@ is unchanged" >&2; exit 1; }; \
	mv $@.tmp $@

$(FPTX)/MANIFEST: $(FPTXS) $(FPATCH) $(FBASE) $(CUH) Makefile
	@set -e; for p in $(FPTX)/*.ptx; do \
	  [ -f "$(FSRC)/$$(basename $$p .ptx).patch" ] || { echo "falsify-ptx: $$p has no $(FSRC)/$$(basename $$p .ptx).patch: delete it or restore the patch" >&2; exit 1; }; \
	done
	@{ echo "# Written by 'make falsify-ptx'; checked by TestEmbeddedPTX in package falsify. Do not edit."; \
	  echo "nvcc: $$($(NVCC) --version | grep release)"; \
	  echo "flags: $(NVCCFLAGS)"; \
	  (cd falsify && sha256sum $(patsubst falsify/%,%,$(FPATCH) $(FPTXS)) $(addprefix ../,$(FBASE) $(CUH))); \
	} > $@.tmp && mv $@.tmp $@
