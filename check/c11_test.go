package check

import (
	"context"
	"slices"
	"testing"

	"landslide/emu/elfsym"
	"landslide/fixtures"
	"landslide/race"
	"landslide/store"
)

// TestC11RacesEndToEnd: the C11 fixtures (fixtures/src/c11), explored
// whole with every shared access a PP under each HB mode, get exactly
// the data-race candidates C11 says they have: none for the programs
// synchronised by release/acquire atomics, fences, a release sequence
// continued by a CAS, and a lock on amoswap.aq with a release-store
// unlock; for mp_relaxed, whose flag is relaxed, one: the writer's store
// to data against the reader's load of it. The run explored under
// Limited HB, re-analysed offline from the store (Races) under each mode,
// gives what that mode's exploration reported.
func TestC11RacesEndToEnd(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range []struct {
		name string
		racy bool // mp_relaxed's one race on data
	}{
		{"c11/mp_relacq", false},
		{"c11/mp_relaxed", true},
		{"c11/mp_fence", false},
		{"c11/xchg_lock", false},
		{"c11/relseq_cas", false},
	} {
		f, image, err := fixtures.Load(c.name)
		if err != nil {
			t.Fatal(err)
		}
		img, err := elfsym.Parse(image)
		if err != nil {
			t.Fatal(err)
		}
		pps, err := ResolvePPs(image, PPRequest{EveryAccess: true, Args: []string{f.Path()}})
		if err != nil {
			t.Fatal(err)
		}
		online := map[HB][][2]uint64{}
		var stored *ExploreResult
		for _, hb := range []HB{Limited, Pure} {
			spec := Spec{Program: f.Path(), Kernel: pps.Kernel, HB: hb}
			rec := Recording{}
			if hb == Limited {
				rec.Store = st
			}
			res, err := Explore(context.Background(), Config{Spec: spec, Image: image}, rec)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Verified || res.Bug != nil {
				t.Fatalf("%s --hb %v: verified %v, bug %v: the fixture should verify", c.name, hb, res.Verified, res.Bug)
			}
			if hb == Limited {
				stored = res
			}
			var got [][2]uint64
			for _, r := range res.Races {
				got = append(got, r.Key())
			}
			online[hb] = got
			if !c.racy {
				if len(res.Races) != 0 {
					t.Errorf("%s --hb %v: %d candidates in a program without a C11 data race: %v", c.name, hb, len(res.Races), got)
				}
				continue
			}
			if len(res.Races) != 1 {
				t.Errorf("%s --hb %v: %d candidates %x, want the one on data", c.name, hb, len(res.Races), got)
				continue
			}
			data, _, ok := img.Symbols.Lookup("data")
			if !ok {
				t.Fatalf("%s: no symbol data", c.name)
			}
			r := res.Races[0]
			funcs := map[string]bool{}
			for _, s := range []race.Side{r.A, r.B} {
				fn, _, _ := img.Symbols.FuncAt(s.PC)
				funcs[fn] = true
				if s.Addr != data || s.Atomic || s.Write != (fn == "writer") {
					t.Errorf("%s --hb %v: side %+v in %s, want writer's store to or reader's load of data (0x%x)", c.name, hb, s, fn, data)
				}
			}
			if !funcs["writer"] || !funcs["reader"] {
				t.Errorf("%s --hb %v: candidate between %v, want writer and reader", c.name, hb, funcs)
			}
		}
		for _, hb := range []HB{Limited, Pure} {
			off, err := Races(st, stored.Run, 1, hb)
			if err != nil {
				t.Fatalf("%s: offline %v: %v", c.name, hb, err)
			}
			if off.Interleavings != stored.Executed {
				t.Errorf("%s: offline %v analysed %d interleavings, %d explored", c.name, hb, off.Interleavings, stored.Executed)
			}
			var got [][2]uint64
			for _, r := range off.Candidates {
				got = append(got, r.Key())
			}
			if !slices.Equal(got, online[hb]) {
				t.Errorf("%s: offline %v gives %x, the exploration %x", c.name, hb, got, online[hb])
			}
		}
	}
}
