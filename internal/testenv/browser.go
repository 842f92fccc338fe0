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
		case <-b.closed:
		case <-ctx.Done():
		}
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL) // its helpers too
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

// Open loads url in a new tab of width×height pixels (0×0: Chromium's
// default window), lets its timers run for 5 s of virtual time after the
// load, and returns its DOM as --dump-dom prints it; with shot, it saves a
// PNG of the tab there. An uncaught error of the page fails the test.
func (b *Browser) Open(t testing.TB, url string, width, height int, shot string) string {
	t.Helper()
	dom, err := b.open(t, url, width, height, shot)
	if err != nil {
		t.Fatalf("chromium, %s: %v\nstderr:\n%s", url, err, Tail(b.stderr.String(), 3000))
	}
	return dom
}

func (b *Browser) open(t testing.TB, url string, width, height int, shot string) (string, error) {
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	var target struct{ TargetID string }
	if res, err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}); err != nil {
		return "", err
	} else if err := json.Unmarshal(res, &target); err != nil {
		return "", err
	}
	defer func() {
		_, _ = b.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": target.TargetID})
	}()
	var attached struct{ SessionID string }
	if res, err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}); err != nil {
		return "", err
	} else if err := json.Unmarshal(res, &attached); err != nil {
		return "", err
	}
	s := attached.SessionID
	events := make(chan cdpMessage, 256)
	b.mu.Lock()
	b.events[s] = events
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.events, s)
		b.mu.Unlock()
	}()
	for _, c := range []struct {
		method string
		params any
	}{
		{"Page.enable", nil},
		{"Runtime.enable", nil},
	} {
		if _, err := b.call(ctx, s, c.method, c.params); err != nil {
			return "", err
		}
	}
	if width > 0 {
		if _, err := b.call(ctx, s, "Emulation.setDeviceMetricsOverride",
			map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}); err != nil {
			return "", err
		}
	}
	if _, err := b.call(ctx, s, "Page.navigate", map[string]any{"url": url}); err != nil {
		return "", err
	}
	// wait reads the tab's events until one named method, failing the
	// test on each uncaught error on the way.
	wait := func(method string) error {
		for {
			select {
			case m := <-events:
				switch m.Method {
				case method:
					return nil
				case "Runtime.exceptionThrown":
					threw(t, m)
				}
			case <-b.closed:
				return b.err
			case <-ctx.Done():
				return fmt.Errorf("waiting for %s: %w", method, ctx.Err())
			}
		}
	}
	if err := wait("Page.loadEventFired"); err != nil {
		return "", err
	}
	if _, err := b.call(ctx, s, "Emulation.setVirtualTimePolicy",
		map[string]any{"policy": "pauseIfNetworkFetchesPending", "budget": 5000}); err != nil {
		return "", err
	}
	if err := wait("Emulation.virtualTimeBudgetExpired"); err != nil {
		return "", err
	}
	var dom struct {
		Result struct{ Value string }
	}
	if res, err := b.call(ctx, s, "Runtime.evaluate", map[string]any{"returnByValue": true,
		"expression": `(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + "\n" : "") + document.documentElement.outerHTML`}); err != nil {
		return "", err
	} else if err := json.Unmarshal(res, &dom); err != nil {
		return "", err
	}
	if shot != "" {
		var png struct{ Data string }
		if res, err := b.call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png"}); err != nil {
			return "", err
		} else if err := json.Unmarshal(res, &png); err != nil {
			return "", err
		}
		data, err := base64.StdEncoding.DecodeString(png.Data)
		if err != nil {
			return "", err
		}
		if len(data) == 0 {
			return "", errors.New("an empty screenshot")
		}
		if err := os.WriteFile(shot, data, 0o644); err != nil {
			return "", err
		}
	}
	// Errors the page threw by the end.
	for {
		select {
		case m := <-events:
			if m.Method == "Runtime.exceptionThrown" {
				threw(t, m)
			}
		default:
			return dom.Result.Value + "\n", nil
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
