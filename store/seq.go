package store

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// The commit sequence (doc.go, "The commit sequence"): every commit also
// writes seq/<n>, n counting the store's commits, and a flush deletes the
// ones before the last it made durable. The keys left are the commits
// since the last flush, numbered without a gap: a write-ahead log lost
// while a later one was replayed (an older log moved aside, deleted or
// damaged) leaves a gap here, which the commit counter cannot see (the
// later commits rewrote the job records).

const (
	kindSeq = "seq"
	// keyGaps holds the gaps found so far (SeqGap list, msgpack), so that
	// a flush that deletes the keys around a gap does not hide it.
	keyGaps = kindMeta + "/gaps"
)

func keySeq(n uint64) []byte { return []byte(kindSeq + "/" + hex16(n)) }

// SeqGap is a run of commits lost from the middle of the store's history:
// a write-ahead log that held them is gone, the logs after it were
// replayed. What those commits wrote (branch chunks, traces, bugs, race
// candidates) is missing from the runs written then.
type SeqGap struct {
	From uint64   `msgpack:"from"` // the first lost commit
	To   uint64   `msgpack:"to"`   // the last
	Runs []string `msgpack:"runs"` // the runs of the commits either side
}

func (g SeqGap) String() string {
	s := fmt.Sprintf("commits %d-%d of the store were lost with a write-ahead log that is gone (an older log deleted, damaged or moved aside while later ones were replayed)", g.From, g.To)
	if g.From == g.To {
		s = fmt.Sprintf("commit %d of the store was lost with a write-ahead log that is gone (an older log deleted, damaged or moved aside while later ones were replayed)", g.From)
	}
	switch len(g.Runs) {
	case 0:
	case 1:
		s += fmt.Sprintf("; run %s may miss what they wrote", g.Runs[0])
	default:
		s += fmt.Sprintf("; runs %s may miss what they wrote", strings.Join(g.Runs, " and "))
	}
	return s
}

// Gaps lists the commits lost from the middle of the store's history,
// found when it was opened or by an earlier writer (recorded since).
func (s *Store) Gaps() []SeqGap {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.gaps)
}

// GapRuns lists the runs a gap may concern.
func (s *Store) GapRuns(run string) []SeqGap {
	var out []SeqGap
	for _, g := range s.Gaps() {
		if slices.Contains(g.Runs, run) {
			out = append(out, g)
		}
	}
	return out
}

// loadSeq reads the commit sequence at Open: the gaps recorded, the gaps
// in the keys, and the last commit's number (a writer goes on from it).
// A writer records new gaps at once, flushed, before anything else.
func (s *Store) loadSeq(ro bool) error {
	var recorded []SeqGap
	v, err := s.get([]byte(keyGaps))
	switch {
	case err == nil:
		if err := unpackMsgpack(v, &recorded, maxValue); err != nil {
			return corrupt([]byte(keyGaps), err)
		}
	case !errors.Is(err, ErrNotFound):
		return err
	}
	var first, last uint64
	var lastRun string
	var found []SeqGap
	err = s.scan([]byte(kindSeq+"/"), func(k, v []byte) error {
		n, err := strconv.ParseUint(strings.TrimPrefix(string(k), kindSeq+"/"), 16, 64)
		if err != nil || len(v) == 0 || v[0] != envRaw {
			return corrupt(k, fmt.Errorf("%w: malformed commit sequence key", errCodec))
		}
		run := string(v[1:])
		if last != 0 && n != last+1 {
			g := SeqGap{From: last + 1, To: n - 1}
			for _, r := range []string{lastRun, run} {
				if validRunID(r) && !slices.Contains(g.Runs, r) {
					g.Runs = append(g.Runs, r)
				}
			}
			found = append(found, g)
		}
		if first == 0 {
			first = n
		}
		last, lastRun = n, run
		return nil
	})
	if err != nil {
		return err
	}
	gaps := recorded
	added := false
	for _, g := range found {
		if !slices.ContainsFunc(gaps, func(h SeqGap) bool { return h.From == g.From && h.To == g.To }) {
			gaps = append(gaps, g)
			added = true
		}
	}
	s.mu.Lock()
	s.gaps, s.commitSeq, s.seqFloor = gaps, last, first
	s.mu.Unlock()
	if added && !ro {
		v, err := packMsgpack(gaps)
		if err != nil {
			return err
		}
		err = s.guard(func() error {
			if err := s.db.Set([]byte(keyGaps), v, pebble.Sync); err != nil {
				return err
			}
			return s.db.Flush()
		})
		if err != nil {
			return fmt.Errorf("record the lost commits in store %s: %w", s.dir, err)
		}
	}
	return nil
}

// commitBatch commits b synced, as the store's next commit in the
// sequence (run: the run it writes, "" if none). Commits are made one at
// a time, so that the numbers reach the log in order. The batch also
// deletes the sequence keys before the last flushed commit (they are in
// table files; the flushed one stays, so that the next follows it
// without a gap): a flush adds nothing to the log, so a store closed
// after one has nothing to replay.
func (s *Store) commitBatch(b *pebble.Batch, run string) error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	n, floor, flushed := s.commitSeq+1, s.seqFloor, s.seqFlushed
	s.mu.Unlock()
	for k := floor; k < flushed; k++ {
		if err := b.Delete(keySeq(k), nil); err != nil {
			return err
		}
	}
	if err := b.Set(keySeq(n), append([]byte{envRaw}, run...), nil); err != nil {
		return err
	}
	if err := s.guard(func() error { return b.Commit(pebble.Sync) }); err != nil {
		return err
	}
	s.mu.Lock()
	s.commitSeq = n
	switch {
	case flushed > floor:
		s.seqFloor = flushed
	case s.seqFloor == 0:
		s.seqFloor = n
	}
	s.mu.Unlock()
	return nil
}

// set is one key's commit (commitBatch of a batch of one).
func (s *Store) set(k, v []byte, run string) error {
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(k, v, nil); err != nil {
		return err
	}
	return s.commitBatch(b, run)
}

// flushSeq flushes the memtable; the sequence keys before the last
// commit it made durable are deleted by the next commit.
func (s *Store) flushSeq() error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	n := s.commitSeq
	s.mu.Unlock()
	if err := s.guard(s.db.Flush); err != nil {
		return err
	}
	s.mu.Lock()
	s.seqFlushed = n
	s.mu.Unlock()
	return nil
}
