//go:build unix

package testenv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Browser is one headless Chromium that opens several pages, each in its
// own tab, driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe): a Chromium start costs about a CPU-second, as
// much as drawing a chart page, and Chromium (the function) starts one per
// page. Open does what Chromium's --dump-dom, --screenshot,
// --window-size and --virtual-time-budget=5000 do, and fails the test on an
// uncaught JavaScript error of its page. Tabs may be opened from parallel
// subtests.
type Browser struct {
	cmd    *exec.Cmd
	w      *os.File // commands, the browser's fd 3
	stderr lockedBuffer

	mu      sync.Mutex
	nextID  int
	replies map[int]chan cdpMessage
	events  map[string]chan cdpMessage // by session
	err     error                      // why the pipe closed
	closed  chan struct{}
}

// lockedBuffer is a bytes.Buffer that a process writes while a test may
// read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// cdpMessage is a reply (ID set) or an event (Method set).
type cdpMessage struct {
	ID        int             `json:"id"`
	Method    string          `json:"method"`
	SessionID string          `json:"sessionId"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// StartBrowser starts a headless Chromium, offline, with a profile in dir;
// the test's cleanup ends it.
func StartBrowser(t testing.TB, dir string) *Browser {
	t.Helper()
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &Browser{w: cmdW, replies: map[int]chan cdpMessage{}, events: map[string]chan cdpMessage{}, closed: make(chan struct{})}
	b.cmd = exec.Command(ChromiumPath, append(chromiumFlags(dir), "--remote-debugging-pipe")...)
	b.cmd.ExtraFiles = []*os.File{cmdR, outW} // fds 3 and 4
	b.cmd.Stderr = &b.stderr
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	b.cmd.WaitDelay = 10 * time.Second // a helper left holding stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmdR.Close()
	outW.Close()
	go b.read(outR)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = b.call(ctx, "", "Browser.close", nil)
		select {
		case <-b.closed: // it closed the pipe on its way out
		case <-ctx.Done():
			_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL) // its helpers too
		}
		_ = b.cmd.Wait()
		cmdW.Close()
	})
	return b
}

// chromiumFlags are the flags of every headless Chromium run here.
func chromiumFlags(dir string) []string {
	return []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
		// No host resolves: the page must draw with no network at all.
		"--host-resolver-rules=MAP * ~NOTFOUND",
		"--hide-scrollbars",
	}
}

// read dispatches what the browser writes (messages ended by a NUL byte)
// until the pipe closes.
func (b *Browser) read(r *os.File) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	var err error
	for {
		var line []byte
		if line, err = br.ReadBytes(0); err != nil {
			break
		}
		var m cdpMessage
		if err = json.Unmarshal(line[:len(line)-1], &m); err != nil {
			break
		}
		b.mu.Lock()
		if m.ID != 0 {
			if c, ok := b.replies[m.ID]; ok {
				c <- m
				delete(b.replies, m.ID)
			}
		} else if c, ok := b.events[m.SessionID]; ok && m.Method != "" {
			select {
			case c <- m:
			default: // a page no one waits on any more
			}
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	b.err = fmt.Errorf("the browser's pipe closed: %v", err)
	b.mu.Unlock()
	close(b.closed)
}

// call sends a command (to a tab's session, or to the browser for "")
// and waits for its result.
func (b *Browser) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	if params == nil {
		params = struct{}{}
	}
	reply := make(chan cdpMessage, 1)
	b.mu.Lock()
	if b.err != nil {
		defer b.mu.Unlock()
		return nil, b.err
	}
	b.nextID++
	id := b.nextID
	b.replies[id] = reply
	msg, err := json.Marshal(struct {
		ID        int    `json:"id"`
		Method    string `json:"method"`
		Params    any    `json:"params"`
		SessionID string `json:"sessionId,omitempty"`
	}{id, method, params, session})
	if err == nil {
		_, err = b.w.Write(append(msg, 0))
	}
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case m := <-reply:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-b.closed:
		return nil, b.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Open loads url in a new tab (Load), returns its DOM and, with shot,
// saves a PNG of it there, then closes the tab.
func (b *Browser) Open(t testing.TB, url string, width, height int, shot string) string {
	t.Helper()
	tab := b.Load(t, url, width, height)
	defer tab.Close()
	if shot != "" {
		tab.Screenshot(t, shot)
	}
	return tab.DOM(t)
}

// Tab is a page open in the browser, for one test.
type Tab struct {
	b       *Browser
	t       testing.TB
	ctx     context.Context
	cancel  context.CancelFunc
	target  string
	session string
	events  chan cdpMessage
}

// Load opens url in a new tab of width×height pixels (0×0: Chromium's
// default window) and lets its timers run for 5 s of virtual time after
// the load. An uncaught error of the page, then or later, fails the test.
// The caller closes the tab.
func (b *Browser) Load(t testing.TB, url string, width, height int) *Tab {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	tab := &Tab{b: b, t: t, ctx: ctx, cancel: cancel, events: make(chan cdpMessage, 256)}
	tab.check(tab.load(url, width, height))
	return tab
}

func (tab *Tab) load(url string, width, height int) error {
	var target struct{ TargetID string }
	if err := tab.browserCall("Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return err
	}
	tab.target = target.TargetID
	var attached struct{ SessionID string }
	if err := tab.browserCall("Target.attachToTarget", map[string]any{"targetId": tab.target, "flatten": true}, &attached); err != nil {
		return err
	}
	tab.session = attached.SessionID
	tab.b.mu.Lock()
	tab.b.events[tab.session] = tab.events
	tab.b.mu.Unlock()
	for _, method := range []string{"Page.enable", "Runtime.enable"} {
		if err := tab.call(method, nil, nil); err != nil {
			return err
		}
	}
	if width > 0 {
		if err := tab.call("Emulation.setDeviceMetricsOverride",
			map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
			return err
		}
	}
	if err := tab.call("Page.navigate", map[string]any{"url": url}, nil); err != nil {
		return err
	}
	if err := tab.wait("Page.loadEventFired"); err != nil {
		return err
	}
	return tab.runTimers()
}

// runTimers lets 5 s of virtual time run, as --virtual-time-budget=5000
// does: echarts defers some drawing.
func (tab *Tab) runTimers() error {
	if err := tab.call("Emulation.setVirtualTimePolicy",
		map[string]any{"policy": "pauseIfNetworkFetchesPending", "budget": 5000}, nil); err != nil {
		return err
	}
	return tab.wait("Emulation.virtualTimeBudgetExpired")
}

// Run evaluates a script in the page, then lets its timers run as Load
// does.
func (tab *Tab) Run(t testing.TB, script string) {
	t.Helper()
	var res struct {
		ExceptionDetails *struct{ Text string }
	}
	err := tab.call("Runtime.evaluate", map[string]any{"expression": script}, &res)
	if err == nil && res.ExceptionDetails != nil {
		err = fmt.Errorf("the script threw: %s", res.ExceptionDetails.Text)
	}
	if err == nil {
		err = tab.runTimers()
	}
	tab.check(err)
}

// DOM returns the page as --dump-dom prints it: the doctype, then the
// document element's outer HTML.
func (tab *Tab) DOM(t testing.TB) string {
	t.Helper()
	var dom struct {
		Result struct{ Value string }
	}
	tab.check(tab.call("Runtime.evaluate", map[string]any{"returnByValue": true,
		"expression": `(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + "\n" : "") + document.documentElement.outerHTML`}, &dom))
	tab.drain()
	return dom.Result.Value + "\n"
}

// Screenshot saves a PNG of the tab at path.
func (tab *Tab) Screenshot(t testing.TB, path string) {
	t.Helper()
	var png struct{ Data string }
	err := tab.call("Page.captureScreenshot", map[string]any{"format": "png"}, &png)
	var data []byte
	if err == nil {
		data, err = base64.StdEncoding.DecodeString(png.Data)
	}
	if err == nil && len(data) == 0 {
		err = errors.New("an empty screenshot")
	}
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	tab.check(err)
}

// Close closes the tab, failing the test on the errors its page threw.
func (tab *Tab) Close() {
	tab.drain()
	tab.b.mu.Lock()
	delete(tab.b.events, tab.session)
	tab.b.mu.Unlock()
	if tab.target != "" {
		_, _ = tab.b.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": tab.target})
	}
	tab.cancel()
}

// check fails the test on err, with the browser's stderr.
func (tab *Tab) check(err error) {
	if err != nil {
		tab.t.Helper()
		tab.Close()
		tab.t.Fatalf("chromium: %v\nstderr:\n%s", err, Tail(tab.b.stderr.String(), 3000))
	}
}

// browserCall and call send a command to the browser, or to the tab, and
// decode its result into out (when not nil).
func (tab *Tab) browserCall(method string, params, out any) error {
	return tab.send("", method, params, out)
}

func (tab *Tab) call(method string, params, out any) error {
	return tab.send(tab.session, method, params, out)
}

func (tab *Tab) send(session, method string, params, out any) error {
	res, err := tab.b.call(tab.ctx, session, method, params)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(res, out)
}

// wait reads the tab's events until one named method, failing the test on
// each uncaught error on the way.
func (tab *Tab) wait(method string) error {
	for {
		select {
		case m := <-tab.events:
			switch m.Method {
			case method:
				return nil
			case "Runtime.exceptionThrown":
				threw(tab.t, m)
			}
		case <-tab.b.closed:
			return tab.b.err
		case <-tab.ctx.Done():
			return fmt.Errorf("waiting for %s: %w", method, tab.ctx.Err())
		}
	}
}

// drain fails the test on the errors the page threw since the last wait.
func (tab *Tab) drain() {
	for {
		select {
		case m := <-tab.events:
			if m.Method == "Runtime.exceptionThrown" {
				threw(tab.t, m)
			}
		default:
			return
		}
	}
}

// threw fails the test with an uncaught error of its page.
func threw(t testing.TB, m cdpMessage) {
	t.Helper()
	var e struct {
		ExceptionDetails struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	_ = json.Unmarshal(m.Params, &e)
	t.Errorf("the page threw: %s %s", e.ExceptionDetails.Text, e.ExceptionDetails.Exception.Description)
}
