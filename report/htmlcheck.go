package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// This file checks a rendered trace the way a browser sees it: DumpDOM
// loads an HTML file in headless Chromium and returns the serialised DOM,
// and CheckTraceDOM validates that DOM against the Trace that was
// rendered. Tests (here and end to end) use both.

// DumpDOMTimeout bounds one DumpDOM run.
const DumpDOMTimeout = 60 * time.Second

// chromiumInstallHint is the fix for a missing browser.
const chromiumInstallHint = "apt-get install -y chromium"

// ChromiumPath finds the Chromium binary: $LANDSLIDE_CHROMIUM if set, else
// chromium (Debian package "chromium", /usr/bin/chromium),
// chromium-browser or google-chrome on PATH.
func ChromiumPath() (string, error) {
	if p := os.Getenv("LANDSLIDE_CHROMIUM"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("LANDSLIDE_CHROMIUM=%s: %v (install Chromium: %s)", p, err, chromiumInstallHint)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "/usr/bin/chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("chromium not found on PATH (install it: %s)", chromiumInstallHint)
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

// CheckTraceDOM validates a DOM dumped by DumpDOM (or any HTML) against the
// Trace it renders: the summary section and bug message; table#trace with a
// thead of len(Columns())+1 th ("#", then "Thread N" in column order); one
// tbody tr per step with data-thread = the step's thread and the classes
// "preempted"/"failure" exactly when the step has them; len(Columns())+1
// cells per row, exactly one of class "active", in the step thread's
// column, holding the PP badge (class "pp pp-KIND", text = the PP label);
// the other threads' cells empty.
func CheckTraceDOM(dom string, t *Trace) error {
	root := parseDOM(dom)
	var errs []error
	fail := func(format string, args ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}

	if root.find(func(n *domNode) bool { return n.Attrs["id"] == "summary" }) == nil {
		fail("no element with id=\"summary\"")
	}
	if t.Bug != nil {
		m := root.find(func(n *domNode) bool { return n.hasClass("bug-message") })
		switch {
		case m == nil:
			fail("no element with class \"bug-message\"")
		case strings.TrimSpace(m.text()) != strings.TrimSpace(t.Bug.Message):
			fail("bug message is %q, want %q", strings.TrimSpace(m.text()), strings.TrimSpace(t.Bug.Message))
		}
	}

	table := root.find(func(n *domNode) bool { return n.Tag == "table" && n.Attrs["id"] == "trace" })
	if table == nil {
		fail("no <table id=\"trace\">")
		return errors.Join(errs...)
	}
	cols := t.Columns()
	colOf := map[int32]int{}
	for i, c := range cols {
		colOf[c] = i + 1
	}

	// Header.
	var ths []*domNode
	for _, thead := range table.childrenTagged("thead") {
		ths = append(ths, thead.all(func(n *domNode) bool { return n.Tag == "th" })...)
	}
	if len(ths) != len(cols)+1 {
		fail("thead has %d th, want %d (\"#\" + %d threads)", len(ths), len(cols)+1, len(cols))
	} else {
		if h := strings.TrimSpace(ths[0].text()); h != "#" {
			fail("first header cell is %q, want \"#\"", h)
		}
		for i, c := range cols {
			want := fmt.Sprintf("Thread %d", c)
			if h := collapseSpace(ths[i+1].text()); h != want {
				fail("header cell %d is %q, want %q", i+1, h, want)
			}
		}
	}

	// Body.
	var rows []*domNode
	for _, tbody := range table.childrenTagged("tbody") {
		rows = append(rows, tbody.childrenTagged("tr")...)
	}
	// A table without explicit tbody (not from a browser): rows are direct.
	rows = append(rows, table.childrenTagged("tr")...)
	if len(rows) != len(t.Steps) {
		fail("tbody has %d tr, want %d (one per step)", len(rows), len(t.Steps))
	}
	for i, tr := range rows {
		if i >= len(t.Steps) {
			break
		}
		s := t.Steps[i]
		where := fmt.Sprintf("row %d (step #%d)", i, s.Index)
		if dt, ok := tr.Attrs["data-thread"]; !ok {
			fail("%s: no data-thread attribute", where)
		} else if v, err := strconv.ParseInt(strings.TrimSpace(dt), 10, 32); err != nil || int32(v) != s.Thread {
			fail("%s: data-thread=%q, want %d", where, dt, s.Thread)
		}
		if tr.hasClass("preempted") != s.Preempted {
			fail("%s: class %q, preempted=%v", where, tr.Attrs["class"], s.Preempted)
		}
		if tr.hasClass("failure") != s.Failure {
			fail("%s: class %q, failure=%v", where, tr.Attrs["class"], s.Failure)
		}
		var cells []*domNode
		for _, c := range tr.Children {
			if c.Tag == "td" || c.Tag == "th" {
				cells = append(cells, c)
			}
		}
		if len(cells) != len(cols)+1 {
			fail("%s: %d cells, want %d", where, len(cells), len(cols)+1)
			continue
		}
		if idx := strings.Fields(cells[0].text()); len(idx) == 0 || idx[0] != strconv.Itoa(s.Index) {
			fail("%s: first cell %q does not start with the index %d", where, collapseSpace(cells[0].text()), s.Index)
		}
		active := -1
		for j, c := range cells {
			if !c.hasClass("active") {
				if j > 0 && (len(c.elements()) > 0 || strings.TrimSpace(c.text()) != "") {
					fail("%s: cell %d (thread %d) is not active but not empty: %q", where, j, cols[j-1], collapseSpace(c.text()))
				}
				continue
			}
			if active >= 0 {
				fail("%s: cells %d and %d are both active", where, active, j)
			}
			active = j
		}
		if active < 0 {
			fail("%s: no cell of class \"active\"", where)
			continue
		}
		if active != colOf[s.Thread] {
			fail("%s: active cell in column %d (thread %d), want column %d (thread %d)",
				where, active, cols[max(active-1, 0)], colOf[s.Thread], s.Thread)
		}
		if len(ths) == len(cols)+1 {
			if h, want := collapseSpace(ths[active].text()), fmt.Sprintf("Thread %d", s.Thread); h != want {
				fail("%s: active cell under header %q, want %q", where, h, want)
			}
		}
		kind := "pp-" + cssIdent(s.PPKind)
		badge := cells[active].find(func(n *domNode) bool { return n.hasClass("pp") && n.hasClass(kind) })
		if badge == nil {
			fail("%s: no PP badge of class \"pp %s\"", where, kind)
		} else if got := collapseSpace(badge.text()); got != collapseSpace(s.PP) {
			fail("%s: PP badge %q, want %q", where, got, s.PP)
		}
	}
	return errors.Join(errs...)
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// A small tolerant HTML tree builder: enough for serialised DOMs (which
// close every non-void element and quote every attribute) and forgiving of
// stray end tags, unclosed elements and unquoted attributes.

type domNode struct {
	Tag      string // lower case; "" for text
	Attrs    map[string]string
	Children []*domNode
	Parent   *domNode
	Text     string // text nodes: unescaped text
}

var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true,
	"hr": true, "img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

var rawTextElements = map[string]bool{"script": true, "style": true, "textarea": true, "title": true,
	"xmp": true, "iframe": true, "noembed": true, "noframes": true, "plaintext": true}

func parseDOM(s string) *domNode {
	root := &domNode{Tag: "#document", Attrs: map[string]string{}}
	cur := root
	addText := func(txt string) {
		if txt != "" {
			cur.Children = append(cur.Children, &domNode{Text: html.UnescapeString(txt), Parent: cur})
		}
	}
	i := 0
	for i < len(s) {
		if s[i] != '<' {
			j := strings.IndexByte(s[i:], '<')
			if j < 0 {
				j = len(s) - i
			}
			addText(s[i : i+j])
			i += j
			continue
		}
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			if j := strings.Index(rest[4:], "-->"); j >= 0 {
				i += 4 + j + 3
			} else {
				i = len(s)
			}
		case strings.HasPrefix(rest, "<!") || strings.HasPrefix(rest, "<?"):
			if j := strings.IndexByte(rest, '>'); j >= 0 {
				i += j + 1
			} else {
				i = len(s)
			}
		case strings.HasPrefix(rest, "</"):
			j := strings.IndexByte(rest, '>')
			if j < 0 {
				i = len(s)
				break
			}
			name := strings.ToLower(strings.TrimSpace(rest[2:j]))
			if k := strings.IndexAny(name, " \t\r\n/"); k >= 0 {
				name = name[:k]
			}
			for n := cur; n != root; n = n.Parent {
				if n.Tag == name {
					cur = n.Parent
					break
				}
			}
			i += j + 1
		case len(rest) > 1 && isASCIILetter(rest[1]):
			n, end, selfClose := parseStartTag(rest)
			i += end
			n.Parent = cur
			cur.Children = append(cur.Children, n)
			switch {
			case selfClose || voidElements[n.Tag]:
			case rawTextElements[n.Tag]:
				closeAt := indexFold(s[i:], "</"+n.Tag)
				if closeAt < 0 {
					closeAt = len(s) - i
				}
				n.Children = append(n.Children, &domNode{Text: s[i : i+closeAt], Parent: n})
				i += closeAt
				if j := strings.IndexByte(s[i:], '>'); j >= 0 {
					i += j + 1
				} else {
					i = len(s)
				}
			default:
				cur = n
			}
		default:
			addText("<")
			i++
		}
	}
	return root
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func indexFold(s, sub string) int {
	return strings.Index(strings.ToLower(s), strings.ToLower(sub))
}

// parseStartTag parses the start tag at the beginning of s ("<name ...>")
// and returns the element, the tag's length and whether it self-closes.
func parseStartTag(s string) (*domNode, int, bool) {
	i := 1
	for i < len(s) && !isSpace(s[i]) && s[i] != '>' && s[i] != '/' {
		i++
	}
	n := &domNode{Tag: strings.ToLower(s[1:i]), Attrs: map[string]string{}}
	for i < len(s) {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			break
		}
		if s[i] == '>' {
			return n, i + 1, false
		}
		if s[i] == '/' {
			if i+1 < len(s) && s[i+1] == '>' {
				return n, i + 2, true
			}
			i++
			continue
		}
		start := i
		for i < len(s) && !isSpace(s[i]) && s[i] != '=' && s[i] != '>' && !(s[i] == '/' && i+1 < len(s) && s[i+1] == '>') {
			i++
		}
		name := strings.ToLower(s[start:i])
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		val := ""
		if i < len(s) && s[i] == '=' {
			i++
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			if i < len(s) && (s[i] == '"' || s[i] == '\'') {
				q := s[i]
				j := strings.IndexByte(s[i+1:], q)
				if j < 0 {
					val, i = s[i+1:], len(s)
				} else {
					val, i = s[i+1:i+1+j], i+1+j+1
				}
			} else {
				vs := i
				for i < len(s) && !isSpace(s[i]) && s[i] != '>' {
					i++
				}
				val = s[vs:i]
			}
		}
		if name != "" {
			if _, dup := n.Attrs[name]; !dup {
				n.Attrs[name] = html.UnescapeString(val)
			}
		}
	}
	return n, len(s), false
}

func (n *domNode) hasClass(c string) bool {
	for _, f := range strings.Fields(n.Attrs["class"]) {
		if f == c {
			return true
		}
	}
	return false
}

// text is the concatenated text of n's descendants (outside script and
// style).
func (n *domNode) text() string {
	var b strings.Builder
	var walk func(*domNode)
	walk = func(m *domNode) {
		if m.Tag == "" {
			b.WriteString(m.Text)
			return
		}
		if m.Tag == "script" || m.Tag == "style" {
			return
		}
		for _, c := range m.Children {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// find returns the first descendant of n (pre-order) that matches.
func (n *domNode) find(match func(*domNode) bool) *domNode {
	for _, c := range n.Children {
		if c.Tag == "" {
			continue
		}
		if match(c) {
			return c
		}
		if m := c.find(match); m != nil {
			return m
		}
	}
	return nil
}

// all returns the descendants of n that match, in document order.
func (n *domNode) all(match func(*domNode) bool) []*domNode {
	var out []*domNode
	for _, c := range n.Children {
		if c.Tag == "" {
			continue
		}
		if match(c) {
			out = append(out, c)
		}
		out = append(out, c.all(match)...)
	}
	return out
}

func (n *domNode) childrenTagged(tag string) []*domNode {
	var out []*domNode
	for _, c := range n.Children {
		if c.Tag == tag {
			out = append(out, c)
		}
	}
	return out
}

func (n *domNode) elements() []*domNode {
	var out []*domNode
	for _, c := range n.Children {
		if c.Tag != "" {
			out = append(out, c)
		}
	}
	return out
}
