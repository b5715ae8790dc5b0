package console_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// browser drives a headless Chromium through chromedriver's W3C WebDriver
// HTTP API: no client library, no node at test time.
type browser struct {
	t       *testing.T
	base    string // chromedriver's URL
	session string
	shots   string // folder of the screenshots
}

// elementKey is the W3C name of an element reference in JSON.
const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// startBrowser starts chromedriver and a headless Chromium session; the
// test is skipped with a message when either is not installed.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("Chromium is not installed (Debian: apt-get install chromium chromium-driver): the browser test needs it")
	}
	driver, err := exec.LookPath("chromedriver")
	if err != nil {
		t.Skip("chromedriver is not installed (Debian: apt-get install chromium-driver): the browser test needs it")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(driver, fmt.Sprintf("--port=%d", port))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	b := &browser{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), shots: os.Getenv("CRUCIBLE_SCREENSHOTS")}
	if b.shots == "" {
		b.shots = t.TempDir()
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if resp, err := http.Get(b.base + "/status"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("chromedriver did not answer within 20 s")
		}
		time.Sleep(100 * time.Millisecond) // polling a process's port: there is no event to wait for
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": []string{
			"--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1360,1150",
			"--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist",
		}},
	}}}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	b.call("POST", "/session", caps, &created)
	b.session = created.SessionID
	t.Cleanup(func() { b.call("DELETE", "/session/"+b.session, nil, nil) })
	return b
}

// call sends one WebDriver command and decodes its value into out.
func (b *browser) call(method, path string, body, out any) {
	b.t.Helper()
	if err := b.try(method, path, body, out); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) try(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var res struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return fmt.Errorf("webdriver %s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("webdriver %s %s: %s", method, path, res.Value)
	}
	if out != nil {
		return json.Unmarshal(res.Value, out)
	}
	return nil
}

func (b *browser) path(p string) string { return "/session/" + b.session + p }

func (b *browser) open(url string) {
	b.call("POST", b.path("/url"), map[string]string{"url": url}, nil)
}

// script runs JavaScript in the page and decodes its result into out.
func (b *browser) script(js string, out any, args ...any) {
	b.t.Helper()
	if args == nil {
		args = []any{}
	}
	b.call("POST", b.path("/execute/sync"), map[string]any{"script": js, "args": args}, out)
}

// find returns the first element matching a CSS selector, "" when none.
func (b *browser) find(css string) string {
	var el map[string]string
	if err := b.try("POST", b.path("/element"), map[string]string{"using": "css selector", "value": css}, &el); err != nil {
		if !strings.Contains(err.Error(), "no such element") {
			b.t.Logf("find %s: %v", css, err)
		}
		return ""
	}
	return el[elementKey]
}

// wait polls cond every 200 ms until it holds or timeout passes (the page
// changes on the server's events; WebDriver has no event to wait on).
func (b *browser) wait(what string, timeout time.Duration, cond func() bool) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			b.screenshot("failed-" + filepath.Base(what))
			b.t.Fatalf("waited %s for %s", timeout, what)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitFor waits for an element matching css and returns it.
func (b *browser) waitFor(css string, timeout time.Duration) string {
	b.t.Helper()
	var el string
	b.wait(css, timeout, func() bool { el = b.find(css); return el != "" })
	return el
}

func (b *browser) click(el string) {
	b.call("POST", b.path("/element/"+el+"/click"), map[string]any{}, nil)
}

// clickCSS clicks the first element matching css, finding it again when
// the page replaced it between the find and the click (live updates
// re-render rows).
func (b *browser) clickCSS(css string) {
	b.t.Helper()
	b.wait("a click on "+css, 30*time.Second, func() bool {
		el := b.find(css)
		if el == "" {
			return false
		}
		err := b.try("POST", b.path("/element/"+el+"/click"), map[string]any{}, nil)
		if err != nil && !strings.Contains(err.Error(), "stale element") {
			b.t.Fatal(err)
		}
		return err == nil
	})
}

// textCSS returns the text of the first element matching css, "" when
// none (read in the page, so an element re-rendered meanwhile is no
// error).
func (b *browser) textCSS(css string) string {
	var s *string
	b.script(`const e = document.querySelector(arguments[0]); return e ? e.textContent : null`, &s, css)
	if s == nil {
		return ""
	}
	return *s
}

func (b *browser) typeInto(el, s string) {
	b.call("POST", b.path("/element/"+el+"/clear"), map[string]any{}, nil)
	b.call("POST", b.path("/element/"+el+"/value"), map[string]any{"text": s}, nil)
}

// screenshot saves the page as <shots>/<name>.png.
func (b *browser) screenshot(name string) string {
	var data string
	if err := b.try("GET", b.path("/screenshot"), nil, &data); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	png, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	path := filepath.Join(b.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	b.t.Logf("screenshot %s", path)
	return path
}
