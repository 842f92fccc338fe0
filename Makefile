# vibe-test: the two set-up commands are `make demo` and `make test`.
# Everything external is pinned in tools/package.json (+ package-lock.json):
# the Claude Code CLI the tests and demo run, and the echarts script that is
# embedded into the binary so chart.html opens offline.

SHELL := /bin/bash
TOOLS_BIN := $(CURDIR)/tools/node_modules/.bin
export PATH := $(TOOLS_BIN):$(PATH)
# The browser test keeps its screenshots here (git-ignored).
export VIBE_TEST_ARTIFACTS ?= $(CURDIR)/artifacts

.PHONY: tools assets build demo test vet fuzz fixtures clean release-snapshot release-check

tools: tools/node_modules/.stamp

tools/node_modules/.stamp: tools/package.json tools/package-lock.json
	npm ci --prefix tools --no-audit --no-fund
	@$(TOOLS_BIN)/claude --version
	@$(TOOLS_BIN)/codex --version
	@v=$$($(TOOLS_BIN)/gemini --version) && echo "$$v (Gemini CLI)"
	@touch $@

assets: tools
	sh scripts/fetch-echarts.sh

build: assets
	go build -o vibe-test .

demo: build
	./vibe-test demo

# The recorded run folders' maker (internal/testdata/runs), the codex
# fixtures' recorder and the release check build behind the tags recordruns,
# recordfixtures and release: vetted here with every other file, so that they
# keep compiling. One vet with all three tags (they only add files; none is
# excluded by them): a vet with other tags analyses every dependency again
# for its facts, and the two tagged vets of one package each had cost as
# much as the untagged vet of all (12.4 and 6.4 CPU-seconds against 14.4,
# from an empty cache; 16.6 for the one vet). VETFLAGS=-race vets the race
# build of every package (the same files: none is kept from a race build),
# whose compiled dependencies `make test` has just made; a plain vet
# compiles every package once more without the race detector.
VETFLAGS ?=
VETTAGS := recordruns,recordfixtures,release
vet:
	go vet $(VETFLAGS) -tags $(VETTAGS) ./...
	@# Not `tee /dev/stderr`: opening it truncates a log file that stderr
	@# is redirected to, erasing every line the tests wrote before.
	@unformatted="$$(gofmt -l .)"; test -z "$$unformatted" \
		|| { echo "$$unformatted" >&2; echo "gofmt: files above need formatting" >&2; exit 1; }

# One `go test -race` for every package but the calibration, so that each
# package is compiled once (two go commands side by side compile the
# packages they share twice), its test binaries two at a time (-p, the
# cores), internal/app the long pole among them. The calibration
# simulations (internal/calibrate/) run beside it without the race
# detector: arithmetic over thousands of simulated runs, each grid cell on
# a goroutine that shares nothing but its own slot of the results
# (calibrate.Each), which -race would slow tenfold. vet comes last, on the
# race build the tests left in the cache. The step fails when any of the
# three did, after all three ended.
# -parallel 4: an app test waits on its claude processes much of the time,
# so twice the cores keeps them busy (app/tiers_test.go has the two tiers;
# 8 ran slower, the CPU-bound tests crowding each other).
# GORACE=atexit_sleep_ms=0: the race detector's runtime sleeps a second as
# each test binary exits, for a race in a goroutine still running; the
# tests end their goroutines.
# -ldflags=-w: no DWARF in the test binaries, which nothing here debugs
# (stack traces and race reports read the symbol table, which stays):
# linking internal/app's took 1.4-1.7 CPU-seconds instead of 2.1-2.4, and
# every test binary is linked afresh on each run.
# -vet=off: go test would vet every package it tests (a subset of vet's
# checks) before running it, and `make vet` runs all of them on the same
# race build afterwards; from an empty Go cache the compile-and-vet of
# every test binary then took 133-138 CPU-seconds instead of 156-180
# (and vet after it 13-19 either way), and a test binary starts as soon
# as it is linked.
TESTFLAGS := -ldflags=-w -vet=off
RACE := GORACE=atexit_sleep_ms=0 go test -race $(TESTFLAGS) -count=1 -parallel 4 -timeout 40m
# The plain (race-free) builds first, in one go command: the vibe-test
# binary and the claude stand-in the tests start (they build them with `go
# build`, then only linking), whose packages the calibration's test binary
# also uses. Left to the tests, three go commands compiled the same
# packages side by side, each its own copy: from an empty Go cache the
# three builds at once took 122 CPU-seconds, one after another 73.
PLAIN_BINARIES := . ./internal/fakeclaude/cmd/fakeclaude
# GOFLAGS=-trimpath, for every go command of the step and the go builds
# the tests start: the build cache then keys a package by its import path
# rather than by the folder it was cloned into, so a fresh clone reuses
# what an earlier clone compiled where the Go cache is kept (a CI
# machine's, a developer's). Without it, compiling and linking every test
# binary of a fresh clone took 69 CPU-seconds with the dependencies
# already cached, with it 28 (links alone); and `make vet` 20 against 1.
# From an empty cache it changes nothing.
test: export GOFLAGS := -trimpath $(GOFLAGS)
test: assets
	mkdir -p $(VIBE_TEST_ARTIFACTS)
	go build $(PLAIN_BINARIES)
	go test $(TESTFLAGS) -count=1 -timeout 15m ./internal/calibrate/... & cal=$$!; \
	$(RACE) $$(go list ./... | grep -v -e '/calibrate'); race=$$?; \
	$(MAKE) --no-print-directory vet VETFLAGS=-race; vet=$$?; \
	wait $$cal; cal=$$?; \
	test $$race -eq 0 -a $$vet -eq 0 -a $$cal -eq 0

# Re-record the stream-json transcripts and request bodies the parser and
# classifier tests read (internal/claude/testdata/transcripts, internal/scripted/testdata/requests)
# with the pinned CLI against the scripted server; each folder's index.json
# names the CLI version that made them. The Codex CLI's likewise
# (internal/codex/testdata, internal/scripted/testdata/responses).
fixtures: tools
	go run ./internal/scripted/cmd/record -claude $(TOOLS_BIN)/claude
	go test -tags recordfixtures ./internal/codex -run '^TestRecordFixtures$$' -count=1

# Each fuzz target for FUZZTIME (default 60s).
FUZZTIME ?= 60s
fuzz: assets
	go test ./internal/claude -run '^$$' -fuzz FuzzParseTurn -fuzztime $(FUZZTIME)
	go test ./internal/codex -run '^$$' -fuzz FuzzParseTurn -fuzztime $(FUZZTIME)
	go test ./internal/skill -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	go test ./internal/plan -run '^$$' -fuzz FuzzLoadConfig -fuzztime $(FUZZTIME)
	go test ./internal/judge -run '^$$' -fuzz FuzzParseAnswer -fuzztime $(FUZZTIME)
	go test ./internal/redact -run '^$$' -fuzz FuzzStringMatchesRegexps -fuzztime $(FUZZTIME)

# GoReleaser, pinned: installed once from the Go module proxy into tools/bin
# (git-ignored) under a name that holds its version, so changing the pin
# installs the new one. Building it takes minutes; clean keeps it.
GORELEASER_VERSION := v2.15.1
GORELEASER := $(CURDIR)/tools/bin/goreleaser-$(GORELEASER_VERSION)

$(GORELEASER):
	mkdir -p tools/bin/install
	GOBIN=$(CURDIR)/tools/bin/install go install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
	mv tools/bin/install/goreleaser $@
	rmdir tools/bin/install

# The four release archives, checksums and metadata in dist/ (git-ignored),
# versioned as a snapshot; .goreleaser.yaml's before hook runs make assets.
release-snapshot: $(GORELEASER)
	$(GORELEASER) release --snapshot --clean

# Builds the snapshot, then runs the linux/amd64 binary from its archive on
# the demo and opens its chart.html in headless Chromium (release/). Not part
# of make test: it cross-compiles four binaries.
release-check: release-snapshot
	VIBE_TEST_RELEASE_DIST=$(CURDIR)/dist go test -tags release -count=1 -v -run TestReleaseArchive ./internal/release

clean:
	rm -rf vibe-test dist tools/node_modules internal/chart/assets/echarts.min.js
