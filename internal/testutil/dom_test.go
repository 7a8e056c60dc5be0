package testutil

import (
	"path/filepath"
	"testing"
)

// TestParseDOM: documents are parsed as a browser parses them: comments
// and script text hold no elements, unquoted attributes and entities are
// read, stray end tags are ignored, and rows written without a tbody are
// put in one.
func TestParseDOM(t *testing.T) {
	doc := `<!DOCTYPE html><!-- a <table id=trace> in a comment --><html><head>
<style>td > b { color: red }</style><script>if (a<b) document.write("<td>")</script></head>
<body><div id=x class='a b'>t&amp;x<br>y</span></div><p>unclosed<table id="t"><tr data-k=v><td>1</td><td/></tr></table>
</body></html>`
	root, err := ParseDOM(doc)
	if err != nil {
		t.Fatal(err)
	}
	x := root.Find(func(n *Elem) bool { return n.Attr("id") == "x" })
	if x == nil || !x.HasClass("b") || x.HasClass("c") || x.Text() != "t&xy" {
		t.Fatalf("div#x parsed wrong: %+v", x)
	}
	tbls := root.All(func(n *Elem) bool { return n.Tag() == "table" })
	if len(tbls) != 1 || tbls[0].Attr("id") != "t" {
		t.Fatalf("tables found: %d", len(tbls))
	}
	if rows := tbls[0].ChildrenTagged("tr"); len(rows) != 0 {
		t.Errorf("%d rows directly in the table: the parser puts them in a tbody", len(rows))
	}
	bodies := tbls[0].ChildrenTagged("tbody")
	if len(bodies) != 1 {
		t.Fatalf("%d tbody, want 1", len(bodies))
	}
	trs := bodies[0].ChildrenTagged("tr")
	if len(trs) != 1 || trs[0].Attr("data-k") != "v" || len(trs[0].ChildrenTagged("td")) != 2 {
		t.Fatalf("row parsed wrong: %d rows", len(trs))
	}
	if _, ok := trs[0].AttrOK("data-missing"); ok {
		t.Error("an absent attribute is present")
	}
	if n := len(root.All(func(n *Elem) bool { return n.Tag() == "td" })); n != 2 {
		t.Errorf("%d td, want 2 (script text must not count)", n)
	}
	if head := root.Find(func(n *Elem) bool { return n.Tag() == "head" }); head == nil || head.Text() != "\n" {
		t.Errorf("head's text (script and style excluded): %q", head.Text())
	}
}

func TestDumpDOMMissingFile(t *testing.T) {
	if _, err := DumpDOM(filepath.Join(t.TempDir(), "absent.html")); err == nil {
		t.Error("DumpDOM of a missing file succeeded")
	}
}
