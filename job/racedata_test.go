package job

import (
	"context"
	"testing"

	"landslide/dpor"
	"landslide/store"
)

// TestRaceDataNamed: a race candidate names its memory as the machine had
// it, and the store keeps the name. exit_before_status's thr_exit writes
// the thread's status and exited flag in the block thr_create allocated
// for it (offsets 12 and 24), which thr_join reads without the lock; fig1's
// count is a global.
func TestRaceDataNamed(t *testing.T) {
	for _, c := range []struct {
		fixture string
		addr    uint64
		want    string
	}{
		{"exit_before_status/thr_exit_status", 0x2000000028, "heap block 1 from thr_create+24"},
		{"exit_before_status/thr_exit_status", 0x200000001c, "heap block 1 from thr_create+12"},
		{"ref/fig1", 0, "count"},
	} {
		_, img := image(t, c.fixture)
		cfg := Config{Spec: Spec{Spec: dpor.Spec{MaxInterleavings: 300}}, Image: img}
		st, err := store.Open(t.TempDir(), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		run := storedRun(t, st, cfg)
		cfg.Persist = &Persist{Store: st, Run: run}
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := st.Races(run.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range res.Races {
			if c.addr != 0 && r.A.Addr != c.addr || r.Data != c.want {
				continue
			}
			found = true
			for _, rec := range recs {
				if rec.Candidate.Key() == r.Key() && rec.Data != c.want {
					t.Errorf("%s: the stored candidate names %q, the job %q", c.fixture, rec.Data, c.want)
				}
			}
		}
		if !found {
			var got []string
			for _, r := range res.Races {
				got = append(got, r.Data)
			}
			t.Errorf("%s: no race candidate at %#x named %q; names: %q", c.fixture, c.addr, c.want, got)
		}
		st.Close()
	}
}
