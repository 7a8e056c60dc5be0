package kernel

import (
	"testing"

	"landslide/record"
	"landslide/schedule"
)

// TestStepScratch: StepScratch returns the transitions Step returns
// (thread, PP, accesses, sync events, instructions; no stack, which
// scratch steps do not unwind), reusing one
// Transition for every scratch step and never for a plain one; the
// transitions plain steps returned keep their content whatever scratch
// steps follow. Scratch and plain steps alternate, over fixtures with
// long access sets (the index beyond 16 accesses) and with every shared
// access a PP.
func TestStepScratch(t *testing.T) {
	for _, name := range checkpointFixtures {
		for _, cfg := range []Config{{}, {EveryAccess: true}} {
			img := fixtureImage(t, name)
			ref := play(t, img, cfg, schedule.NewRandom(5))
			k, err := New(img, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var scratch *record.Transition
			var plain []*record.Transition
			var plainAt []int
			for i, c := range ref.Schedule {
				var tr *record.Transition
				if i%3 == 2 {
					tr, err = k.Step(c)
					if tr == scratch {
						t.Fatalf("%s (every access %v) step %d: Step returned the scratch transition", name, cfg.EveryAccess, i)
					}
					plain, plainAt = append(plain, tr), append(plainAt, i)
				} else {
					tr, err = k.StepScratch(c)
					if scratch != nil && tr != scratch {
						t.Fatalf("%s (every access %v) step %d: StepScratch made a new transition", name, cfg.EveryAccess, i)
					}
					scratch = tr
				}
				if err != nil {
					t.Fatal(err)
				}
				want := ref.Transitions[i]
				if tr == scratch {
					if len(tr.Stack) > 0 {
						t.Fatalf("%s (every access %v) step %d: a scratch step unwound the stack", name, cfg.EveryAccess, i)
					}
					w := *want
					w.Stack = nil
					want = &w
				}
				if record.Hash([]*record.Transition{tr}) != record.Hash([]*record.Transition{want}) || tr.Instructions != want.Instructions {
					t.Fatalf("%s (every access %v) step %d: the transition differs from Step's: %d accesses, %d sync events, %d instructions; want %d, %d, %d",
						name, cfg.EveryAccess, i, len(tr.Accesses), len(tr.Sync), tr.Instructions, len(want.Accesses), len(want.Sync), want.Instructions)
				}
			}
			for j, tr := range plain {
				if record.Hash([]*record.Transition{tr}) != record.Hash([]*record.Transition{ref.Transitions[plainAt[j]]}) {
					t.Errorf("%s (every access %v): the transition of plain step %d changed after later scratch steps", name, cfg.EveryAccess, plainAt[j])
				}
			}
		}
	}
}
