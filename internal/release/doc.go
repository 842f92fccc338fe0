// Package release holds the check of a release archive, run by
// `make release-check` after `make release-snapshot`: the linux/amd64
// binary, taken from its archive as a user would (checksum, extract), runs
// the demo, and the chart.html it writes draws in headless Chromium. It has
// no code of its own; the check is release_test.go, built only with
// -tags release (make test never cross-compiles the four release binaries)
// and reading the GoReleaser output folder VIBE_TEST_RELEASE_DIST names.
package release
