package testutil

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// DumpDOMTimeout bounds one DumpDOM run.
const DumpDOMTimeout = 60 * time.Second

// ChromiumInstallHint is the fix for a missing browser.
const ChromiumInstallHint = "apt-get install -y chromium"

// ChromiumPath finds the Chromium binary: $LANDSLIDE_CHROMIUM if set, else
// chromium (Debian package "chromium", /usr/bin/chromium),
// chromium-browser or google-chrome on PATH.
func ChromiumPath() (string, error) {
	if p := os.Getenv("LANDSLIDE_CHROMIUM"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("LANDSLIDE_CHROMIUM=%s: %v (install Chromium: %s)", p, err, ChromiumInstallHint)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "/usr/bin/chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("chromium not found on PATH (install it: %s)", ChromiumInstallHint)
}

// DumpDOM loads htmlPath in headless Chromium and returns the DOM as the
// browser built it (chromium --headless --dump-dom). It uses a throwaway
// profile, kills the browser's whole process group when done, and gives up
// after DumpDOMTimeout. Extra Chromium flags (e.g. --window-size=W,H) may
// be given.
func DumpDOM(htmlPath string, extra ...string) (string, error) {
	bin, err := ChromiumPath()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", err
	}
	profile, err := os.MkdirTemp("", "landslide-chromium-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(profile)

	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	ctx, cancel := context.WithTimeout(context.Background(), DumpDOMTimeout)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
		"--user-data-dir=" + profile}, extra...)
	cmd := exec.CommandContext(ctx, bin, append(args, "--dump-dom", u.String())...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	ownProcessGroup(cmd)
	err = cmd.Start()
	if err == nil {
		err = cmd.Wait()
		killProcessGroup(cmd) // helpers the browser left behind
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return "", fmt.Errorf("chromium --dump-dom %s: timed out after %v%s", abs, DumpDOMTimeout, stderrTail(stderr.Bytes()))
	case err != nil:
		return "", fmt.Errorf("chromium --dump-dom %s: %v%s", abs, err, stderrTail(stderr.Bytes()))
	}
	dom := stdout.String()
	if !strings.Contains(strings.ToLower(dom), "<html") {
		return "", fmt.Errorf("chromium --dump-dom %s: no document in the output (%d bytes)%s", abs, len(dom), stderrTail(stderr.Bytes()))
	}
	return dom, nil
}

// stderrTail is the end of Chromium's stderr without its D-Bus noise.
func stderrTail(b []byte) string {
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, "dbus") {
			keep = append(keep, l)
		}
	}
	if len(keep) > 10 {
		keep = keep[len(keep)-10:]
	}
	if len(keep) == 0 {
		return ""
	}
	return "\nchromium stderr:\n" + strings.Join(keep, "\n")
}
