# vibe-test: the two set-up commands are `make demo` and `make test`.
# Everything external is pinned in tools/package.json (+ package-lock.json):
# the Claude Code CLI the tests and demo run, and the echarts script that is
# embedded into the binary so chart.html opens offline.

SHELL := /bin/bash
TOOLS_BIN := $(CURDIR)/tools/node_modules/.bin
export PATH := $(TOOLS_BIN):$(PATH)
# The browser test keeps its screenshots here (git-ignored).
export VIBE_TEST_ARTIFACTS ?= $(CURDIR)/artifacts

.PHONY: tools assets build demo test vet fuzz fixtures clean

tools: tools/node_modules/.stamp

tools/node_modules/.stamp: tools/package.json tools/package-lock.json
	npm ci --prefix tools --no-audit --no-fund
	@$(TOOLS_BIN)/claude --version
	@touch $@

assets: tools
	sh scripts/fetch-echarts.sh

build: assets
	go build -o vibe-test .

demo: build
	./vibe-test demo

vet:
	go vet ./...
	@test -z "$$(gofmt -l . | tee /dev/stderr)" || (echo "gofmt: files above need formatting" >&2; exit 1)

# The calibration simulations (calibrate/) run without the race detector:
# they are arithmetic over thousands of simulated runs, each grid cell on a
# goroutine that shares nothing but its own slot of the results (calibrate.Each),
# which -race would slow tenfold.
# -parallel 4: an app test waits on its claude processes much of the time, so
# twice the cores keeps them busy (app/tiers_test.go has the two tiers).
test: assets vet
	mkdir -p $(VIBE_TEST_ARTIFACTS)
	go test -race -count=1 -parallel 4 -timeout 40m $$(go list ./... | grep -v '/calibrate')
	go test -count=1 -timeout 15m ./calibrate/...

# Re-record the stream-json transcripts and request bodies the parser and
# classifier tests read (claude/testdata/transcripts, scripted/testdata/requests)
# with the pinned CLI against the scripted server; each folder's index.json
# names the CLI version that made them.
fixtures: tools
	go run ./scripted/cmd/record -claude $(TOOLS_BIN)/claude

# Each fuzz target for FUZZTIME (default 60s).
FUZZTIME ?= 60s
fuzz: assets
	go test ./claude -run '^$$' -fuzz FuzzParseTurn -fuzztime $(FUZZTIME)
	go test ./skill -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	go test ./plan -run '^$$' -fuzz FuzzLoadConfig -fuzztime $(FUZZTIME)
	go test ./judge -run '^$$' -fuzz FuzzParseAnswer -fuzztime $(FUZZTIME)

clean:
	rm -rf vibe-test tools/node_modules chart/assets/echarts.min.js
