package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/klauspost/compress/zstd"
	"github.com/vmihailenco/msgpack/v5"
)

// FormatVersion is the version of the key schema and value encodings
// (doc.go). A store or archive of another version is refused.
const FormatVersion = 1

// pebbleFormat is the Pebble on-disk format new stores are created with.
// It is set explicitly: Pebble's default is its oldest supported format.
const pebbleFormat = pebble.FormatTableFormatV6

// Sentinel errors. Errors returned by the store wrap them with detail.
var (
	// ErrLocked: another process (or another Store in this one) holds the
	// workspace.
	ErrLocked = errors.New("workspace locked")
	// ErrVersion: the store is of another format version, or has none.
	ErrVersion = errors.New("unsupported store format")
	// ErrNotFound: no such store, run, job, record or checkpoint.
	ErrNotFound = errors.New("not found")
	// ErrArchive: an archive is malformed, corrupt, hostile or of another
	// version.
	ErrArchive = errors.New("invalid archive")
	// ErrExists: Import found the archive's run already in the store (and
	// changed nothing).
	ErrExists = errors.New("already in the store")
	// ErrCorrupt: a store file or record is damaged (a checksum mismatch,
	// a record that does not decode, commits lost with the write-ahead
	// log). The error is a *CorruptError naming the file or record.
	ErrCorrupt = errors.New("damaged store")
)

// CorruptError is damage found in a store: the file Pebble found damaged
// (File, a name in the store's directory) or the record that does not
// decode (Key), or both when known.
type CorruptError struct {
	Dir  string
	File string
	Key  string
	Err  error
	// Whole: the store cannot be opened at all (nothing of it can be
	// read until the damaged file is dealt with).
	Whole bool
}

func (e *CorruptError) Error() string {
	var b strings.Builder
	b.WriteString("store ")
	b.WriteString(e.Dir)
	switch {
	case e.File != "" && e.Key != "":
		fmt.Fprintf(&b, ": damaged file %s (record %s)", e.File, e.Key)
	case e.File != "":
		fmt.Fprintf(&b, ": damaged file %s", e.File)
	case e.Key != "":
		fmt.Fprintf(&b, ": damaged record %s", e.Key)
	default:
		b.WriteString(": damaged")
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %s", oneLine(e.Err.Error()))
	}
	return b.String()
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// oneLine keeps the first line of a message, at most 200 bytes.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// LockFile is the name of the lock file in a store's directory.
const LockFile = "landslide.lock"

// Options configure Open.
type Options struct {
	// ReadOnly opens without writing. A read-only open takes a shared lock,
	// so any number of readers may inspect a store at once, but not while a
	// writer holds it (they get ErrLocked, like a second writer). Reading
	// a missing store is ErrNotFound.
	ReadOnly bool
	// FS is Pebble's file system; nil is vfs.Default. Tests inject
	// failures through it. The lock file is always on the real file system.
	FS vfs.FS
}

// Store is an open store. Its methods are safe for concurrent use.
type Store struct {
	dir      string
	db       *pebble.DB
	lock     *os.File
	readOnly bool

	mu      sync.Mutex
	broken  error // set when Pebble failed fatally: every later call fails
	closed  bool
	pages   map[[32]byte]struct{} // pages known to be stored
	damaged []string              // files Pebble reported damaged, in order
	counter *commitCounter        // the commit counter file (counter.go)
	flushed time.Time             // when the memtable was last flushed
	lost    []Lost                // found by the counter at Open

	counterDamaged error

	// The commit sequence (seq.go): commits are made one at a time under
	// commitMu; commitSeq is the last one's number (guarded by mu, as is
	// gaps, the commits found lost from the middle).
	commitMu   sync.Mutex
	commitSeq  uint64
	seqFloor   uint64 // the lowest sequence key that may be stored (0: none)
	seqFlushed uint64 // the last commit a flush made durable (0: none yet)
	gaps       []SeqGap

	seq atomic.Uint64

	// The writer's live status (live.go).
	liveMu   sync.Mutex
	live     Live
	livePub  time.Time
	liveGone bool
}

// pebbleFatal is what the quiet logger panics with when Pebble reports a
// fatal error (it would otherwise exit the process).
type pebbleFatal struct{ msg string }

// quietLogger keeps Pebble silent; fatal errors become panics that the
// store turns into errors where it can (Open, Commit, Close: a call of
// Store.guard). A fatal error in one of Pebble's own goroutines (a flush
// or a compaction, as on a full disk) cannot be recovered there: it ends
// the process through BackgroundFatal, one line and exit 2, instead of a
// Go panic trace.
type quietLogger struct{ dir string }

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (l quietLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !inGuard() {
		BackgroundFatal(l.dir, msg)
	}
	panic(pebbleFatal{msg})
}

// inGuard reports whether the calling goroutine runs inside Store.guard
// (whose recover turns the panic into an error).
func inGuard() bool {
	pcs := make([]uintptr, 256)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, ".(*Store).guard") {
			return true
		}
		if !more {
			return false
		}
	}
}

// BackgroundFatal ends the process after Pebble failed fatally in one of
// its own goroutines (it must not return: Pebble's state is left
// half-updated). By default it says so in one line on stderr and exits
// with status 2; what was committed before stays (the write-ahead log
// and the commit counter are replayed on the next open).
var BackgroundFatal = func(dir, msg string) {
	fmt.Fprintf(os.Stderr, "landslide: store %s: the storage engine failed while writing in the background: %s (nothing already committed is lost; landslide verify-store checks the store)\n",
		dir, oneLine(msg))
	os.Exit(2)
}

// guard runs f, turning a Pebble fatal error into an error that also
// marks the store broken.
func (s *Store) guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			pf, ok := r.(pebbleFatal)
			if !ok {
				panic(r)
			}
			err = errors.New(pf.msg)
			s.mu.Lock()
			if s.broken == nil {
				s.broken = err
			}
			s.mu.Unlock()
		}
	}()
	return f()
}

// noLockFS makes Pebble's own directory lock a no-op, for read-only opens:
// the shared flock on LockFile already keeps writers out, and Pebble's
// exclusive lock would keep a second reader out.
type noLockFS struct{ vfs.FS }

func (noLockFS) Lock(string) (io.Closer, error) { return io.NopCloser(nil), nil }

// Open opens the store in dir, creating the directory and the store if
// missing (unless ReadOnly).
func Open(dir string, opt Options) (*Store, error) {
	fs := opt.FS
	if fs == nil {
		fs = vfs.Default
	}
	if opt.ReadOnly {
		st, err := os.Stat(dir)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no landslide store at %s: %w", dir, ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%s is not a landslide store (not a directory): %w", dir, ErrNotFound)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create store: %w", err)
	}
	lock, err := lockDir(dir, opt.ReadOnly)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, lock: lock, readOnly: opt.ReadOnly, pages: make(map[[32]byte]struct{})}
	if !opt.ReadOnly {
		// A status file a killed writer left says nothing true any more.
		s.removeLive()
		s.liveGone = false
		s.live = Live{Started: time.Now().UnixNano()}
	}
	if err := s.open(fs, opt.ReadOnly); err != nil {
		unlockDir(lock, !opt.ReadOnly)
		return nil, err
	}
	return s, nil
}

func (s *Store) open(fs vfs.FS, ro bool) error {
	if !ro {
		// The directory on Pebble's file system (the same as the lock's,
		// unless a test or tool gave another).
		if err := fs.MkdirAll(s.dir, 0o755); err != nil {
			return fmt.Errorf("create store: %w", err)
		}
	}
	desc, err := pebble.Peek(s.dir, fs)
	if err != nil {
		return fmt.Errorf("%s is not a readable landslide store: %v: %w", s.dir, err, ErrNotFound)
	}
	if !desc.Exists {
		names, err := fs.List(s.dir)
		if err != nil {
			return err
		}
		slices.Sort(names)
		// Table files or a commit counter without a manifest: a store whose
		// manifest (or its marker) is gone. Creating a new store here would
		// throw away what the tables hold.
		for _, n := range names {
			if strings.HasSuffix(n, ".sst") || strings.HasPrefix(n, "MANIFEST-") || n == CounterFile {
				return &CorruptError{Dir: s.dir, File: n, Whole: true,
					Err: errors.New("the store's manifest is missing or unreadable (its marker file is gone), so its tables cannot be opened; the files are left as they are")}
			}
		}
		if ro {
			return fmt.Errorf("no landslide store at %s: %w", s.dir, ErrNotFound)
		}
		for _, n := range names {
			if !pebbleFileName(n) {
				return fmt.Errorf("%s is not a landslide store (it holds %q): %w", s.dir, n, ErrNotFound)
			}
		}
	}
	po := &pebble.Options{
		FS:                 fs,
		Logger:             quietLogger{dir: s.dir},
		FormatMajorVersion: pebbleFormat,
		EventListener:      s.listener(),
	}
	if ro {
		po.FS = noLockFS{fs}
		po.ReadOnly = true
		po.ErrorIfNotExists = true
		po.FormatMajorVersion = desc.FormatMajorVersion
	} else if desc.Exists && desc.FormatMajorVersion > pebbleFormat {
		po.FormatMajorVersion = desc.FormatMajorVersion
	}
	err = s.guard(func() error {
		db, err := pebble.Open(s.dir, po)
		s.db = db
		return err
	})
	if err != nil {
		// With the directory locked, Pebble failing to open its own files
		// is damage (a missing, truncated or malformed file), unless the
		// system refused access.
		if !errors.Is(err, os.ErrPermission) {
			ce := s.corruptErr(err, "").(*CorruptError)
			ce.Whole = true
			return ce
		}
		return fmt.Errorf("open store %s: %w", s.dir, err)
	}
	if err := s.checkVersion(ro); err != nil {
		_ = s.guard(s.db.Close)
		if s.damagedFile() != "" || pebble.IsCorruptionError(err) {
			return s.corruptErr(err, string(keyVersion))
		}
		return err
	}
	s.flushed = time.Now()
	s.counter = loadCounter(s.dir)
	s.counterDamaged = s.counter.damaged
	if s.counterDamaged != nil && !ro {
		// Reported (CounterDamaged), then rebuilt from what the store
		// holds, so that later losses are caught again.
		if err := s.rebuildCounter(); err != nil && !errors.Is(err, ErrCorrupt) {
			_ = s.guard(s.db.Close)
			return err
		}
	}
	// A job record that does not read is reported when it is read; the
	// comparison covers what can be read.
	lost, _ := s.checkCounter()
	// A run that is gone altogether is one entry, not one per job.
	for _, l := range lost {
		if l.Job == 0 || !runGone(lost, l.Run) {
			s.lost = append(s.lost, l)
		}
	}
	// Damage in the sequence keys is reported when they are read
	// (Verify); the store's records are what matter.
	if err := s.loadSeq(ro); err != nil && !errors.Is(err, ErrCorrupt) {
		_ = s.guard(s.db.Close)
		return err
	}
	return nil
}

// runGone reports whether Lost says the whole run is gone.
func runGone(lost []Lost, run string) bool {
	for _, l := range lost {
		if l.Run == run && l.Job == 0 {
			return true
		}
	}
	return false
}

// Lost lists the jobs (and runs) whose stored records are older than
// their last commit, found when the store was opened: the write-ahead log
// that held those commits was damaged or lost (doc.go, "The commit
// counter"). The list is as of Open: once a resume has committed the job
// again, the next Open no longer lists it.
func (s *Store) Lost() []Lost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Lost(nil), s.lost...)
}

// LostRun returns the entries of Lost for one run.
func (s *Store) LostRun(run string) []Lost {
	var out []Lost
	for _, l := range s.Lost() {
		if l.Run == run {
			out = append(out, l)
		}
	}
	return out
}

// CounterDamaged is the damage found in the commit counter file when the
// store was opened (nil: none). Losses from before then cannot be
// detected; a writer's open rebuilt the file from the store's records.
func (s *Store) CounterDamaged() error { return s.counterDamaged }

// Flush writes everything committed into Pebble's table files, so that it
// no longer depends on the write-ahead log (which Pebble replays only up
// to its first damaged record).
func (s *Store) Flush() error {
	if err := s.usable(true); err != nil {
		return err
	}
	if err := s.flushSeq(); err != nil {
		return fmt.Errorf("flush store %s: %w", s.dir, err)
	}
	s.mu.Lock()
	s.flushed = time.Now()
	s.mu.Unlock()
	return nil
}

// pebbleFileName reports whether a file in a store directory may have
// been left by Pebble (or the store) while creating a store.
func pebbleFileName(n string) bool {
	switch {
	case n == LockFile, n == "LOCK", n == "CURRENT", n == CounterFile, n == CounterFile+".tmp", n == LiveFile, n == LiveFile+".tmp":
		return true
	case strings.HasPrefix(n, "OPTIONS-"), strings.HasPrefix(n, "MANIFEST-"), strings.HasPrefix(n, "marker."):
		return true
	case strings.HasSuffix(n, ".log"), strings.HasSuffix(n, ".sst"), strings.HasSuffix(n, ".blob"):
		return true
	}
	return false
}

var keyVersion = []byte("meta/version")

func (s *Store) checkVersion(ro bool) error {
	v, closer, err := s.db.Get(keyVersion)
	if err == nil {
		found := strings.TrimSpace(string(v))
		closer.Close()
		if found != strconv.Itoa(FormatVersion) {
			return fmt.Errorf("store %s has format version %q; this landslide supports version %d: %w",
				s.dir, found, FormatVersion, ErrVersion)
		}
		return nil
	}
	if !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("read store version: %w", err)
	}
	empty, err := s.empty()
	if err != nil {
		return err
	}
	if c := loadCounter(s.dir); empty && len(c.counts) > 0 {
		return &CorruptError{Dir: s.dir, Whole: true,
			Err: fmt.Errorf("the store holds no record, but its commit counter lists %d committed jobs and runs: the write-ahead log that held them is gone", len(c.counts))}
	}
	if ro && empty {
		// A store whose creation was interrupted before its first write
		// (a kill): it holds nothing, and the next command that writes
		// finishes it. To a reader it is no store yet.
		return fmt.Errorf("no landslide store at %s (its creation was interrupted before anything was stored): %w", s.dir, ErrNotFound)
	}
	if !empty {
		return fmt.Errorf("%s is a Pebble database with no landslide format version (found none; this landslide supports version %d): %w",
			s.dir, FormatVersion, ErrVersion)
	}
	// A new store (or one whose creation stopped before this write). The
	// version is flushed into a table at once, so that a damaged log
	// can never make the store look like a foreign Pebble database.
	return s.guard(func() error {
		if err := s.db.Set(keyVersion, []byte(strconv.Itoa(FormatVersion)), pebble.Sync); err != nil {
			return err
		}
		return s.db.Flush()
	})
}

func (s *Store) empty() (bool, error) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return false, err
	}
	empty := !it.First()
	return empty, it.Close()
}

// Close closes the store and releases its lock.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	broken := s.broken
	s.mu.Unlock()
	var err error
	if broken == nil {
		err = s.guard(s.db.Close)
	} else {
		// Pebble's commit pipeline is unusable after a fatal error; close
		// what can be closed.
		func() {
			defer func() { _ = recover() }()
			_ = s.db.Close()
		}()
	}
	if !s.readOnly {
		s.removeLive()
	}
	unlockDir(s.lock, !s.readOnly)
	return err
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.readOnly }

func (s *Store) usable(write bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return fmt.Errorf("store %s is closed", s.dir)
	case s.broken != nil:
		return fmt.Errorf("store unusable after an earlier failure: %w", s.broken)
	case write && s.readOnly:
		return fmt.Errorf("store %s is open read-only", s.dir)
	}
	return nil
}

// ---- keys ----

// Key kinds: the first component of every key (doc.go).
const (
	kindMeta   = "meta"
	kindBin    = "bin"
	kindRun    = "run"
	kindJob    = "job"
	kindFront  = "front"
	kindState  = "state"
	kindBranch = "br"
	kindRace   = "race"
	kindTrace  = "trace"
	kindBug    = "bug"
	kindRMach  = "rmach"
	kindCkpt   = "ckpt"
	kindPage   = "page"
)

func hex8(v int) string       { return fmt.Sprintf("%08x", uint32(v)) }
func hex16(v uint64) string   { return fmt.Sprintf("%016x", v) }
func hexHash(h []byte) string { return hex.EncodeToString(h) }

func keyBin(hash string) []byte           { return []byte(kindBin + "/" + hash) }
func keyRun(id string) []byte             { return []byte(kindRun + "/" + id) }
func keyJob(run string, job int) []byte   { return []byte(kindJob + "/" + run + "/" + hex8(job)) }
func keyFront(run string, job int) []byte { return []byte(kindFront + "/" + run + "/" + hex8(job)) }
func keyState(run string, job int) []byte { return []byte(kindState + "/" + run + "/" + hex8(job)) }
func keyRMach(run, machine string) []byte { return []byte(kindRMach + "/" + run + "/" + machine) }
func keyPage(h [32]byte) []byte           { return []byte(kindPage + "/" + hexHash(h[:])) }
func keyCkpt(m string, p [32]byte) []byte { return []byte(kindCkpt + "/" + m + "/" + hexHash(p[:])) }
func keyBranch(run string, job int, n int) []byte {
	return []byte(kindBranch + "/" + run + "/" + hex8(job) + "/" + hex16(uint64(n)))
}
func keyRace(run string, job int, a, b uint64) []byte {
	return []byte(kindRace + "/" + run + "/" + hex8(job) + "/" + hex16(a) + "/" + hex16(b))
}
func keyTrace(run string, job, id int) []byte {
	return []byte(kindTrace + "/" + run + "/" + hex8(job) + "/" + hex8(id))
}
func keyBug(run string, job, trace int) []byte {
	return []byte(kindBug + "/" + run + "/" + hex8(job) + "/" + hex8(trace))
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// RunIDLen is the length of a run ID.
const RunIDLen = 12

func validRunID(s string) bool { return isHex(s, RunIDLen) }

// validMachine: a machine id is a key component: letters, digits, '-' and
// '_', at most 128 bytes.
func validMachine(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func checkRun(id string) error {
	if !validRunID(id) {
		return fmt.Errorf("invalid run id %q (want %d lowercase hex digits)", id, RunIDLen)
	}
	return nil
}

func checkRunJob(run string, job int) error {
	if err := checkRun(run); err != nil {
		return err
	}
	if !validJob(job) {
		return fmt.Errorf("invalid job id %d", job)
	}
	return nil
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// ---- values: a one-byte envelope, then the encoding ----

const (
	envRaw  = 0 // the bytes follow as they are
	envZstd = 1 // a zstd frame follows
)

// maxValue bounds the decompressed size of any stored value.
const maxValue = 2 << 30

var (
	zencOnce sync.Once
	zenc     *zstd.Encoder
	zdecMu   sync.Mutex
	zdecs    = map[int64]*zstd.Decoder{}
)

func encoder() *zstd.Encoder {
	zencOnce.Do(func() {
		var err error
		zenc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithLowerEncoderMem(true))
		if err != nil {
			panic(err)
		}
	})
	return zenc
}

// decoder returns a shared zstd decoder refusing output past limit bytes.
func decoder(limit int64) *zstd.Decoder {
	zdecMu.Lock()
	defer zdecMu.Unlock()
	d := zdecs[limit]
	if d == nil {
		var err error
		window := uint64(limit)
		if window < zstd.MinWindowSize {
			window = zstd.MinWindowSize
		}
		if window > 1<<27 {
			window = 1 << 27
		}
		d, err = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(uint64(limit)), zstd.WithDecoderMaxWindow(window),
			zstd.WithDecoderConcurrency(0))
		if err != nil {
			panic(err)
		}
		if len(zdecs) > 8 {
			clear(zdecs)
		}
		zdecs[limit] = d
	}
	return d
}

var (
	zfastOnce sync.Once
	zfast     *zstd.Encoder
)

// fastEncoder is for branch chunks, on the exploration's hot path: about
// 1.5x faster than the default level for 20% more bytes.
func fastEncoder() *zstd.Encoder {
	zfastOnce.Do(func() {
		var err error
		zfast, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			panic(err)
		}
	})
	return zfast
}

// pack wraps raw in an envelope, compressing it when asked and when that
// makes it smaller.
func pack(dst, raw []byte, compress bool) []byte {
	return packWith(dst, raw, compress, encoder())
}

func packWith(dst, raw []byte, compress bool, ze *zstd.Encoder) []byte {
	if compress && len(raw) >= 64 {
		dst = append(dst[:0], envZstd)
		dst = ze.EncodeAll(raw, dst)
		if len(dst) < len(raw)+1 {
			return dst
		}
	}
	dst = append(dst[:0], envRaw)
	return append(dst, raw...)
}

// unpack opens an envelope. The result never aliases v.
func unpack(v []byte, limit int64) ([]byte, error) {
	if len(v) == 0 {
		return nil, fmt.Errorf("%w: empty value", errCodec)
	}
	switch v[0] {
	case envRaw:
		if int64(len(v)-1) > limit {
			return nil, fmt.Errorf("%w: value of %d bytes exceeds the limit of %d", errCodec, len(v)-1, limit)
		}
		return bytes.Clone(v[1:]), nil
	case envZstd:
		var h zstd.Header
		if err := h.Decode(v[1:]); err != nil {
			return nil, fmt.Errorf("%w: zstd header: %v", errCodec, err)
		}
		var size uint64
		if h.HasFCS {
			if h.FrameContentSize > uint64(limit) {
				return nil, fmt.Errorf("%w: compressed value of %d bytes exceeds the limit of %d", errCodec, h.FrameContentSize, limit)
			}
			size = min(h.FrameContentSize, 1<<26)
		}
		// The decoder enforces the limit too (frames without a declared
		// size, several frames).
		out, err := decoder(limit).DecodeAll(v[1:], make([]byte, 0, size))
		if err != nil {
			return nil, fmt.Errorf("%w: zstd: %v", errCodec, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unknown value encoding %d", errCodec, v[0])
}

func packMsgpack(v any) ([]byte, error) {
	b, err := msgpack.Marshal(v)
	if err != nil {
		return nil, err
	}
	return pack(nil, b, false), nil
}

func unpackMsgpack(v []byte, out any, limit int64) error {
	b, err := unpack(v, limit)
	if err != nil {
		return err
	}
	return decodeMsgpack(b, out)
}

// decodeMsgpack decodes an unpacked MessagePack value.
func decodeMsgpack(b []byte, out any) error {
	// Check the structure first: every count must fit in the bytes that
	// remain (the msgpack package preallocates what a header claims).
	if err := (&dec{b: b}).skipAll(); err != nil {
		return err
	}
	d := msgpack.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(out); err != nil {
		return fmt.Errorf("%w: %v", errCodec, err)
	}
	if d.Buffered().(*bytes.Reader).Len() != 0 {
		return fmt.Errorf("%w: trailing bytes", errCodec)
	}
	return nil
}

// ---- reads ----

// get returns a copy of the value of key, or ErrNotFound.
func (s *Store) get(key []byte) ([]byte, error) {
	if err := s.usable(false); err != nil {
		return nil, err
	}
	v, err := getFrom(s.db, key)
	return v, s.readErr(err, key)
}

type reader interface {
	Get([]byte) ([]byte, io.Closer, error)
	NewIter(*pebble.IterOptions) (*pebble.Iterator, error)
}

func getFrom(r reader, key []byte) ([]byte, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(v)
	closer.Close()
	return out, nil
}

// scan calls fn with every key and value under prefix, in key order. The
// slices are valid only during the call.
func scanFrom(r reader, prefix []byte, fn func(k, v []byte) error) error {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err == nil {
			err = fn(it.Key(), v)
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

func (s *Store) scan(prefix []byte, fn func(k, v []byte) error) error {
	if err := s.usable(false); err != nil {
		return err
	}
	return s.readErr(scanFrom(s.db, prefix, fn), prefix)
}

// corrupt is a record (key) that does not decode.
func corrupt(key []byte, err error) error {
	return &CorruptError{Key: string(key), Err: err}
}

// ---- binaries ----

// PutBinary stores a program image by content and returns its hex sha256.
// Storing the same image again writes nothing.
func (s *Store) PutBinary(img []byte) (string, error) {
	if err := s.usable(true); err != nil {
		return "", err
	}
	sum := sha256.Sum256(img)
	hash := hexHash(sum[:])
	if _, err := s.get(keyBin(hash)); err == nil {
		return hash, nil
	} else if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	v := pack(nil, img, true)
	if err := s.set(keyBin(hash), v, ""); err != nil {
		return "", fmt.Errorf("store binary: %w", err)
	}
	return hash, nil
}

// Binary returns the program image with the given hex sha256.
func (s *Store) Binary(hash string) ([]byte, error) {
	if !isHex(hash, 64) {
		return nil, fmt.Errorf("invalid binary hash %q", hash)
	}
	v, err := s.get(keyBin(hash))
	if err != nil {
		return nil, fmt.Errorf("binary %s: %w", hash, err)
	}
	img, err := unpack(v, maxValue)
	if err != nil {
		return nil, corrupt(keyBin(hash), err)
	}
	if sum := sha256.Sum256(img); hexHash(sum[:]) != hash {
		return nil, corrupt(keyBin(hash), fmt.Errorf("%w: content does not match its hash", errCodec))
	}
	return img, nil
}

// ---- runs and jobs ----

var hostname = sync.OnceValue(func() string { h, _ := os.Hostname(); return h })

// NewRun assigns r an ID, Created and Updated, and stores it.
func (s *Store) NewRun(r *Run) error {
	if err := s.usable(true); err != nil {
		return err
	}
	now := time.Now().UnixNano()
	for {
		seq := s.seq.Add(1)
		sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%s\x00%d\x00%d", r.Binary, now, hostname(), os.Getpid(), seq))
		id := hexHash(sum[:])[:RunIDLen]
		if _, err := s.get(keyRun(id)); err == nil {
			continue
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		r.ID, r.Created, r.Updated = id, now, now
		break
	}
	v, err := packMsgpack(r)
	if err != nil {
		return err
	}
	if err := s.set(keyRun(r.ID), v, r.ID); err != nil {
		return err
	}
	return s.counter.set(r.ID, 0, 1)
}

func decodeRun(key, v []byte) (*Run, error) {
	r := new(Run)
	if err := unpackMsgpack(v, r, maxValue); err != nil {
		return nil, corrupt(key, err)
	}
	return r, nil
}

// Run returns the run with the given ID or unique ID prefix.
func (s *Store) Run(idOrPrefix string) (*Run, error) {
	p := strings.ToLower(idOrPrefix)
	if p == "" || len(p) > RunIDLen || !isHex(p, len(p)) {
		return nil, fmt.Errorf("invalid run id %q: %w", idOrPrefix, ErrNotFound)
	}
	var found []*Run
	err := s.scan(keyRun(p), func(k, v []byte) error {
		r, err := decodeRun(k, v)
		if err == nil {
			found = append(found, r)
		}
		return err
	})
	switch {
	case err != nil:
		return nil, err
	case len(found) == 0:
		return nil, fmt.Errorf("run %s: %w", idOrPrefix, ErrNotFound)
	case len(found) > 1:
		ids := make([]string, len(found))
		for i, r := range found {
			ids[i] = r.ID
		}
		return nil, fmt.Errorf("run prefix %q is ambiguous: it matches %s", idOrPrefix, strings.Join(ids, ", "))
	}
	return found[0], nil
}

// Runs returns every run, by creation time then ID.
func (s *Store) Runs() ([]*Run, error) {
	var runs []*Run
	err := s.scan([]byte(kindRun+"/"), func(k, v []byte) error {
		r, err := decodeRun(k, v)
		if err == nil {
			runs = append(runs, r)
		}
		return err
	})
	sort.Slice(runs, func(i, j int) bool {
		if runs[i].Created != runs[j].Created {
			return runs[i].Created < runs[j].Created
		}
		return runs[i].ID < runs[j].ID
	})
	return runs, err
}

func decodeJob(key, v []byte) (*Job, error) {
	j := new(Job)
	if err := unpackMsgpack(v, j, maxValue); err != nil {
		return nil, corrupt(key, err)
	}
	return j, nil
}

// Jobs returns the jobs of a run, by ID.
func (s *Store) Jobs(run string) ([]*Job, error) {
	if err := checkRun(run); err != nil {
		return nil, err
	}
	var jobs []*Job
	err := s.scan([]byte(kindJob+"/"+run+"/"), func(k, v []byte) error {
		j, err := decodeJob(k, v)
		if err == nil {
			jobs = append(jobs, j)
		}
		return err
	})
	return jobs, err
}

// Job returns one job.
func (s *Store) Job(run string, id int) (*Job, error) {
	if err := checkRunJob(run, id); err != nil {
		return nil, err
	}
	k := keyJob(run, id)
	v, err := s.get(k)
	if err != nil {
		return nil, fmt.Errorf("job %d of run %s: %w", id, run, err)
	}
	return decodeJob(k, v)
}

// ---- commits ----

// Commit is what one commit writes, atomically.
type Commit struct {
	// Run is written with Updated set to now (nil: not written).
	Run *Run
	// Job is written with Commits incremented (nil: not written). Frontier,
	// State and Branches belong to it.
	Job *Job
	// Frontier replaces the job's DPOR frontier (nil: keep).
	Frontier []byte
	// State replaces the job's analyzer state (nil: keep).
	State []byte
	// Branches are new explored interleavings of Job, stored as one chunk.
	Branches []*BranchRecord
	// Log is the same, encoded as they came (BranchLog); at most one of
	// Branches and Log may be given.
	Log *BranchLog
	// Races are upserted by (run, job, Candidate.A.PC, Candidate.B.PC). A
	// record with an empty Run gets Job's run and ID.
	Races []*RaceRecord
	// Traces and Bugs are keyed by (run, job, ID) and (run, job, Trace);
	// empty Runs are filled in as for Races.
	Traces []*TraceRecord
	Bugs   []*BugRecord
	// Checkpoints are keyed by (Machine, Prefix); their pages are stored
	// once per content across the whole store. The run's list of machines
	// (used by Export) records their Machine.
	Checkpoints []*CheckpointRecord
	// Flush: after the commit, write the memtable to table files, so the
	// commit no longer depends on the write-ahead log (a job's last
	// commit). Commits are also flushed at least every FlushInterval.
	Flush bool
}

// FlushInterval bounds what a damaged write-ahead log can take with it:
// a commit more than this long after the last flush flushes.
var FlushInterval = time.Minute

// CommitStats says what a commit wrote: logical bytes (keys + values as
// stored, after compression), before Pebble's own compression.
type CommitStats struct {
	Bytes           int64 // everything
	Branches        int   // branch records
	BranchBytes     int64 // their chunk
	Checkpoints     int
	CheckpointBytes int64 // checkpoint records and new pages
	PagesNew        int   // pages written
	PagesShared     int   // pages already stored (or zero pages)
}

// Commit writes c in one batch synced to disk: all of it or, on error,
// none of it.
func (s *Store) Commit(c *Commit) error {
	_, err := s.CommitWithStats(c)
	return err
}

type batchWriter struct {
	b  *pebble.Batch
	st *CommitStats
}

func (w *batchWriter) set(k, v []byte) error {
	w.st.Bytes += int64(len(k) + len(v))
	return w.b.Set(k, v, nil)
}

var encPool = sync.Pool{New: func() any { return &enc{b: make([]byte, 0, 64<<10)} }}

// CommitWithStats is Commit, returning what it wrote.
func (s *Store) CommitWithStats(c *Commit) (st CommitStats, err error) {
	if err := s.usable(true); err != nil {
		return st, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	w := &batchWriter{b: b, st: &st}
	var run, job string
	jobID := 0
	if c.Run != nil {
		if err := checkRun(c.Run.ID); err != nil {
			return st, err
		}
		run = c.Run.ID
	}
	if c.Job != nil {
		if err := checkRunJob(c.Job.Run, c.Job.ID); err != nil {
			return st, err
		}
		if run != "" && c.Job.Run != run {
			return st, fmt.Errorf("commit: job of run %s with run %s", c.Job.Run, run)
		}
		job, jobID = c.Job.Run, c.Job.ID
		if run == "" {
			run = c.Job.Run
		}
	} else if c.Frontier != nil || c.State != nil || len(c.Branches) > 0 {
		return st, errors.New("commit: frontier, state or branches without a job")
	}
	fill := func(r *string, j *int) error {
		if *r == "" {
			if job == "" {
				return errors.New("commit: record without a run, and no job in the commit")
			}
			*r, *j = job, jobID
		}
		return checkRunJob(*r, *j)
	}

	var oldUpdated int64
	var pages map[[32]byte]struct{}
	if c.Run != nil {
		oldUpdated = c.Run.Updated
		c.Run.Updated = time.Now().UnixNano()
		defer func() {
			if err != nil {
				c.Run.Updated = oldUpdated
			}
		}()
		v, err := packMsgpack(c.Run)
		if err != nil {
			return st, err
		}
		if err := w.set(keyRun(run), v); err != nil {
			return st, err
		}
	}
	if c.Job != nil {
		c.Job.Commits++
		defer func() {
			if err != nil {
				c.Job.Commits--
			}
		}()
		v, err := packMsgpack(c.Job)
		if err != nil {
			return st, err
		}
		if err := w.set(keyJob(job, jobID), v); err != nil {
			return st, err
		}
	}
	if c.Frontier != nil {
		if err := w.set(keyFront(job, jobID), pack(nil, c.Frontier, true)); err != nil {
			return st, err
		}
	}
	if c.State != nil {
		if err := w.set(keyState(job, jobID), pack(nil, c.State, true)); err != nil {
			return st, err
		}
	}
	if len(c.Branches) > 0 && c.Log.Len() > 0 {
		return st, errors.New("commit: both Branches and Log")
	}
	if len(c.Branches) > 0 {
		n0 := st.Bytes
		if err := s.putBranches(w, job, jobID, c.Branches); err != nil {
			return st, err
		}
		st.Branches = len(c.Branches)
		st.BranchBytes = st.Bytes - n0
	}
	if c.Log.Len() > 0 {
		n0 := st.Bytes
		raw := c.Log.chunk()
		v := packWith(make([]byte, 0, len(raw)/4+64), raw, true, fastEncoder())
		if err := w.set(keyBranch(job, jobID, c.Log.first), v); err != nil {
			return st, err
		}
		st.Branches = c.Log.Len()
		st.BranchBytes = st.Bytes - n0
	}
	for _, r := range c.Races {
		if err := fill(&r.Run, &r.Job); err != nil {
			return st, err
		}
		v := pack(nil, encodeRace(r), true)
		if err := w.set(keyRace(r.Run, r.Job, r.Candidate.A.PC, r.Candidate.B.PC), v); err != nil {
			return st, err
		}
	}
	for _, t := range c.Traces {
		if err := fill(&t.Run, &t.Job); err != nil {
			return st, err
		}
		if !validJob(t.ID) {
			return st, fmt.Errorf("commit: invalid trace id %d", t.ID)
		}
		if err := w.set(keyTrace(t.Run, t.Job, t.ID), pack(nil, encodeTrace(t), true)); err != nil {
			return st, err
		}
	}
	for _, bug := range c.Bugs {
		if err := fill(&bug.Run, &bug.Job); err != nil {
			return st, err
		}
		if !validJob(bug.Trace) {
			return st, fmt.Errorf("commit: invalid trace id %d", bug.Trace)
		}
		v, err := packMsgpack(bug)
		if err != nil {
			return st, err
		}
		if err := w.set(keyBug(bug.Run, bug.Job, bug.Trace), v); err != nil {
			return st, err
		}
	}
	if len(c.Checkpoints) > 0 {
		n0 := st.Bytes
		pages = make(map[[32]byte]struct{})
		machines := map[string]bool{}
		for _, cp := range c.Checkpoints {
			if err := s.putCheckpoint(w, cp, pages); err != nil {
				return st, err
			}
			if run != "" && !machines[cp.Machine] {
				machines[cp.Machine] = true
				if err := w.set(keyRMach(run, cp.Machine), []byte{envRaw}); err != nil {
					return st, err
				}
			}
		}
		st.Checkpoints = len(c.Checkpoints)
		st.CheckpointBytes = st.Bytes - n0
	}
	err = s.commitBatch(b, run)
	if err != nil {
		return st, fmt.Errorf("commit to store %s: %w", s.dir, err)
	}
	s.mu.Lock()
	due := c.Flush || time.Since(s.flushed) >= FlushInterval
	s.mu.Unlock()
	if due {
		if err := s.Flush(); err != nil {
			return st, err
		}
	}
	if c.Job != nil {
		if err := s.counter.set(job, jobID, c.Job.Commits); err != nil {
			return st, err
		}
	}
	if len(pages) > 0 {
		s.mu.Lock()
		if len(s.pages) > 1<<20 {
			clear(s.pages)
		}
		for h := range pages {
			s.pages[h] = struct{}{}
		}
		s.mu.Unlock()
	}
	return st, nil
}

func (s *Store) putBranches(w *batchWriter, run string, job int, brs []*BranchRecord) error {
	if !sort.SliceIsSorted(brs, func(i, j int) bool { return brs[i].N < brs[j].N }) {
		brs = append([]*BranchRecord(nil), brs...)
		sort.SliceStable(brs, func(i, j int) bool { return brs[i].N < brs[j].N })
	}
	for _, br := range brs {
		if br == nil || br.N < 1 || br.Div < 0 {
			return errors.New("commit: branch records need N >= 1 and Div >= 0")
		}
	}
	e := encPool.Get().(*enc)
	defer func() {
		if cap(e.b) <= 16<<20 {
			encPool.Put(e)
		}
	}()
	e.b = e.b[:0]
	encBranches(e, brs)
	v := packWith(make([]byte, 0, len(e.b)/4+64), e.b, true, fastEncoder())
	return w.set(keyBranch(run, job, brs[0].N), v)
}

// BranchLog holds branch records encoded as they are added, so that a
// caller committing in batches need not keep their transitions alive
// until the commit (they are most of an exploration's garbage). The zero
// value is an empty log.
type BranchLog struct {
	body  []byte
	n     int
	first int
	last  int
}

// Add encodes br at the end of the log. N must increase from record to
// record.
func (l *BranchLog) Add(br *BranchRecord) error {
	if br == nil || br.N < 1 || br.Div < 0 || (l.n > 0 && br.N <= l.last) {
		return errors.New("branch log: records need increasing N >= 1 and Div >= 0")
	}
	e := enc{b: l.body}
	encBranch(&e, br)
	l.body = e.b
	if l.n == 0 {
		l.first = br.N
	}
	l.n++
	l.last = br.N
	return nil
}

// Len is the number of records in the log (0 for a nil log).
func (l *BranchLog) Len() int {
	if l == nil {
		return 0
	}
	return l.n
}

// chunk is the log as a chunk value (the array header, then the records).
func (l *BranchLog) chunk() []byte {
	e := enc{b: make([]byte, 0, len(l.body)+5)}
	e.arr(l.n)
	return append(e.b, l.body...)
}

func (s *Store) pageStored(h [32]byte) (bool, error) {
	s.mu.Lock()
	_, ok := s.pages[h]
	s.mu.Unlock()
	if ok {
		return true, nil
	}
	_, closer, err := s.db.Get(keyPage(h))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	closer.Close()
	return true, nil
}

func (s *Store) putCheckpoint(w *batchWriter, cp *CheckpointRecord, pages map[[32]byte]struct{}) error {
	if !validMachine(cp.Machine) {
		return fmt.Errorf("commit: invalid checkpoint machine id %q", cp.Machine)
	}
	sc := &storedCheckpoint{Machine: cp.Machine, Prefix: cp.Prefix, Depth: cp.Depth, State: cp.State,
		Pages: make([]pageRef, len(cp.Pages))}
	for i, p := range cp.Pages {
		ref := &sc.Pages[i]
		ref.Addr = p.Addr
		if p.Data == nil {
			ref.Zero = true
			w.st.PagesShared++
			continue
		}
		ref.Hash = sha256.Sum256(p.Data)
		if _, ok := pages[ref.Hash]; ok {
			w.st.PagesShared++
			continue
		}
		stored, err := s.pageStored(ref.Hash)
		if err != nil {
			return err
		}
		pages[ref.Hash] = struct{}{}
		if stored {
			w.st.PagesShared++
			continue
		}
		w.st.PagesNew++
		if err := w.set(keyPage(ref.Hash), pack(nil, p.Data, true)); err != nil {
			return err
		}
	}
	return w.set(keyCkpt(cp.Machine, cp.Prefix), pack(nil, encodeCheckpoint(sc), true))
}

// ---- reads of job data ----

// Frontier returns a job's frontier, or ErrNotFound.
func (s *Store) Frontier(run string, job int) ([]byte, error) {
	return s.blob(run, job, keyFront)
}

// State returns a job's analyzer state, or ErrNotFound.
func (s *Store) State(run string, job int) ([]byte, error) {
	return s.blob(run, job, keyState)
}

func (s *Store) blob(run string, job int, key func(string, int) []byte) ([]byte, error) {
	if err := checkRunJob(run, job); err != nil {
		return nil, err
	}
	k := key(run, job)
	v, err := s.get(k)
	if err != nil {
		return nil, err
	}
	out, err := unpack(v, maxValue)
	if err != nil {
		return nil, corrupt(k, err)
	}
	return out, nil
}

// Branches calls fn with each of a job's branch records in N order,
// decoding one stored chunk (one commit's records) at a time. An error
// from fn stops the iteration and is returned.
func (s *Store) Branches(run string, job int, fn func(*BranchRecord) error) error {
	if err := checkRunJob(run, job); err != nil {
		return err
	}
	if err := s.usable(false); err != nil {
		return err
	}
	snap := s.db.NewSnapshot()
	defer snap.Close()
	prefix := []byte(kindBranch + "/" + run + "/" + hex8(job) + "/")
	return s.readErr(scanFrom(snap, prefix, func(k, v []byte) error {
		raw, err := unpack(v, maxValue)
		if err != nil {
			return corrupt(k, err)
		}
		brs, err := decodeBranches(raw)
		if err != nil {
			return corrupt(k, err)
		}
		for _, br := range brs {
			if err := fn(br); err != nil {
				return err
			}
		}
		return nil
	}), prefix)
}

// Races returns a job's race records, by PCs.
func (s *Store) Races(run string, job int) ([]*RaceRecord, error) {
	if err := checkRunJob(run, job); err != nil {
		return nil, err
	}
	var out []*RaceRecord
	err := s.scan([]byte(kindRace+"/"+run+"/"+hex8(job)+"/"), func(k, v []byte) error {
		raw, err := unpack(v, maxValue)
		if err != nil {
			return corrupt(k, err)
		}
		r, err := decodeRace(raw)
		if err != nil {
			return corrupt(k, err)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

func decodeTraceValue(k, v []byte) (*TraceRecord, error) {
	raw, err := unpack(v, maxValue)
	if err != nil {
		return nil, corrupt(k, err)
	}
	t, err := decodeTrace(raw)
	if err != nil {
		return nil, corrupt(k, err)
	}
	return t, nil
}

// Traces returns a run's traces, by job then ID.
func (s *Store) Traces(run string) ([]*TraceRecord, error) {
	if err := checkRun(run); err != nil {
		return nil, err
	}
	var out []*TraceRecord
	err := s.scan([]byte(kindTrace+"/"+run+"/"), func(k, v []byte) error {
		t, err := decodeTraceValue(k, v)
		if err == nil {
			out = append(out, t)
		}
		return err
	})
	return out, err
}

// Trace returns one trace, or ErrNotFound.
func (s *Store) Trace(run string, job, id int) (*TraceRecord, error) {
	if err := checkRunJob(run, job); err != nil {
		return nil, err
	}
	if !validJob(id) {
		return nil, fmt.Errorf("invalid trace id %d", id)
	}
	k := keyTrace(run, job, id)
	v, err := s.get(k)
	if err != nil {
		return nil, err
	}
	return decodeTraceValue(k, v)
}

func decodeBug(k, v []byte) (*BugRecord, error) {
	b := new(BugRecord)
	if err := unpackMsgpack(v, b, maxValue); err != nil {
		return nil, corrupt(k, err)
	}
	return b, nil
}

// Bugs returns the bugs of a run ("" for every run), by run ID, job and
// trace.
func (s *Store) Bugs(run string) ([]*BugRecord, error) {
	prefix := kindBug + "/"
	if run != "" {
		if err := checkRun(run); err != nil {
			return nil, err
		}
		prefix += run + "/"
	}
	var out []*BugRecord
	err := s.scan([]byte(prefix), func(k, v []byte) error {
		b, err := decodeBug(k, v)
		if err == nil {
			out = append(out, b)
		}
		return err
	})
	return out, err
}

// Checkpoint returns the checkpoint of a machine at a prefix, with its
// pages, or ErrNotFound.
func (s *Store) Checkpoint(machine string, prefix [32]byte) (*CheckpointRecord, error) {
	if !validMachine(machine) {
		return nil, fmt.Errorf("invalid machine id %q", machine)
	}
	if err := s.usable(false); err != nil {
		return nil, err
	}
	snap := s.db.NewSnapshot()
	defer snap.Close()
	return readCheckpoint(snap, machine, prefix)
}

// HasCheckpoint reports whether a checkpoint is stored, without reading
// it.
func (s *Store) HasCheckpoint(machine string, prefix [32]byte) (bool, error) {
	if !validMachine(machine) {
		return false, fmt.Errorf("invalid machine id %q", machine)
	}
	if err := s.usable(false); err != nil {
		return false, err
	}
	_, err := s.get(keyCkpt(machine, prefix))
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func readCheckpoint(r reader, machine string, prefix [32]byte) (*CheckpointRecord, error) {
	k := keyCkpt(machine, prefix)
	v, err := getFrom(r, k)
	if err != nil {
		return nil, err
	}
	raw, err := unpack(v, maxValue)
	if err != nil {
		return nil, corrupt(k, err)
	}
	sc, err := decodeCheckpoint(raw)
	if err != nil {
		return nil, corrupt(k, err)
	}
	cp := &CheckpointRecord{Machine: sc.Machine, Prefix: sc.Prefix, Depth: sc.Depth, State: sc.State,
		Pages: make([]PageRecord, len(sc.Pages))}
	cache := map[[32]byte][]byte{}
	for i, ref := range sc.Pages {
		cp.Pages[i].Addr = ref.Addr
		if ref.Zero {
			continue
		}
		data, ok := cache[ref.Hash]
		if !ok {
			pk := keyPage(ref.Hash)
			pv, err := getFrom(r, pk)
			if err != nil {
				return nil, corrupt(k, fmt.Errorf("page %x: %w", ref.Hash[:8], err))
			}
			if data, err = unpack(pv, maxValue); err != nil {
				return nil, corrupt(pk, err)
			}
			if sha256.Sum256(data) != ref.Hash {
				return nil, corrupt(pk, fmt.Errorf("%w: page content does not match its hash", errCodec))
			}
			cache[ref.Hash] = data
		}
		cp.Pages[i].Data = data
	}
	return cp, nil
}

// ---- usage ----

// KindUsage is the space one kind of key takes.
type KindUsage struct {
	Keys  int64
	Bytes int64 // keys + values as stored (values after the store's compression)
}

// Usage is the space a store takes, by key kind ("bin", "br", "ckpt",
// "page", "trace", ...; see doc.go).
type Usage struct {
	Kinds map[string]KindUsage
	Total KindUsage
	// Disk is the size of Pebble's files (after Pebble's own block
	// compression, including obsolete data not yet compacted away).
	Disk uint64
}

// Usage measures the store.
func (s *Store) Usage() (Usage, error) {
	u := Usage{Kinds: map[string]KindUsage{}}
	if err := s.usable(false); err != nil {
		return u, err
	}
	snap := s.db.NewSnapshot()
	defer snap.Close()
	it, err := snap.NewIter(nil)
	if err != nil {
		return u, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		kind := string(k)
		if i := bytes.IndexByte(k, '/'); i >= 0 {
			kind = string(k[:i])
		}
		lv := it.LazyValue()
		n := int64(len(k)) + int64(lv.Len())
		ku := u.Kinds[kind]
		ku.Keys++
		ku.Bytes += n
		u.Kinds[kind] = ku
		u.Total.Keys++
		u.Total.Bytes += n
	}
	if err := it.Close(); err != nil {
		return u, err
	}
	u.Disk = s.db.Metrics().DiskSpaceUsage()
	return u, nil
}

// lockPath is the lock file of a store directory.
func lockPath(dir string) string { return filepath.Join(dir, LockFile) }
