package kernel

import (
	"fmt"
	"strings"

	"landslide/emu/elfsym"
)

// Directives is what a test's LANDSLIDE_CONFIG directives (elfsym's
// Image.Directives) ask for.
type Directives struct {
	Filters []Filter // in order
	// TestingMutexes: the program tests the mutex implementation itself
	// (race analysis treats accesses inside it as unprotected).
	TestingMutexes bool
}

// ParseDirectives reads a test's directives. A directive is a verb and,
// for filters, a function of the program:
//
//	within FUNC    (or within_function FUNC, the thesis's spelling)
//	without FUNC   (or without_function FUNC)
//	testing_mutexes
//
// Anything else is an error naming the directive: a test that asks for a
// configuration Landslide cannot give must not be checked without it.
func ParseDirectives(directives []string, syms *elfsym.Symbols) (Directives, error) {
	var out Directives
	for _, d := range directives {
		f := strings.Fields(d)
		if len(f) == 1 && f[0] == "testing_mutexes" {
			out.TestingMutexes = true
			continue
		}
		if d == ReferenceThreadsDirective {
			continue // the library's, not the test's (TestDirectives)
		}
		if len(f) != 2 {
			return out, fmt.Errorf("LANDSLIDE_CONFIG %q: want \"within FUNC\", \"without FUNC\" or \"testing_mutexes\"", d)
		}
		var flt Filter
		switch f[0] {
		case "within", "within_function":
			flt.Within = true
		case "without", "without_function":
		default:
			return out, fmt.Errorf("LANDSLIDE_CONFIG %q: unknown directive %q (known: within, without, testing_mutexes)", d, f[0])
		}
		flt.Func = f[1]
		if _, _, ok := syms.Lookup(flt.Func); !ok {
			return out, fmt.Errorf("LANDSLIDE_CONFIG %q: no function %q in the program", d, flt.Func)
		}
		out.Filters = append(out.Filters, flt)
	}
	return out, nil
}

// TestDirectives splits a program's directives into the test's own and
// whether its thread library is the SDK's reference one (the library's
// directive, ReferenceThreadsDirective, which no flag overrides).
func TestDirectives(directives []string) (test []string, reference bool) {
	for _, d := range directives {
		if d == ReferenceThreadsDirective {
			reference = true
			continue
		}
		test = append(test, d)
	}
	return test, reference
}
