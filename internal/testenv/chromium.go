//go:build unix

package testenv

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ChromiumPath is Debian's headless browser (apt package "chromium"), which
// the chart's browser test and the release check open chart.html in.
const ChromiumPath = "/usr/bin/chromium"

// Chromium runs headless Chromium offline with a profile in dir and
// returns its stdout, failing the test on an uncaught JavaScript error.
// Chromium starts helper processes; it runs in its own process group so
// that a timeout ends all of them, SIGTERM first.
func Chromium(t testing.TB, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	args = append(append(chromiumFlags(dir),
		// Console messages, uncaught errors included, go to stderr.
		"--enable-logging=stderr",
		// Let timers run (echarts defers some drawing) before the dump.
		"--virtual-time-budget=5000",
	), args...)
	cmd := exec.CommandContext(ctx, ChromiumPath, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\nstderr:\n%s", strings.Join(args, " "), err, Tail(stderr.String(), 3000))
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") && strings.Contains(line, "Uncaught") {
			t.Errorf("the page threw: %s", line)
		}
	}
	return stdout.String()
}

// chartSVG finds the SVG that echarts draws into chart.html's chart div
// (id "decay") in a DOM dump.
var chartSVG = regexp.MustCompile(`(?s)id="decay"[^>]*>\s*<div[^>]*>\s*(<svg.*?</svg>)`)

// ChartSVG returns the SVG echarts drew in chart.html's chart div, or ""
// when the dump (Chromium's --dump-dom) shows none: the chart did not draw.
func ChartSVG(dom string) string {
	if m := chartSVG.FindStringSubmatch(dom); m != nil {
		return m[1]
	}
	return ""
}

// Tail keeps failure output readable: a chart's DOM holds the 650 KB
// echarts script.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
