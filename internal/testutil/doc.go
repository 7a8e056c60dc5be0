// Package testutil holds helpers shared by the project's tests, so that
// production packages carry no test machinery:
//
//   - Scripts: golden test scripts (a command, "----", the output
//     expected), with -rewrite (script.go);
//   - DumpDOM: a page as headless Chromium builds it (browser.go);
//   - CheckTraceDOM and Elem: an HTML bug report checked against the
//     trace it renders, parsed with golang.org/x/net/html (dom.go).
//
// It is imported only from _test.go files.
package testutil
