package testutil

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/html"

	"landslide/report"
)

// CheckTraceDOM validates a DOM dumped by DumpDOM (or any HTML: it is
// parsed as a browser would, by golang.org/x/net/html) against the
// report.Trace it renders: the summary section and bug message; table#trace with a
// thead of len(Columns())+1 th ("#", then "Thread N" in column order); one
// tbody tr per step with data-thread = the step's thread and the classes
// "preempted"/"failure" exactly when the step has them; len(Columns())+1
// cells per row, exactly one of class "active", in the step thread's
// column, holding the PP badge (class "pp" and report.PPClass(kind), text = the PP label);
// the other threads' cells empty.
func CheckTraceDOM(dom string, t *report.Trace) error {
	root, err := ParseDOM(dom)
	if err != nil {
		return err
	}
	var errs []error
	fail := func(format string, args ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}

	if root.Find(func(n *Elem) bool { return n.Attr("id") == "summary" }) == nil {
		fail("no element with id=\"summary\"")
	}
	if t.Bug != nil {
		m := root.Find(func(n *Elem) bool { return n.HasClass("bug-message") })
		switch {
		case m == nil:
			fail("no element with class \"bug-message\"")
		case strings.TrimSpace(m.Text()) != strings.TrimSpace(t.Bug.Message):
			fail("bug message is %q, want %q", strings.TrimSpace(m.Text()), strings.TrimSpace(t.Bug.Message))
		}
	}

	table := root.Find(func(n *Elem) bool { return n.Tag() == "table" && n.Attr("id") == "trace" })
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
	var ths []*Elem
	for _, thead := range table.ChildrenTagged("thead") {
		ths = append(ths, thead.All(func(n *Elem) bool { return n.Tag() == "th" })...)
	}
	if len(ths) != len(cols)+1 {
		fail("thead has %d th, want %d (\"#\" + %d threads)", len(ths), len(cols)+1, len(cols))
	} else {
		if h := strings.TrimSpace(ths[0].Text()); h != "#" {
			fail("first header cell is %q, want \"#\"", h)
		}
		for i, c := range cols {
			want := fmt.Sprintf("Thread %d", c)
			if h := collapseSpace(ths[i+1].Text()); h != want {
				fail("header cell %d is %q, want %q", i+1, h, want)
			}
		}
	}

	// Body.
	var rows []*Elem
	for _, tbody := range table.ChildrenTagged("tbody") {
		rows = append(rows, tbody.ChildrenTagged("tr")...)
	}
	// (The HTML5 parser puts rows written without a tbody in one.)
	if len(rows) != len(t.Steps) {
		fail("tbody has %d tr, want %d (one per step)", len(rows), len(t.Steps))
	}
	for i, tr := range rows {
		if i >= len(t.Steps) {
			break
		}
		s := t.Steps[i]
		where := fmt.Sprintf("row %d (step #%d)", i, s.Index)
		if dt, ok := tr.AttrOK("data-thread"); !ok {
			fail("%s: no data-thread attribute", where)
		} else if v, err := strconv.ParseInt(strings.TrimSpace(dt), 10, 32); err != nil || int32(v) != s.Thread {
			fail("%s: data-thread=%q, want %d", where, dt, s.Thread)
		}
		if tr.HasClass("preempted") != s.Preempted {
			fail("%s: class %q, preempted=%v", where, tr.Attr("class"), s.Preempted)
		}
		if tr.HasClass("failure") != s.Failure {
			fail("%s: class %q, failure=%v", where, tr.Attr("class"), s.Failure)
		}
		var cells []*Elem
		for _, c := range tr.Elements() {
			if c.Tag() == "td" || c.Tag() == "th" {
				cells = append(cells, c)
			}
		}
		if len(cells) != len(cols)+1 {
			fail("%s: %d cells, want %d", where, len(cells), len(cols)+1)
			continue
		}
		if idx := strings.Fields(cells[0].Text()); len(idx) == 0 || idx[0] != strconv.Itoa(s.Index) {
			fail("%s: first cell %q does not start with the index %d", where, collapseSpace(cells[0].Text()), s.Index)
		}
		active := -1
		for j, c := range cells {
			if !c.HasClass("active") {
				if j > 0 && (len(c.Elements()) > 0 || strings.TrimSpace(c.Text()) != "") {
					fail("%s: cell %d (thread %d) is not active but not empty: %q", where, j, cols[j-1], collapseSpace(c.Text()))
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
			if h, want := collapseSpace(ths[active].Text()), fmt.Sprintf("Thread %d", s.Thread); h != want {
				fail("%s: active cell under header %q, want %q", where, h, want)
			}
		}
		kind := report.PPClass(s.PPKind)
		badge := cells[active].Find(func(n *Elem) bool { return n.HasClass("pp") && n.HasClass(kind) })
		if badge == nil {
			fail("%s: no PP badge of class \"pp %s\"", where, kind)
		} else if got := collapseSpace(badge.Text()); got != collapseSpace(s.PP) {
			fail("%s: PP badge %q, want %q", where, got, s.PP)
		}
	}
	return errors.Join(errs...)
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// Elem is an element of a parsed HTML document, with the few queries the
// DOM checks need. The parsing is golang.org/x/net/html's: the HTML5
// algorithm browsers use, so a page's source and a browser's serialised
// DOM give the same tree.
type Elem struct{ n *html.Node }

// ParseDOM parses an HTML document; the result is its root.
func ParseDOM(s string) (*Elem, error) {
	n, err := html.Parse(strings.NewReader(s))
	if err != nil {
		return nil, fmt.Errorf("parsing HTML: %w", err)
	}
	return &Elem{n}, nil
}

// Tag is the element's name in lower case ("" for the document root).
func (e *Elem) Tag() string {
	if e.n.Type != html.ElementNode {
		return ""
	}
	return e.n.Data
}

// AttrOK is the value of an attribute and whether it is present.
func (e *Elem) AttrOK(key string) (string, bool) {
	for _, a := range e.n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// Attr is an attribute's value ("" when absent).
func (e *Elem) Attr(key string) string {
	v, _ := e.AttrOK(key)
	return v
}

// HasClass reports whether c is one of the element's classes.
func (e *Elem) HasClass(c string) bool {
	for _, f := range strings.Fields(e.Attr("class")) {
		if f == c {
			return true
		}
	}
	return false
}

// Text is the concatenated text of the element's descendants, outside
// script and style elements.
func (e *Elem) Text() string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			b.WriteString(n.Data)
			return
		case n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style"):
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(e.n)
	return b.String()
}

// Elements are the element's child elements.
func (e *Elem) Elements() []*Elem {
	var out []*Elem
	for c := e.n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			out = append(out, &Elem{c})
		}
	}
	return out
}

// ChildrenTagged are the child elements with this tag.
func (e *Elem) ChildrenTagged(tag string) []*Elem {
	var out []*Elem
	for _, c := range e.Elements() {
		if c.Tag() == tag {
			out = append(out, c)
		}
	}
	return out
}

// All are the descendant elements that match, in document order.
func (e *Elem) All(match func(*Elem) bool) []*Elem {
	var out []*Elem
	for _, c := range e.Elements() {
		if match(c) {
			out = append(out, c)
		}
		out = append(out, c.All(match)...)
	}
	return out
}

// Find is the first descendant element that matches (document order),
// or nil.
func (e *Elem) Find(match func(*Elem) bool) *Elem {
	for _, c := range e.Elements() {
		if match(c) {
			return c
		}
		if m := c.Find(match); m != nil {
			return m
		}
	}
	return nil
}
