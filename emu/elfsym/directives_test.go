package elfsym

import (
	"slices"
	"strings"
	"testing"
)

// TestDirectives: the directive section's lines come back in file order,
// padding skipped, and a binary without one has none.
func TestDirectives(t *testing.T) {
	img, err := Parse(readFile(t, buildC(t, "directives.c")))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"without thr_create", "within  main"}; !slices.Equal(img.Directives, want) {
		t.Errorf("directives %q, want %q", img.Directives, want)
	}
	img, err = Parse(readFile(t, buildC(t, "chain.c")))
	if err != nil {
		t.Fatal(err)
	}
	if img.Directives != nil {
		t.Errorf("a binary without a .landslide section has directives %q", img.Directives)
	}
}

// TestDirectivesMalformed: a directive section that is loaded, unterminated
// or not printable makes the binary a load error naming the section.
func TestDirectivesMalformed(t *testing.T) {
	for bad, want := range map[string]string{
		"1": "not a non-loaded PROGBITS section",
		"2": "not NUL-terminated",
		"3": `directive "without\tf" is not printable ASCII`,
	} {
		_, err := Parse(readFile(t, buildC(t, "directives.c", "-DBAD="+bad)))
		if err == nil || !strings.Contains(err.Error(), ".landslide") || !strings.Contains(err.Error(), want) {
			t.Errorf("BAD=%s: error %v, want one about .landslide: %q", bad, err, want)
		}
	}
}
