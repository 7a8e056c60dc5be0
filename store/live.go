package store

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"
)

// LiveFile is the status file of the process that holds a store (doc.go,
// "Watching a running store"): readers cannot open the store while a
// writer holds it, so the writer publishes its progress there.
const LiveFile = "landslide.status"

// LiveEvery is how often a writer's live status is rewritten at most
// (UpdateLive with now unset).
var LiveEvery = time.Second

// maxLive bounds what a reader reads of a status file.
const maxLive = 1 << 20

// Live is what the process holding a store publishes of itself: which
// command, since when, and each run it writes with its progress.
type Live struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Started int64     `json:"started"` // unix ns
	Updated int64     `json:"updated"` // unix ns, when this was written
	Runs    []LiveRun `json:"runs"`
}

// LiveRun is one run a writer is exploring, as of Live.Updated.
type LiveRun struct {
	ID            string  `json:"id"`
	Command       string  `json:"command"`
	Program       string  `json:"program"`
	Created       int64   `json:"created"` // unix ns
	Interleavings int     `json:"interleavings"`
	Proportion    float64 `json:"estimated_proportion"`
	Size          float64 `json:"estimated_size"` // 0: not known
	ElapsedSec    float64 `json:"elapsed_seconds"`
	Races         int     `json:"race_candidates"`
	// Progress is the run's progress in one line, as the process's own
	// report says it (the estimate, the ETA with its likely range).
	Progress string    `json:"progress"`
	Jobs     []LiveJob `json:"jobs,omitempty"`
}

// LiveJob is one running job of a run with several (Quicksand's).
type LiveJob struct {
	ID            int     `json:"id"`
	Interleavings int     `json:"interleavings"`
	Proportion    float64 `json:"estimated_proportion"`
	Progress      string  `json:"progress"`
}

// finite keeps JSON encodable: NaN and infinities become 0 (not known).
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// UpdateLive lets fn change the writer's live status, then publishes it:
// now, or when about LiveEvery has passed since it was last published (fn is
// not called otherwise, so a caller may call this often). Publishing
// writes LiveFile.tmp and renames it over LiveFile, so that a reader
// never sees half a file; a failure is ignored (the status is advisory:
// the exploration goes on). Read-only stores publish nothing.
func (s *Store) UpdateLive(now bool, fn func(*Live)) {
	if s.readOnly {
		return
	}
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	// (Three quarters: a caller that reports every LiveEvery is not
	// skipped every other time for a few microseconds.)
	if s.liveGone || !now && time.Since(s.livePub) < LiveEvery*3/4 {
		return
	}
	if fn != nil {
		fn(&s.live)
	}
	s.livePub = time.Now()
	l := s.live
	l.PID, l.Updated = os.Getpid(), s.livePub.UnixNano()
	l.Runs = append([]LiveRun(nil), l.Runs...)
	for i := range l.Runs {
		r := &l.Runs[i]
		r.Proportion, r.Size, r.ElapsedSec = finite(r.Proportion), finite(r.Size), finite(r.ElapsedSec)
		r.Jobs = append([]LiveJob(nil), r.Jobs...)
		for j := range r.Jobs {
			r.Jobs[j].Proportion = finite(r.Jobs[j].Proportion)
		}
	}
	data, err := json.Marshal(l)
	if err != nil {
		return
	}
	path := filepath.Join(s.dir, LiveFile)
	if err := os.WriteFile(path+".tmp", append(data, '\n'), 0o644); err == nil {
		_ = os.Rename(path+".tmp", path)
	}
}

// removeLive takes the writer's status file away (at Open, one a dead
// process left; at Close, its own).
func (s *Store) removeLive() {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	s.liveGone = true
	path := filepath.Join(s.dir, LiveFile)
	_ = os.Remove(path + ".tmp")
	_ = os.Remove(path)
}

// ReadLive reads the live status of the process holding the store in dir
// (after Open failed with ErrLocked). It is ErrNotFound when there is
// none: no status file, one that does not decode, or one left by another
// process than the one holding the lock (a writer that has not published
// yet, over what a killed one left).
func ReadLive(dir string) (*Live, error) {
	f, err := os.Open(filepath.Join(dir, LiveFile))
	if err != nil {
		return nil, fmt.Errorf("no live status in %s: %w", dir, ErrNotFound)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLive+1))
	if err != nil || len(data) > maxLive {
		return nil, fmt.Errorf("no readable live status in %s: %w", dir, ErrNotFound)
	}
	l := new(Live)
	if err := json.Unmarshal(data, l); err != nil {
		return nil, fmt.Errorf("no readable live status in %s (%v): %w", dir, oneLine(err.Error()), ErrNotFound)
	}
	for _, r := range l.Runs {
		if !validRunID(r.ID) {
			return nil, fmt.Errorf("no readable live status in %s (run %q): %w", dir, oneLine(r.ID), ErrNotFound)
		}
	}
	if pid := lockPID(dir); pid == 0 || pid != l.PID {
		return nil, fmt.Errorf("no live status in %s of the process holding it: %w", dir, ErrNotFound)
	}
	return l, nil
}

// LockHolder is the pid of the live process holding the store in dir (0
// if none is known).
func LockHolder(dir string) int { return lockPID(dir) }
