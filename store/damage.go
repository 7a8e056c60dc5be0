package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
)

// listener turns Pebble's reports of damage into records the store's
// errors name, instead of Pebble's default (its logger's Fatalf, which
// would end the process, or here panic in the middle of a read).
func (s *Store) listener() *pebble.EventListener {
	return &pebble.EventListener{
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			s.noteDamaged(filepath.Base(info.Path))
		},
		BackgroundError: func(err error) {
			// A compaction that read a damaged table: the table is named
			// by DataCorruption; nothing more to do here. A disk that
			// cannot be written (full, read-only, failing) is another
			// matter: Pebble retries the flush for ever, and an Open
			// that replayed a write-ahead log waits for that flush (a
			// full disk hung resume and import there). The process
			// ends with one line; what was committed stays in the log.
			if diskFailure(err) {
				BackgroundFatal(s.dir, err.Error())
			}
		},
	}
}

// diskFailure: err says the disk cannot take a write.
func diskFailure(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EDQUOT)
}

func (s *Store) noteDamaged(file string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.damaged {
		if f == file {
			return
		}
	}
	s.damaged = append(s.damaged, file)
}

// damagedFile is the first file Pebble reported damaged ("" if none).
func (s *Store) damagedFile() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.damaged) == 0 {
		return ""
	}
	return s.damaged[0]
}

// Damaged lists the files Pebble found damaged since the store was
// opened, in the order found.
func (s *Store) Damaged() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.damaged...)
}

// walDetail finds the write-ahead log Pebble was replaying in the detail
// it attaches to a replay error (not part of the error's message).
var walDetail = regexp.MustCompile(`replaying wal (\d+)`)

// tableInMessage finds a table named by number alone ("L0: 000005: ...").
var tableInMessage = regexp.MustCompile(`\bL\d: (\d{6}):`)

// fileInMessage finds a store file named in a Pebble error message.
var fileInMessage = regexp.MustCompile(`\b\d{6}\.(sst|log|blob)\b|\b(MANIFEST|OPTIONS)-\d+\b|\bmarker\.[\w.-]+`)

// walFile names the write-ahead log an Open error comes from ("" if none).
func walFile(err error) string {
	m := walDetail.FindStringSubmatch(fmt.Sprintf("%+v", err))
	if m == nil {
		return ""
	}
	var n uint64
	fmt.Sscan(m[1], &n)
	return fmt.Sprintf("%06d.log", n)
}

// corruptErr wraps err as damage of the store, naming the file Pebble
// reported (if any) and the key being read.
func (s *Store) corruptErr(err error, key string) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		c := *ce
		if c.Dir == "" {
			c.Dir = s.dir
		}
		if c.File == "" {
			c.File = s.damagedFile()
		}
		return &c
	}
	file := s.damagedFile()
	if file == "" {
		file = walFile(err)
	}
	if file == "" {
		file = fileInMessage.FindString(err.Error())
	}
	if m := tableInMessage.FindStringSubmatch(err.Error()); file == "" && m != nil {
		file = m[1] + ".sst"
	}
	return &CorruptError{Dir: s.dir, File: file, Key: key, Err: err}
}

// readErr passes err through, except that damage (a Pebble corruption
// error, or a record that does not decode) becomes a *CorruptError naming
// the damaged file and what was read (key: a key or a key prefix).
func (s *Store) readErr(err error, key []byte) error {
	if err == nil {
		return nil
	}
	var ce *CorruptError
	if errors.As(err, &ce) || pebble.IsCorruptionError(err) {
		return s.corruptErr(err, string(key))
	}
	return err
}
