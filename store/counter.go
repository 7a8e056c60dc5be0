package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// CounterFile is the store's own record of how far each job's commits
// went (doc.go, "The commit counter"). It lives beside Pebble's files, so
// that losing Pebble's write-ahead log cannot take it along.
const CounterFile = "landslide.commits"

const counterHeader = "landslide commit counter 1"

// Lost is a job whose stored records are older than its last commit: the
// commits after Stored were lost (with a damaged write-ahead log).
type Lost struct {
	Run       string
	Job       int // 0: the run record itself
	Stored    int // commits the store holds (0: the record is missing)
	Committed int // commits made
}

func (l Lost) String() string {
	if l.Job == 0 {
		return fmt.Sprintf("run %s was created but every record of it is gone (it cannot be resumed; run it again)", l.Run)
	}
	if l.Stored == 0 {
		return fmt.Sprintf("run %s job %d made %d commits but none is stored", l.Run, l.Job, l.Committed)
	}
	return fmt.Sprintf("run %s job %d lost commits %d-%d (the store holds its results as of commit %d)",
		l.Run, l.Job, l.Stored+1, l.Committed, l.Stored)
}

// commitCounter keeps, per "run/job" (job 0: the run was created), the
// number of commits made: Job.Commits after the last successful commit.
type commitCounter struct {
	path   string
	mu     sync.Mutex
	counts map[string]int
	// damaged: the file was there but did not verify; its counts are not
	// trusted (a writer rebuilds it from the store).
	damaged error
	// off: the counter cannot be written (read-only file system): counts
	// are still checked, not updated.
	off bool
}

func counterKey(run string, job int) string { return run + "/" + hex8(job) }

// loadCounter reads dir's counter file; a missing file is an empty
// counter (a new store, or one written before the counter existed).
func loadCounter(dir string) *commitCounter {
	c := &commitCounter{path: filepath.Join(dir, CounterFile), counts: map[string]int{}}
	data, err := os.ReadFile(c.path)
	if errors.Is(err, os.ErrNotExist) {
		return c
	}
	if err != nil {
		c.damaged = err
		return c
	}
	if err := c.parse(data); err != nil {
		c.damaged = err
		c.counts = map[string]int{}
	}
	return c
}

func (c *commitCounter) parse(data []byte) error {
	body, sum, ok := bytes.Cut(bytes.TrimSuffix(data, []byte("\n")), []byte("\ncrc32c "))
	if !ok {
		return errors.New("no checksum line")
	}
	want, err := strconv.ParseUint(string(sum), 16, 32)
	if err != nil || len(sum) != 8 {
		return fmt.Errorf("bad checksum line %q", oneLine(string(sum)))
	}
	if got := crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)); uint64(got) != want {
		return fmt.Errorf("checksum mismatch (%08x, file says %08x)", got, want)
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	if !sc.Scan() || sc.Text() != counterHeader {
		return errors.New("bad header")
	}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || !validRunID(f[0]) || !isHex(f[1], 8) {
			return fmt.Errorf("bad line %q", oneLine(sc.Text()))
		}
		job, _ := strconv.ParseUint(f[1], 16, 32)
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 {
			return fmt.Errorf("bad line %q", oneLine(sc.Text()))
		}
		c.counts[counterKey(f[0], int(job))] = n
	}
	return nil
}

// encode is the file's content: the entries in key order, then a CRC-32C
// of everything before the checksum line.
func (c *commitCounter) encode() []byte {
	keys := make([]string, 0, len(c.counts))
	for k := range c.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.WriteString(counterHeader)
	for _, k := range keys {
		run, job, _ := strings.Cut(k, "/")
		fmt.Fprintf(&b, "\n%s %s %d", run, job, c.counts[k])
	}
	sum := crc32.Checksum(b.Bytes(), crc32.MakeTable(crc32.Castagnoli))
	fmt.Fprintf(&b, "\ncrc32c %08x\n", sum)
	return b.Bytes()
}

// set records that (run, job) made n commits and rewrites the file
// atomically (write, sync, rename, sync the directory).
func (c *commitCounter) set(run string, job, n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return nil
	}
	k := counterKey(run, job)
	if old, ok := c.counts[k]; ok && old == n {
		return nil
	}
	c.counts[k] = n
	return c.write()
}

// write rewrites the file from counts; c.mu is held.
func (c *commitCounter) write() error {
	tmp := c.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("commit counter: %w", err)
	}
	_, err = f.Write(c.encode())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, c.path)
	}
	if err == nil {
		if d, derr := os.Open(filepath.Dir(c.path)); derr == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("commit counter %s: %w", c.path, err)
	}
	c.damaged = nil
	return nil
}

// check compares the counter with the store's job records and returns
// the jobs whose commits went backwards, in key order.
func (s *Store) checkCounter() ([]Lost, error) {
	c := s.counter
	c.mu.Lock()
	keys := make([]string, 0, len(c.counts))
	for k := range c.counts {
		keys = append(keys, k)
	}
	counts := maps.Clone(c.counts)
	c.mu.Unlock()
	slices.Sort(keys)
	var lost []Lost
	for _, k := range keys {
		run, jh, _ := strings.Cut(k, "/")
		job64, _ := strconv.ParseUint(jh, 16, 32)
		job, n := int(job64), counts[k]
		if job == 0 {
			if _, err := s.get(keyRun(run)); errors.Is(err, ErrNotFound) {
				lost = append(lost, Lost{Run: run, Committed: n})
			} else if err != nil {
				return lost, err
			}
			continue
		}
		stored := 0
		j, err := s.Job(run, job)
		switch {
		case err == nil:
			stored = j.Commits
		case !errors.Is(err, ErrNotFound):
			return lost, err
		}
		if stored < n {
			lost = append(lost, Lost{Run: run, Job: job, Stored: stored, Committed: n})
		}
	}
	return lost, nil
}

// rebuildCounter rewrites a damaged counter from the store's own job
// records (a writer's open does this, after the damage was reported).
func (s *Store) rebuildCounter() error {
	c := s.counter
	counts := map[string]int{}
	err := s.scan([]byte(kindJob+"/"), func(k, v []byte) error {
		j, err := decodeJob(k, v)
		if err != nil {
			return err
		}
		counts[counterKey(j.Run, j.ID)] = j.Commits
		return nil
	})
	if err != nil {
		return err
	}
	err = s.scan([]byte(kindRun+"/"), func(k, _ []byte) error {
		counts[counterKey(strings.TrimPrefix(string(k), kindRun+"/"), 0)] = 1
		return nil
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = counts
	return c.write()
}
