package store

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// Problem is one piece of damage Verify found.
type Problem struct {
	Run  string `json:"run,omitempty"`  // the run it concerns, if one
	File string `json:"file,omitempty"` // the damaged file, if known
	Key  string `json:"key,omitempty"`  // the record or key range
	What string `json:"what"`
}

func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		fmt.Fprintf(&b, "%s: ", p.File)
	}
	if p.Key != "" {
		fmt.Fprintf(&b, "%s: ", p.Key)
	}
	b.WriteString(p.What)
	return b.String()
}

// Verification is what Verify read and found.
type Verification struct {
	Records  map[string]int `json:"records"` // records read and decoded, by kind
	Runs     int            `json:"runs"`
	Intact   []string       `json:"intact_runs"`  // runs with no problem
	Damaged  []string       `json:"damaged_runs"` // runs with one
	Problems []Problem      `json:"problems"`
}

// OK reports whether nothing is damaged.
func (v *Verification) OK() bool { return len(v.Problems) == 0 }

// runScoped are the kinds keyed by run first (kind/<run>/...).
var runScoped = []string{kindJob, kindFront, kindState, kindBranch, kindRace, kindTrace, kindBug, kindRMach}

// Verify reads every record of the store, so that Pebble checks every
// block's checksum, decodes each one, and checks the cross-references:
// every record of a run belongs to a run that exists (and to one of its
// jobs), every bug's trace exists, every run's binary exists, every
// checkpoint's pages exist and match their hashes, and the commit counter
// agrees with the jobs' commits. Damage is reported, not returned: the
// error is only for a store that cannot be read at all.
func (s *Store) Verify() (*Verification, error) {
	if err := s.usable(false); err != nil {
		return nil, err
	}
	v := &Verification{Records: map[string]int{}}
	add := func(run, key string, err error) {
		p := Problem{Run: run, Key: key, What: oneLine(err.Error())}
		var ce *CorruptError
		if errors.As(err, &ce) {
			p.File = ce.File
			if ce.Err != nil {
				p.What = oneLine(ce.Err.Error())
			}
		} else if f := s.damagedFile(); f != "" && pebble.IsCorruptionError(err) {
			p.File = f
		}
		v.Problems = append(v.Problems, p)
	}
	// scan reads every record under prefix; a damaged block ends the scan
	// of that prefix (reported) but not of the others.
	scan := func(run string, prefix string, fn func(k, v []byte) error) {
		if err := s.scan([]byte(prefix), fn); err != nil {
			add(run, prefix, s.readErr(err, []byte(prefix)))
		}
	}

	// Runs, and the run IDs every run-scoped kind mentions.
	runs := map[string]*Run{}
	scan("", kindRun+"/", func(k, val []byte) error {
		r, err := decodeRun(k, val)
		if err != nil {
			add(strings.TrimPrefix(string(k), kindRun+"/"), string(k), err)
			return nil
		}
		runs[r.ID] = r
		v.Records[kindRun]++
		return nil
	})
	mentioned := map[string]bool{}
	for _, kind := range runScoped {
		scan("", kind+"/", func(k, _ []byte) error {
			if parts := strings.SplitN(string(k), "/", 3); len(parts) >= 2 {
				mentioned[parts[1]] = true
			}
			return nil
		})
	}
	ids := make([]string, 0, len(runs))
	for id := range runs {
		ids = append(ids, id)
	}
	for id := range mentioned {
		if runs[id] == nil {
			add(id, kindRun+"/"+id, errors.New("records of this run exist, but the run record does not"))
		}
	}
	slices.Sort(ids)

	bins := map[string]bool{}
	scan("", kindBin+"/", func(k, _ []byte) error {
		bins[strings.TrimPrefix(string(k), kindBin+"/")] = true
		return nil
	})
	for _, id := range ids {
		s.verifyRun(v, runs[id], bins, add, scan)
	}
	s.verifyBinaries(v, bins, add)
	s.verifyCheckpoints(v, add, scan)

	// The commit counter.
	if err := s.CounterDamaged(); err != nil {
		add("", CounterFile, fmt.Errorf("the commit counter was damaged (%v): losses before it was rebuilt cannot be detected", err))
	}
	for _, l := range s.Lost() {
		add(l.Run, CounterFile, errors.New(l.String()))
	}
	for _, g := range s.Gaps() {
		runs := g.Runs
		if len(runs) == 0 {
			runs = []string{""}
		}
		for _, r := range runs {
			add(r, kindSeq+"/", errors.New(g.String()))
		}
	}
	for _, f := range s.Damaged() {
		if !slices.ContainsFunc(v.Problems, func(p Problem) bool { return p.File == f }) {
			add("", "", &CorruptError{File: f, Err: errors.New("Pebble reported this file damaged")})
		}
	}

	v.Runs = len(ids)
	bad := map[string]bool{}
	for _, p := range v.Problems {
		if p.Run != "" {
			bad[p.Run] = true
		}
	}
	for _, id := range ids {
		if bad[id] {
			v.Damaged = append(v.Damaged, id)
		} else {
			v.Intact = append(v.Intact, id)
		}
	}
	for id := range bad {
		if runs[id] == nil {
			v.Damaged = append(v.Damaged, id)
		}
	}
	slices.Sort(v.Damaged)
	return v, nil
}

// verifyRun reads one run's records and checks their references.
func (s *Store) verifyRun(v *Verification, r *Run, bins map[string]bool,
	add func(run, key string, err error), scan func(run, prefix string, fn func(k, v []byte) error)) {
	id := r.ID
	if !bins[r.Binary] {
		add(id, string(keyBin(r.Binary)), errors.New("the run's binary is missing"))
	}
	jobs := map[int]bool{}
	executed := map[int]int{} // job -> interleavings its branch chunks must cover
	scan(id, kindJob+"/"+id+"/", func(k, val []byte) error {
		j, err := decodeJob(k, val)
		if err != nil {
			add(id, string(k), err)
			return nil
		}
		jobs[j.ID] = true
		executed[j.ID] = j.Executed
		v.Records[kindJob]++
		return nil
	})
	jobOf := func(k []byte) (int, bool) {
		parts := strings.Split(string(k), "/")
		if len(parts) < 3 || !isHex(parts[2], 8) {
			return 0, false
		}
		n, err := strconv.ParseUint(parts[2], 16, 32)
		return int(n), err == nil
	}
	check := func(kind string, decode func(k, val []byte) error) {
		scan(id, kind+"/"+id+"/", func(k, val []byte) error {
			if j, ok := jobOf(k); !ok || !jobs[j] {
				add(id, string(k), errors.New("belongs to no job of the run"))
			}
			if err := decode(k, val); err != nil {
				add(id, string(k), err)
				return nil
			}
			v.Records[kind]++
			return nil
		})
	}
	blob := func(k, val []byte) error {
		_, err := unpack(val, maxValue)
		return err
	}
	check(kindFront, blob)
	check(kindState, blob)
	// A job's branch chunks number its interleavings 1, 2, ... without a
	// gap, up to its Executed count: a commit lost from the middle of the
	// write-ahead log (its later commits intact) leaves a gap here that the
	// commit counter cannot see, and offline race analysis would stop at it.
	last := map[int]int{}       // job -> last interleaving seen
	branchBad := map[int]bool{} // job -> a gap or unreadable chunk was reported
	problems := len(v.Problems)
	check(kindBranch, func(k, val []byte) error {
		raw, err := unpack(val, maxValue)
		var recs []*BranchRecord
		if err == nil {
			recs, err = decodeBranches(raw)
		}
		j, ok := jobOf(k)
		if err != nil || !ok {
			branchBad[j] = true
			return err
		}
		for _, b := range recs {
			if b.N != last[j]+1 && !branchBad[j] {
				add(id, string(k), fmt.Errorf("job %d: interleavings %d-%d are missing (their commit was lost)", j, last[j]+1, b.N-1))
				branchBad[j] = true
			}
			last[j] = b.N
		}
		return nil
	})
	if len(v.Problems) == problems { // the scan itself ended early otherwise
		for _, j := range slices.Sorted(maps.Keys(executed)) {
			// The job's counters and its chunks are written in one
			// batch, so chunks that stop short of Executed were lost.
			// (No chunk at all: the job ran with --no-branch-log.)
			if !branchBad[j] && last[j] > 0 && last[j] < executed[j] {
				add(id, string(keyJob(id, j)), fmt.Errorf("job %d: its branch chunks end at interleaving %d, the job ran %d (their commit was lost)", j, last[j], executed[j]))
			}
		}
	}
	check(kindRace, func(k, val []byte) error {
		raw, err := unpack(val, maxValue)
		if err == nil {
			_, err = decodeRace(raw)
		}
		return err
	})
	traces := map[string]bool{}
	check(kindTrace, func(k, val []byte) error {
		_, err := decodeTraceValue(k, val)
		if err == nil {
			traces[strings.TrimPrefix(string(k), kindTrace+"/")] = true
		}
		return err
	})
	check(kindBug, func(k, val []byte) error {
		b, err := decodeBug(k, val)
		if err != nil {
			return err
		}
		if !traces[id+"/"+hex8(b.Job)+"/"+hex8(b.Trace)] {
			add(id, string(k), fmt.Errorf("its trace %s is missing", string(keyTrace(id, b.Job, b.Trace))))
		}
		return nil
	})
	scan(id, kindRMach+"/"+id+"/", func(k, _ []byte) error {
		v.Records[kindRMach]++
		return nil
	})
}

// verifyBinaries checks every binary against its hash.
func (s *Store) verifyBinaries(v *Verification, bins map[string]bool, add func(run, key string, err error)) {
	names := make([]string, 0, len(bins))
	for h := range bins {
		names = append(names, h)
	}
	slices.Sort(names)
	for _, h := range names {
		if _, err := s.Binary(h); err != nil {
			add("", string(keyBin(h)), err)
			continue
		}
		v.Records[kindBin]++
	}
}

// verifyCheckpoints reads every checkpoint with its pages (which checks
// that each page exists and matches its hash).
func (s *Store) verifyCheckpoints(v *Verification, add func(run, key string, err error),
	scan func(run, prefix string, fn func(k, v []byte) error)) {
	var keys []string
	scan("", kindCkpt+"/", func(k, _ []byte) error {
		keys = append(keys, string(k))
		return nil
	})
	for _, k := range keys {
		parts := strings.Split(k, "/")
		var prefix [32]byte
		if len(parts) != 3 || !validMachine(parts[1]) || !isHex(parts[2], 64) {
			add("", k, errors.New("malformed checkpoint key"))
			continue
		}
		if _, err := hex.Decode(prefix[:], []byte(parts[2])); err != nil {
			add("", k, errors.New("malformed checkpoint key"))
			continue
		}
		if _, err := s.Checkpoint(parts[1], prefix); err != nil {
			add("", k, s.readErr(err, []byte(k)))
			continue
		}
		v.Records[kindCkpt]++
	}
	scan("", kindPage+"/", func(k, val []byte) error {
		if _, err := unpack(val, maxValue); err != nil {
			add("", string(k), err)
			return nil
		}
		v.Records[kindPage]++
		return nil
	})
}
