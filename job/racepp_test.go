package job

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"landslide/dpor"
	"landslide/emu/elfsym"
	"landslide/fixtures"
	"landslide/kernel"
	"landslide/race"
	"landslide/record"
)

// raceBugFixtures are the seeded-bug libraries whose bug needs data-race
// PPs (non-empty RacePPFuncs); ref/fig1 has its own test.
func raceBugFixtures() []fixtures.Fixture {
	var out []fixtures.Fixture
	for _, f := range fixtures.All() {
		if len(f.RacePPFuncs) > 0 && f.Lib != "ref" && f.Lib != "" && f.Expect != "ok" {
			out = append(out, f)
		}
	}
	return out
}

// quicksandPCs are the data-race PPs Quicksand adds for a candidate
// (thesis Algorithm 4): both accesses of a both-order race, only the one
// that ran first of a single-order race.
func quicksandPCs(c *race.Candidate) []uint64 {
	first, second := c.A, c.B
	if second.Tr < first.Tr {
		first, second = second, first
	}
	if c.BothOrder && second.PC != first.PC {
		return []uint64{first.PC, second.PC}
	}
	return []uint64{first.PC}
}

// TestRaceBugsNeedDataRacePPs: for every seeded bug that needs a data-race
// PP, the acceptance property of Quicksand's data-race PPs, through the
// same job Quicksand runs:
//  1. with the sync PPs only (the default PP set and DPOR, the program's
//     own LANDSLIDE_CONFIG directives applied as the CLI applies them) the
//     state space completes without the bug, under Limited and Pure HB;
//  2. that exploration reports a data-race candidate with an access inside
//     the fixture's RacePPFuncs;
//  3. with data-race PPs where Quicksand puts them for such a candidate
//     (both accesses if both-order, the first one otherwise) the expected
//     bug is found.
func TestRaceBugsNeedDataRacePPs(t *testing.T) {
	fs := raceBugFixtures()
	if len(fs) < 4 {
		t.Fatalf("only %d seeded bugs that need a data-race PP: %v", len(fs), fs)
	}
	for _, f := range fs {
		t.Run(f.Name, func(t *testing.T) {
			want, ok := record.ParseBugKind(f.Expect)
			if !ok {
				t.Fatalf("expect %q is no bug kind", f.Expect)
			}
			_, data := image(t, f.Name)
			img, err := elfsym.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			d, err := kernel.ParseDirectives(img.Directives, img.Symbols)
			if err != nil {
				t.Fatal(err)
			}
			// As `landslide explore` does by default: the program's directives.
			filters, testingMutexes := d.Filters, d.TestingMutexes
			inFuncs := func(pc uint64) bool {
				for _, fn := range f.RacePPFuncs {
					start, size, ok := img.Symbols.Lookup(fn)
					if !ok {
						t.Fatalf("RacePPFuncs: no function %s", fn)
					}
					if pc >= start && pc < start+size {
						return true
					}
				}
				return false
			}

			// exposes explores with the data-race PPs Quicksand adds for
			// each candidate of res in RacePPFuncs, until one finds the bug.
			exposing := map[string]bool{} // PP sets already seen to expose the bug
			exposes := func(res *Result) (string, bool) {
				var misses []string
				for _, r := range res.Races {
					if r.Realloc || !(inFuncs(r.A.PC) || inFuncs(r.B.PC)) {
						continue
					}
					pcs := quicksandPCs(r.Candidate)
					key := fmt.Sprintf("%x", pcs)
					if exposing[key] {
						return key + " (again)", true
					}
					bug, err := Run(context.Background(), Config{Spec: Spec{Program: f.Path(), TestingMutexes: testingMutexes, Kernel: kernel.Config{DataRacePCs: pcs, Filters: filters, SharedStack: res.SharedStack}, Spec: dpor.Spec{MaxInterleavings: 20000}}, Image: data})
					if err != nil {
						t.Fatal(err)
					}
					if bug.Bug != nil && bug.Bug.Kind == want {
						exposing[key] = true
						return fmt.Sprintf("%s (%v): %s after %d interleavings", key, r.Candidate, bug.Bug.Kind, bug.Executed), true
					}
					misses = append(misses, fmt.Sprintf("%s: bug %v after %d interleavings", key, bug.Bug, bug.Executed))
				}
				return strings.Join(misses, "\n"), false
			}

			for _, mode := range []race.Mode{race.Limited, race.Pure} {
				// 1: sync PPs only.
				res, err := Run(context.Background(), Config{Spec: Spec{Program: f.Path(), HB: mode, TestingMutexes: testingMutexes, Kernel: kernel.Config{Filters: filters}, Spec: dpor.Spec{MaxInterleavings: 100000}}, Image: data})
				if err != nil {
					t.Fatal(err)
				}
				if !res.Verified || res.Bug != nil {
					t.Fatalf("HB %v, sync PPs only: verified %v after %d interleavings, bug %v; the bug must need a data-race PP",
						mode, res.Verified, res.Interleavings, res.Bug)
				}
				// 1b: as Quicksand's later jobs do, with the stack locations
				// another thread touched (the race may be on one).
				if len(res.SharedStack) > 0 {
					res, err = Run(context.Background(), Config{Spec: Spec{Program: f.Path(), HB: mode, TestingMutexes: testingMutexes, Kernel: kernel.Config{Filters: filters, SharedStack: res.SharedStack}, Spec: dpor.Spec{MaxInterleavings: 100000}}, Image: data})
					if err != nil {
						t.Fatal(err)
					}
					if !res.Verified || res.Bug != nil {
						t.Fatalf("HB %v, sync PPs and the shared stack locations: verified %v, bug %v", mode, res.Verified, res.Bug)
					}
				}
				// 2: a candidate in RacePPFuncs.
				n := 0
				for _, r := range res.Races {
					if !r.Realloc && (inFuncs(r.A.PC) || inFuncs(r.B.PC)) {
						n++
					}
				}
				t.Logf("HB %v, sync PPs only: verified, %d interleavings, %d of %d candidates in %v",
					mode, res.Interleavings, n, len(res.Races), f.RacePPFuncs)
				if n == 0 {
					t.Fatalf("HB %v: no data-race candidate in %v: %v", mode, f.RacePPFuncs, res.Races)
				}
				// 3: its data-race PPs expose the bug.
				how, ok := exposes(res)
				if !ok {
					t.Fatalf("HB %v: no candidate's data-race PPs expose the %s bug:\n%s", mode, f.Expect, how)
				}
				t.Logf("HB %v: data-race PPs at %s", mode, how)
			}
		})
	}
}
