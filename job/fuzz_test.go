package job

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"landslide/dpor"
	"landslide/kernel"
	"landslide/race"
)

// FuzzDecodeStored: the job's stored values (spec, frontier, race state)
// come from the store or an imported archive; decoding and resuming from
// arbitrary bytes returns errors, never panics. Seeded with real
// encodings of a mutex_test exploration.
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
	for _, v := range []any{x.Frontier(), an.State(), cfg.Spec} {
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
			// A small instruction budget keeps each execution short.
			k, err := kernel.New(img, kernel.Config{MaxInstructions: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if x, err := dpor.Resume(k, dpor.Options{Spec: dpor.Spec{MaxInterleavings: fr.Executed + 1}}, &fr); err == nil {
				x.Run(context.Background()) // errors are fine; panics are not
			}
		}
		var rs race.State
		if decode(b, "race analysis", &rs) == nil {
			race.New(race.Pure, race.Options{}).SetState(rs)
		}
		DecodeSpec(b)
	})
}
