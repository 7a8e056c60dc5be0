package job

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"landslide/dpor"
	"landslide/kernel"
	"landslide/race"
)

// FuzzDecodeStored: the job's stored values (spec, frontier, race state)
// come from the store or an imported archive; decoding and resuming from
// arbitrary bytes returns errors, never panics. Seeded with real
// encodings of a mutex_test exploration (its sleep sets too), and of a
// transactional one
// (htm2 under retry sets: injected aborts, retry sets, pending and
// explored, and constraints in the frontier), and of the other
// strategies' states (optimal, CB-DPOR, race reversal), and optimal
// DPOR's after its fallback to dpor.
func FuzzDecodeStored(f *testing.F) {
	fx, img := image(f, "ref/mutex_test")
	cfg := Config{Spec: Spec{Program: fx.Path()}, Image: img}
	var x *dpor.Explorer
	k, err := kernel.New(img, kernel.Config{})
	if err != nil {
		f.Fatal(err)
	}
	an := race.New(race.Limited, race.Options{})
	x, err = dpor.New(k, dpor.Options{Spec: dpor.Spec{MaxInterleavings: 20}, OnBranch: func(b *dpor.Branch) dpor.Stop {
		an.Branch(b.Transitions, b.NewPairs)
		return dpor.Continue
	}})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := x.Run(context.Background()); err != nil {
		f.Fatal(err)
	}
	if len(x.Frontier().DPOR) == 0 {
		f.Fatal("dpor: no sleep sets in the frontier")
	}
	_, htmImg := image(f, "htm/htm2")
	htmCfg := kernel.Config{Args: []string{"htm2", "2", "2"}, MaxInstructions: 1 << 20}
	htmSpec := dpor.Spec{RetrySets: true}
	hk, err := kernel.New(htmImg, htmCfg)
	if err != nil {
		f.Fatal(err)
	}
	var htmFrontier *dpor.Frontier
	hs := htmSpec
	hs.MaxInterleavings = 40
	var hx *dpor.Explorer
	hx, err = dpor.New(hk, dpor.Options{Spec: hs, OnBranch: func(b *dpor.Branch) dpor.Stop {
		if b.N == 30 {
			htmFrontier = hx.Frontier()
		}
		return dpor.Continue
	}})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := hx.Run(context.Background()); err != nil || htmFrontier == nil {
		f.Fatalf("htm2: %v", err)
	}
	if !slices.ContainsFunc(htmFrontier.Nodes, func(n dpor.FrontierNode) bool { return len(n.RetryEver) > 0 && len(n.Cons) > 0 }) {
		f.Fatal("htm2: no retry sets or constraints in the frontier")
	}
	// And optimal DPOR on nondet values (posix/deposits): injected
	// values, value counts and wakeup-tree events with values.
	_, dImg := image(f, "posix/deposits")
	dCfg := kernel.Config{Args: []string{"deposits", "3"}, EveryAccess: true, MaxInstructions: 1 << 20}
	dFrontier := frontierAt(f, dImg, dCfg, "optimal", 6)
	// And CB-DPOR (its sleep sets and last-thread transitions) on
	// mutex_test.
	cbFrontier := frontierAt(f, img, kernel.Config{}, "cbdpor", 8)
	if len(cbFrontier.CBDPOR) == 0 {
		f.Fatal("cbdpor: no strategy state in the frontier")
	}
	// And race-reversal walks (their base and candidates) on mutex_test.
	rvFrontier := frontierAt(f, img, kernel.Config{}, "reversal", 6)
	if rvFrontier.Reversal == nil || len(rvFrontier.Reversal.Candidates) == 0 {
		f.Fatal("reversal: no strategy state in the frontier")
	}
	// And explore's default, optimal DPOR, after its fallback to dpor on
	// htm2 (the frontier says so).
	fallback := dpor.Spec{Strategy: "optimal", Fallback: true}
	fbFrontier := frontierAtSpec(f, htmImg, htmCfg, fallback, 5)
	if fbFrontier.FellBack == "" {
		f.Fatal("htm2 under optimal DPOR with its fallback: the frontier says no fallback")
	}
	for _, v := range []any{x.Frontier(), an.State(), cfg.Spec, htmFrontier, dFrontier, cbFrontier, rvFrontier, fbFrontier} {
		b, err := encode(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		watchdog := time.AfterFunc(10*time.Second, func() {
			os.WriteFile(filepath.Join(os.TempDir(), "FuzzDecodeStored-slow.bin"), b, 0o644)
			panic("FuzzDecodeStored: an input took over 10 s")
		})
		defer watchdog.Stop()
		var fr dpor.Frontier
		if decode(b, "frontier", &fr) == nil && fr.Executed < 1<<20 {
			// Each seed's program and strategy; a small instruction
			// budget keeps each execution short.
			small := kernel.Config{MaxInstructions: 1 << 20}
			for _, r := range []struct {
				img  []byte
				kc   kernel.Config
				spec dpor.Spec
			}{
				{img, small, dpor.Spec{}},
				{htmImg, htmCfg, htmSpec},
				{htmImg, htmCfg, fallback},
				{dImg, dCfg, dpor.Spec{Strategy: "optimal"}},
				{img, small, dpor.Spec{Strategy: "cbdpor"}},
				{img, small, dpor.Spec{Strategy: "reversal"}},
			} {
				k, err := kernel.New(r.img, r.kc)
				if err != nil {
					t.Fatal(err)
				}
				r.spec.MaxInterleavings = fr.Executed + 1
				if x, err := dpor.Resume(k, dpor.Options{Spec: r.spec}, &fr); err == nil {
					x.Run(context.Background()) // errors are fine; panics are not
				}
			}
		}
		var rs race.State
		if decode(b, "race analysis", &rs) == nil {
			race.New(race.Pure, race.Options{}).SetState(rs)
		}
		DecodeSpec(b)
	})
}

// frontierAt explores img under strategy and returns the frontier after
// interleaving n.
func frontierAt(f *testing.F, img []byte, kc kernel.Config, strategy string, n int) *dpor.Frontier {
	return frontierAtSpec(f, img, kc, dpor.Spec{Strategy: strategy}, n)
}

// frontierAtSpec is frontierAt under spec.
func frontierAtSpec(f *testing.F, img []byte, kc kernel.Config, spec dpor.Spec, n int) *dpor.Frontier {
	strategy := spec.Strategy
	k, err := kernel.New(img, kc)
	if err != nil {
		f.Fatal(err)
	}
	var fr *dpor.Frontier
	var x *dpor.Explorer
	spec.MaxInterleavings = n + 4
	x, err = dpor.New(k, dpor.Options{Spec: spec, OnBranch: func(b *dpor.Branch) dpor.Stop {
		if b.N == n {
			fr = x.Frontier()
		}
		return dpor.Continue
	}})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := x.Run(context.Background()); err != nil || fr == nil {
		f.Fatalf("%s: no frontier after %d interleavings (%v)", strategy, n, err)
	}
	return fr
}
