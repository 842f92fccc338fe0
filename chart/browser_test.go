//go:build linux

package chart

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// chromium is Debian's headless browser (apt package "chromium").
const chromium = "/usr/bin/chromium"

var screenshot = flag.String("screenshot", "", "TestBrowser also saves a PNG of the chart to this path")

// TestBrowser opens a rendered chart.html in headless Chromium, with no
// network, and checks what a reader would get: the chart is drawn (SVG in
// the chart's div, with its title, marks and stamp), a tooltip shows
// hostile text as text, and no planted payload runs.
func TestBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: install the Debian package chromium (apt-get install -y chromium)", chromium)
		}
		t.Skipf("%s is missing (apt-get install -y chromium)", chromium)
	}
	if !HasScript() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chart/assets/echarts.min.js is not embedded: %s", fetchHint)
		}
		t.Skipf("chart/assets/echarts.min.js is absent: %s", fetchHint)
	}

	d := plantHostile(run(true))
	// A payload that runs when inserted as HTML; a <script> inserted with
	// innerHTML never runs, so it alone would prove nothing.
	d.Conversations[0].Turns[5].FailedCriteria = append(d.Conversations[0].Turns[5].FailedCriteria, `c9: <img src=x onerror="alert(9)">`)
	var page bytes.Buffer
	if err := Render(&page, d); err != nil {
		t.Fatal(err)
	}

	// The harness around the page: an alert that leaves a mark in the DOM,
	// before anything else runs; and after the chart, the tooltip of conv
	// 1's turn 6 (data index 1: turns 1, 6, 10 are its judged points),
	// which carries the escape reason and every planted criterion.
	html := strings.Replace(page.String(), "<head>",
		`<head><script>window.alert = function () { document.documentElement.setAttribute("data-alerted", "yes") }</script>`, 1)
	html += `<script>
echarts.getInstanceByDom(document.getElementById("decay")).dispatchAction({type: "showTip", seriesIndex: 0, dataIndex: 1});
</script>`
	dir := t.TempDir()
	file := filepath.Join(dir, "chart.html")
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}

	dom := runChromium(t, dir, "--dump-dom", "file://"+file)

	if regexp.MustCompile(`<html[^>]*data-alerted`).MatchString(dom) {
		t.Error("a planted payload ran: alert was called")
	}
	if !regexp.MustCompile(`id="decay"[^>]*>\s*<div[^>]*>\s*<svg`).MatchString(dom) {
		t.Fatalf("no SVG drawn in the chart's div; DOM:\n%s", tail(dom, 3000))
	}
	drawn := map[string]string{
		"title":            `&lt;script&gt;alert("x")&lt;/script&gt; title</text>`,
		"stamp":            ">BASELINE GATE BYPASSED: turn 1 already failed, so this is not a decay curve.</text>",
		"escape mark":      ">escape</text>",
		"judge error mark": ">judge error</text>",
		"context axis":     ">context tokens</text>",
	}
	for what, want := range drawn {
		if !strings.Contains(dom, want) {
			t.Errorf("the %s is not drawn: no %q in the DOM", what, want)
		}
	}
	// In a DOM dump, text is serialised with < as &lt;, elements are not:
	// the tooltip must hold the planted markup as text.
	for _, want := range []string{
		`escape hatch:</b> &lt;script&gt;alert("x")&lt;/script&gt;<br>`,
		`• c1: &lt;script&gt;alert("x")&lt;/script&gt;<br>`,
		`• c2: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;<br>`,
		`• c3: {a} {@x} __f__ &amp; ' "<br>`,
		`• c9: &lt;img src=x onerror="alert(9)"&gt;`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the tooltip does not show %q as text; DOM:\n%s", want, tail(dom, 3000))
		}
	}
	// The echarts script itself holds '<img src="'; the planted one as an
	// element would serialise as below.
	if strings.Contains(dom, `<img src="x"`) {
		t.Error("a planted <img> became an element")
	}

	if *screenshot != "" {
		runChromium(t, dir, "--window-size=1100,700", "--screenshot="+*screenshot, "file://"+file)
		t.Logf("screenshot: %s", *screenshot)
	}
}

// runChromium runs headless Chromium offline and returns its stdout,
// failing the test on an uncaught JavaScript error.
// Chromium starts helper processes; it runs in its own process group so
// that a timeout ends all of them, SIGTERM first.
func runChromium(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	args = append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
		// No host resolves: the page must draw with no network at all.
		"--host-resolver-rules=MAP * ~NOTFOUND",
		// Console messages, uncaught errors included, go to stderr.
		"--enable-logging=stderr",
		// Let timers run (echarts defers some drawing) before the dump.
		"--virtual-time-budget=5000",
	}, args...)
	cmd := exec.CommandContext(ctx, chromium, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\nstderr:\n%s", strings.Join(args, " "), err, tail(stderr.String(), 3000))
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") && strings.Contains(line, "Uncaught") {
			t.Errorf("the page threw: %s", line)
		}
	}
	return stdout.String()
}

// tail keeps failure output readable: the DOM holds the 650 KB script.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
