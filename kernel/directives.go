package kernel

import (
	"fmt"
	"strings"

	"landslide/emu/elfsym"
)

// TestFilters turns a test's LANDSLIDE_CONFIG directives (elfsym's
// Image.Directives) into PP filters, in order. A directive is a verb and a
// function of the program:
//
//	within FUNC    (or within_function FUNC, the thesis's spelling)
//	without FUNC   (or without_function FUNC)
//
// Anything else is an error naming the directive: a test that asks for a
// configuration Landslide cannot give must not be checked without it.
func TestFilters(directives []string, syms *elfsym.Symbols) ([]Filter, error) {
	var out []Filter
	for _, d := range directives {
		f := strings.Fields(d)
		if len(f) != 2 {
			return nil, fmt.Errorf("LANDSLIDE_CONFIG %q: want \"within FUNC\" or \"without FUNC\"", d)
		}
		var flt Filter
		switch f[0] {
		case "within", "within_function":
			flt.Within = true
		case "without", "without_function":
		default:
			return nil, fmt.Errorf("LANDSLIDE_CONFIG %q: unknown directive %q (known: within, without)", d, f[0])
		}
		flt.Func = f[1]
		if _, _, ok := syms.Lookup(flt.Func); !ok {
			return nil, fmt.Errorf("LANDSLIDE_CONFIG %q: no function %q in the program", d, flt.Func)
		}
		out = append(out, flt)
	}
	return out, nil
}
