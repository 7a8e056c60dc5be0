package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/klauspost/compress/zstd"
)

// Archive layout (see doc.go):
//
//	"LANDSLIDE-ARCHIVE\n"  magic, 18 bytes
//	uint32 big-endian      archive format version (ArchiveVersion)
//	chunks: uint32 big-endian length n > 0, then n bytes; together they
//	  are one zstd stream of records, each:
//	    kind   1 byte (archive record kind, see arcKinds)
//	    key    uvarint length + bytes (a store key)
//	    value  uvarint length + bytes (the store's value, envelope included)
//	uint32 0               end of the chunks
//	trailer: uint64 big-endian count of the records, then the sha256 of
//	  every byte of the file before the trailer.
//
// The chunks let a reader find the end of the compressed stream without
// trusting the decompressor, so that the checksum covers every byte of the
// file, compressed bytes included.
const (
	archiveMagic = "LANDSLIDE-ARCHIVE\n"
	// ArchiveVersion is the archive format version; it changes with
	// FormatVersion, since archives carry store values as they are.
	ArchiveVersion = FormatVersion

	maxKeyLen   = 512
	maxChunk    = 16 << 20
	chunkSize   = 256 << 10
	trailerSize = 8 + sha256.Size
)

// Archive record kinds, by key kind.
var arcKinds = map[string]byte{
	kindRun: 1, kindBin: 2, kindJob: 3, kindFront: 4, kindState: 5, kindBranch: 6,
	kindRace: 7, kindTrace: 8, kindBug: 9, kindRMach: 10, kindCkpt: 11, kindPage: 12,
}

// ImportLimits bound what an import reads.
type ImportLimits struct {
	// MaxBytes bounds the decompressed archive (default 4 GiB).
	MaxBytes int64
	// MaxRecord bounds one record, and the decompressed size of any value
	// in it (default 256 MiB).
	MaxRecord int64
	// MaxExpansion bounds everything an import decompresses, the record
	// stream and every value in it added up, to this many times the
	// archive's size plus ExpansionSlack (default 1000, 0 the default,
	// negative none; the archives Export writes decompress to 5 to 60
	// times their size). A small crafted archive would otherwise make an
	// import hold up to MaxBytes, and decompress up to MaxRecord per value.
	MaxExpansion int64
	// Size is the archive's size in bytes; 0: Import finds it when the
	// reader can say (a file, a bytes.Reader), or else bounds only by
	// MaxBytes and MaxRecord.
	Size int64
}

// ExpansionSlack is what an archive may decompress to beyond
// MaxExpansion times its size (a tiny archive's headers and small
// records).
const ExpansionSlack = 1 << 20

// DefaultImportLimits are the limits of Import.
var DefaultImportLimits = ImportLimits{MaxBytes: 4 << 30, MaxRecord: 256 << 20, MaxExpansion: 1000}

// budget is the most an import of this archive may decompress in all
// (-1: no bound but MaxBytes and MaxRecord).
func (l ImportLimits) budget() int64 {
	if l.Size <= 0 || l.MaxExpansion <= 0 {
		return -1
	}
	if l.Size > (math.MaxInt64-ExpansionSlack)/l.MaxExpansion {
		return math.MaxInt64
	}
	return l.Size*l.MaxExpansion + ExpansionSlack
}

// readerSize is the size of what r holds, if it can say (0 otherwise).
func readerSize(r io.Reader) int64 {
	switch r := r.(type) {
	case interface{ Stat() (os.FileInfo, error) }:
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size()
		}
	case interface{ Size() int64 }:
		return r.Size()
	}
	return 0
}

// archiveError is a malformed, corrupt or hostile archive: errors.Is(err,
// ErrArchive) holds, and the message is the detail alone (the caller
// says "invalid archive" once, if at all).
type archiveError struct{ err error }

func (e *archiveError) Error() string        { return e.err.Error() }
func (e *archiveError) Unwrap() error        { return e.err }
func (e *archiveError) Is(target error) bool { return target == ErrArchive }

// archiveErr formats an archiveError; %w may wrap an underlying error.
func archiveErr(format string, args ...any) error {
	return &archiveError{fmt.Errorf(format, args...)}
}

// ---- export ----

// chunkWriter frames the compressed stream into chunks and hashes
// everything it writes.
type chunkWriter struct {
	w   io.Writer
	h   hash.Hash
	buf []byte
}

func (c *chunkWriter) raw(b []byte) error {
	c.h.Write(b)
	_, err := c.w.Write(b)
	return err
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), chunkSize-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == chunkSize {
			if err := c.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (c *chunkWriter) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	if err := c.raw(binary.BigEndian.AppendUint32(nil, uint32(len(c.buf)))); err != nil {
		return err
	}
	err := c.raw(c.buf)
	c.buf = c.buf[:0]
	return err
}

// arcWriter writes an archive.
type arcWriter struct {
	cw    *chunkWriter
	zw    *zstd.Encoder
	bw    *bufio.Writer
	count uint64
	buf   []byte
}

func newArcWriter(w io.Writer, version uint32) (*arcWriter, error) {
	cw := &chunkWriter{w: w, h: sha256.New(), buf: make([]byte, 0, chunkSize)}
	if err := cw.raw(binary.BigEndian.AppendUint32([]byte(archiveMagic), version)); err != nil {
		return nil, err
	}
	zw, err := zstd.NewWriter(cw, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	return &arcWriter{cw: cw, zw: zw, bw: bufio.NewWriterSize(zw, 1<<16)}, nil
}

func (a *arcWriter) write(kind byte, k, v []byte) error {
	a.buf = append(a.buf[:0], kind)
	a.buf = binary.AppendUvarint(a.buf, uint64(len(k)))
	a.buf = append(a.buf, k...)
	a.buf = binary.AppendUvarint(a.buf, uint64(len(v)))
	if _, err := a.bw.Write(a.buf); err != nil {
		return err
	}
	if _, err := a.bw.Write(v); err != nil {
		return err
	}
	a.count++
	return nil
}

func (a *arcWriter) record(k, v []byte) error {
	kind := string(k)
	if i := bytes.IndexByte(k, '/'); i >= 0 {
		kind = string(k[:i])
	}
	return a.write(arcKinds[kind], k, v)
}

// close ends the stream and writes the trailer.
func (a *arcWriter) close() error {
	if err := a.bw.Flush(); err != nil {
		return err
	}
	if err := a.zw.Close(); err != nil {
		return err
	}
	if err := a.cw.flush(); err != nil {
		return err
	}
	if err := a.cw.raw([]byte{0, 0, 0, 0}); err != nil {
		return err
	}
	trailer := a.cw.h.Sum(binary.BigEndian.AppendUint64(nil, a.count))
	_, err := a.cw.w.Write(trailer)
	return err
}

// Export writes run as a single-file archive: the run, its binary, jobs,
// frontiers, analyzer states, branch records, races, traces, bugs, the
// list of machines it checkpointed, and the checkpoints (with their
// pages) at every prefix of the run's traces for those machines: what a
// replay of any of its traces needs.
func (s *Store) Export(run string, w io.Writer) error {
	return s.readErr(s.export(run, w), keyRun(run))
}

func (s *Store) export(run string, w io.Writer) error {
	if err := checkRun(run); err != nil {
		return err
	}
	if err := s.usable(false); err != nil {
		return err
	}
	snap := s.db.NewSnapshot()
	defer snap.Close()
	rk := keyRun(run)
	rv, err := getFrom(snap, rk)
	if err != nil {
		return fmt.Errorf("export run %s: %w", run, err)
	}
	r, err := decodeRun(rk, rv)
	if err != nil {
		return err
	}

	a, err := newArcWriter(w, ArchiveVersion)
	if err != nil {
		return err
	}
	if err := a.record(rk, rv); err != nil {
		return err
	}
	if r.Binary != "" {
		bk := keyBin(r.Binary)
		bv, err := getFrom(snap, bk)
		if err != nil {
			return fmt.Errorf("export run %s: its binary %s: %w", run, r.Binary, err)
		}
		if err := a.record(bk, bv); err != nil {
			return err
		}
	}
	var machines []string
	for _, kind := range []string{kindRMach, kindJob, kindFront, kindState, kindBranch, kindRace, kindTrace, kindBug} {
		err := scanFrom(snap, []byte(kind+"/"+run+"/"), func(k, v []byte) error {
			if kind == kindRMach {
				machines = append(machines, string(k[len(kind)+len(run)+2:]))
			}
			return a.record(k, v)
		})
		if err != nil {
			return fmt.Errorf("export run %s: %w", run, err)
		}
	}

	// Checkpoints along the run's traces, and their pages.
	seenCkpt := map[string]bool{}
	seenPage := map[[32]byte]bool{}
	if len(machines) > 0 {
		err := scanFrom(snap, []byte(kindTrace+"/"+run+"/"), func(k, v []byte) error {
			t, err := decodeTraceValue(k, v)
			if err != nil {
				return err
			}
			for _, p := range prefixHashes(t.Choices) {
				for _, m := range machines {
					ck := keyCkpt(m, p)
					if seenCkpt[string(ck)] {
						continue
					}
					cv, err := getFrom(snap, ck)
					if errors.Is(err, ErrNotFound) {
						continue
					}
					if err != nil {
						return err
					}
					seenCkpt[string(ck)] = true
					raw, err := unpack(cv, maxValue)
					if err != nil {
						return corrupt(ck, err)
					}
					sc, err := decodeCheckpoint(raw)
					if err != nil {
						return corrupt(ck, err)
					}
					if err := a.record(ck, cv); err != nil {
						return err
					}
					for _, ref := range sc.Pages {
						if ref.Zero || seenPage[ref.Hash] {
							continue
						}
						seenPage[ref.Hash] = true
						pk := keyPage(ref.Hash)
						pv, err := getFrom(snap, pk)
						if err != nil {
							return corrupt(ck, fmt.Errorf("page %x: %w", ref.Hash[:8], err))
						}
						if err := a.record(pk, pv); err != nil {
							return err
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("export run %s: %w", run, err)
		}
	}

	return a.close()
}

// ---- import ----

// Import reads an archive written by Export into the store, within
// DefaultImportLimits. See ImportLimited.
func (s *Store) Import(r io.Reader) (string, error) {
	return s.ImportLimited(r, DefaultImportLimits)
}

// countReader fails once more than max bytes were read through it.
type countReader struct {
	r   io.Reader
	n   int64
	max int64
	// bomb, if set, is the error past max: max is the archive's
	// expansion bound (ImportLimits.budget), not MaxBytes.
	bomb error
}

func (c *countReader) Read(p []byte) (int, error) {
	if c.n >= c.max {
		// Is there more? Then the archive is too large.
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			if c.bomb != nil {
				return 0, c.bomb
			}
			return 0, archiveErr("archive larger than %d bytes (decompressed or not)", c.max)
		}
		return 0, err
	}
	if int64(len(p)) > c.max-c.n {
		p = p[:c.max-c.n]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// chunkReader reads the chunked compressed stream, hashing every byte,
// and reports EOF at the end marker.
type chunkReader struct {
	r    *bufio.Reader
	h    hash.Hash
	left uint32 // bytes left in the current chunk
	done bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.left == 0 {
		var l [4]byte
		if _, err := io.ReadFull(c.r, l[:]); err != nil {
			return 0, archiveErr("truncated archive (in the chunk framing)")
		}
		c.h.Write(l[:])
		c.left = binary.BigEndian.Uint32(l[:])
		if c.left == 0 {
			c.done = true
			return 0, io.EOF
		}
		if c.left > maxChunk {
			return 0, archiveErr("chunk of %d bytes", c.left)
		}
	}
	if uint32(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.left -= uint32(n)
	if err == io.EOF {
		if c.left > 0 {
			return n, archiveErr("truncated archive (in a chunk)")
		}
		err = nil
	}
	return n, err
}

// recReader reads the decompressed records.
type recReader struct{ r *bufio.Reader }

func (h *recReader) ReadByte() (byte, error) { return h.r.ReadByte() }

// readN reads n bytes, growing the buffer as data arrives rather than
// trusting n.
func (h *recReader) readN(n uint64) ([]byte, error) {
	var buf bytes.Buffer
	if n < 1<<20 {
		buf.Grow(int(n))
	}
	m, err := io.CopyN(&buf, h.r, int64(n))
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("after %d of %d bytes: %w", m, n, err)
	}
	return buf.Bytes(), nil
}

// importer validates records and collects them into a batch.
type importer struct {
	s       *Store
	lim     ImportLimits
	stream  *countReader // the decompressed record stream
	values  int64        // bytes the values decompressed to, so far
	b       *pebble.Batch
	run     *Run
	runID   string
	keys    map[string]bool
	bin     string
	mach    map[string]bool
	ckMach  map[string]bool     // machines of checkpoints (must be in mach)
	pages   map[[32]byte]bool   // pages in the archive
	needPg  map[[32]byte]string // pages checkpoints refer to -> a checkpoint key
	records uint64
}

// ImportLimited reads an archive into the store. It validates everything
// first (magic, version, checksum, sizes, keys, and that every record
// decodes), then writes all of it in one synced batch; on any error the
// store is unchanged. Keys must belong to the archived run (checkpoints
// and pages excepted: they are content-addressed, and are added only when
// absent). If the run is already in the store, nothing is written and the
// error wraps ErrExists (with the run ID returned).
func (s *Store) ImportLimited(r io.Reader, lim ImportLimits) (runID string, err error) {
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultImportLimits.MaxBytes
	}
	if lim.MaxRecord <= 0 {
		lim.MaxRecord = DefaultImportLimits.MaxRecord
	}
	if lim.MaxExpansion == 0 {
		lim.MaxExpansion = DefaultImportLimits.MaxExpansion
	}
	if lim.Size <= 0 {
		lim.Size = readerSize(r)
	}
	if err := s.usable(true); err != nil {
		return "", err
	}
	var header [len(archiveMagic) + 4]byte
	if n, err := io.ReadFull(r, header[:]); err != nil {
		if n < len(archiveMagic) && !bytes.HasPrefix([]byte(archiveMagic), header[:n]) {
			return "", archiveErr("not a landslide archive")
		}
		return "", archiveErr("truncated archive header")
	}
	if string(header[:len(archiveMagic)]) != archiveMagic {
		return "", archiveErr("not a landslide archive")
	}
	if v := binary.BigEndian.Uint32(header[len(archiveMagic):]); v != ArchiveVersion {
		return "", archiveErr("archive format version %d, this landslide reads %d", v, ArchiveVersion)
	}
	// The compressed file is no larger than what it holds, give or take
	// zstd's framing: bound it too.
	raw := bufio.NewReaderSize(&countReader{r: r, max: lim.MaxBytes + lim.MaxBytes/8 + 1<<20}, 1<<16)
	chunks := &chunkReader{r: raw, h: sha256.New()}
	chunks.h.Write(header[:])
	// The countReader bounds the output (a bomb stops at MaxBytes); the
	// window bounds the decoder's memory (Export's encoder uses 8 MiB).
	zr, err := zstd.NewReader(chunks, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(64<<20))
	if err != nil {
		return "", err
	}
	defer zr.Close()
	stream := &countReader{r: zr, max: lim.MaxBytes}
	if b := lim.budget(); b >= 0 && b < stream.max {
		stream.max, stream.bomb = b, bombErr(b, lim)
	}
	rr := &recReader{r: bufio.NewReaderSize(stream, 1<<16)}

	im := &importer{s: s, lim: lim, stream: stream, b: s.db.NewBatch(), keys: map[string]bool{}, mach: map[string]bool{},
		ckMach: map[string]bool{}, pages: map[[32]byte]bool{}, needPg: map[[32]byte]string{}}
	defer im.b.Close()
	err = im.read(rr)
	if err == nil && !chunks.done {
		err = archiveErr("data after the compressed stream")
	}
	if err == nil {
		err = im.trailer(raw, chunks.h.Sum(nil))
	}
	if err != nil {
		if !errors.Is(err, ErrArchive) {
			err = &archiveError{err}
		}
		return "", err
	}
	if err := im.finish(); err != nil {
		return "", err
	}
	if _, err := s.get(keyRun(im.runID)); err == nil {
		return im.runID, fmt.Errorf("run %s: %w", im.runID, ErrExists)
	} else if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	err = s.commitBatch(im.b, im.runID)
	if err != nil {
		return "", fmt.Errorf("import into store %s: %w", s.dir, err)
	}
	// An import is whole once it returns: flushed, so that it does not
	// depend on the write-ahead log.
	if err := s.Flush(); err != nil {
		return im.runID, err
	}
	return im.runID, nil
}

// read reads records until the end of the compressed stream.
func (im *importer) read(rr *recReader) error {
	for {
		kind, err := rr.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return archiveErr("after %d records: %w", im.records, err)
		}
		klen, err := binary.ReadUvarint(rr)
		if err != nil {
			return archiveErr("record %d: truncated key length: %v", im.records, err)
		}
		if klen > maxKeyLen {
			return archiveErr("record %d: key of %d bytes", im.records, klen)
		}
		k, err := rr.readN(klen)
		if err != nil {
			return archiveErr("record %d: key: %v", im.records, err)
		}
		vlen, err := binary.ReadUvarint(rr)
		if err != nil {
			return archiveErr("record %d: truncated value length: %v", im.records, err)
		}
		if vlen > uint64(im.lim.MaxRecord) {
			return archiveErr("record %d (%.40q): value of %d bytes exceeds the limit of %d", im.records, k, vlen, im.lim.MaxRecord)
		}
		v, err := rr.readN(vlen)
		if err != nil {
			return archiveErr("record %d (%.40q): value: %v", im.records, k, err)
		}
		if err := im.record(kind, k, v); err != nil {
			return archiveErr("record %d (%.60q): %v", im.records, k, err)
		}
		im.records++
	}
}

// trailer checks the trailer against the records read and the hash of
// the file before it, and that nothing follows it.
func (im *importer) trailer(raw *bufio.Reader, sum []byte) error {
	var t [trailerSize]byte
	if _, err := io.ReadFull(raw, t[:]); err != nil {
		return archiveErr("truncated archive (in the trailer)")
	}
	if !bytes.Equal(t[8:], sum) {
		return archiveErr("checksum mismatch: the archive is corrupt")
	}
	if n := binary.BigEndian.Uint64(t[:8]); n != im.records {
		return archiveErr("the trailer counts %d records, the archive has %d", n, im.records)
	}
	if _, err := raw.ReadByte(); err != io.EOF {
		return archiveErr("data after the trailer")
	}
	return nil
}

// record validates one record and adds it to the batch.
func (im *importer) record(kind byte, k, v []byte) error {
	key := string(k)
	if im.keys[key] {
		return errors.New("duplicate key")
	}
	im.keys[key] = true
	parts := strings.Split(key, "/")
	if arcKinds[parts[0]] == 0 || arcKinds[parts[0]] != kind {
		return fmt.Errorf("hostile or unknown key (record kind %d)", kind)
	}
	if im.run == nil && parts[0] != kindRun {
		return errors.New("the archive does not start with its run")
	}
	// Every key must be exactly what the store itself would write: this
	// rejects other runs, path-like components, "..", padding, case.
	runJob := func() (int, error) {
		if len(parts) < 3 || parts[1] != im.runID {
			return 0, errors.New("hostile key: not of the archived run")
		}
		j, err := strconv.ParseUint(parts[2], 16, 32)
		if err != nil {
			return 0, errors.New("hostile key: bad job id")
		}
		return int(j), nil
	}
	// Every value but a machine list entry's is decompressed once, here,
	// within what remains of the archive's budget.
	var raw []byte
	if parts[0] != kindRMach {
		var err error
		if raw, err = im.unpack(v); err != nil {
			return err
		}
	}
	var canon []byte
	write := true
	switch parts[0] {
	case kindRun:
		if im.run != nil {
			return errors.New("a second run")
		}
		if len(parts) != 2 || !validRunID(parts[1]) {
			return errors.New("hostile key: bad run id")
		}
		r := new(Run)
		if err := decodeMsgpack(raw, r); err != nil {
			return err
		}
		if r.ID != parts[1] {
			return fmt.Errorf("run record of %q under key of %s", r.ID, parts[1])
		}
		im.run, im.runID = r, r.ID
		canon = keyRun(r.ID)
	case kindBin:
		if len(parts) != 2 || !isHex(parts[1], 64) {
			return errors.New("hostile key: bad binary hash")
		}
		if im.bin != "" || parts[1] != im.run.Binary {
			return errors.New("a binary that is not the run's")
		}
		if sum := sha256.Sum256(raw); hexHash(sum[:]) != parts[1] {
			return errors.New("binary content does not match its hash")
		}
		im.bin = parts[1]
		canon = keyBin(parts[1])
		write = !im.exists(canon)
	case kindJob:
		j, err := runJob()
		if err != nil {
			return err
		}
		job := new(Job)
		if err := decodeMsgpack(raw, job); err != nil {
			return err
		}
		if job.Run != im.runID || job.ID != j {
			return errors.New("job record does not match its key")
		}
		canon = keyJob(im.runID, j)
	case kindFront, kindState:
		j, err := runJob()
		if err != nil {
			return err
		}
		canon = keyFront(im.runID, j)
		if parts[0] == kindState {
			canon = keyState(im.runID, j)
		}
	case kindBranch:
		j, err := runJob()
		if err != nil {
			return err
		}
		if len(parts) != 4 {
			return errors.New("hostile key")
		}
		n, err := strconv.ParseUint(parts[3], 16, 63)
		if err != nil {
			return errors.New("hostile key: bad branch number")
		}
		brs, err := decodeBranches(raw)
		if err != nil {
			return err
		}
		if len(brs) == 0 || uint64(brs[0].N) != n {
			return errors.New("branch chunk does not match its key")
		}
		canon = keyBranch(im.runID, j, int(n))
	case kindRace:
		j, err := runJob()
		if err != nil {
			return err
		}
		rr, err := decodeRace(raw)
		if err != nil {
			return err
		}
		if rr.Run != im.runID || rr.Job != j {
			return errors.New("race record does not match its key")
		}
		canon = keyRace(im.runID, j, rr.Candidate.A.PC, rr.Candidate.B.PC)
	case kindTrace:
		j, err := runJob()
		if err != nil {
			return err
		}
		t, err := decodeTrace(raw)
		if err != nil {
			return err
		}
		if t.Run != im.runID || t.Job != j || !validJob(t.ID) {
			return errors.New("trace record does not match its key")
		}
		canon = keyTrace(im.runID, j, t.ID)
	case kindBug:
		j, err := runJob()
		if err != nil {
			return err
		}
		b := new(BugRecord)
		if err := decodeMsgpack(raw, b); err != nil {
			return err
		}
		if b.Run != im.runID || b.Job != j || !validJob(b.Trace) {
			return errors.New("bug record does not match its key")
		}
		canon = keyBug(im.runID, j, b.Trace)
	case kindRMach:
		if len(parts) != 3 || parts[1] != im.runID || !validMachine(parts[2]) {
			return errors.New("hostile key: bad machine list entry")
		}
		if len(v) != 1 || v[0] != envRaw {
			return errors.New("malformed machine list entry")
		}
		im.mach[parts[2]] = true
		canon = keyRMach(im.runID, parts[2])
	case kindCkpt:
		if len(parts) != 3 || !validMachine(parts[1]) || !isHex(parts[2], 64) {
			return errors.New("hostile key: bad checkpoint key")
		}
		sc, err := decodeCheckpoint(raw)
		if err != nil {
			return err
		}
		if sc.Machine != parts[1] || hexHash(sc.Prefix[:]) != parts[2] {
			return errors.New("checkpoint does not match its key")
		}
		im.ckMach[sc.Machine] = true
		for _, ref := range sc.Pages {
			if !ref.Zero {
				im.needPg[ref.Hash] = key
			}
		}
		canon = keyCkpt(sc.Machine, sc.Prefix)
		write = !im.exists(canon)
	case kindPage:
		if len(parts) != 2 || !isHex(parts[1], 64) {
			return errors.New("hostile key: bad page hash")
		}
		sum := sha256.Sum256(raw)
		if hexHash(sum[:]) != parts[1] {
			return errors.New("page content does not match its hash")
		}
		im.pages[sum] = true
		canon = keyPage(sum)
		write = !im.exists(canon)
	}
	if !bytes.Equal(canon, k) {
		return errors.New("hostile key: not in the store's canonical form")
	}
	if write {
		return im.b.Set(k, v, nil)
	}
	return nil
}

func (im *importer) exists(k []byte) bool {
	_, err := im.s.get(k)
	return err == nil
}

// finish checks what needs the whole archive.
func (im *importer) finish() error {
	if im.run == nil {
		return archiveErr("the archive holds no run")
	}
	if im.run.Binary != "" && im.bin == "" {
		return archiveErr("the archive lacks the run's binary %s", im.run.Binary)
	}
	for m := range im.ckMach {
		if !im.mach[m] {
			return archiveErr("checkpoint of machine %s, which the run does not list", m)
		}
	}
	for h, ck := range im.needPg {
		if !im.pages[h] && !im.exists(keyPage(h)) {
			return archiveErr("checkpoint %s refers to page %x, in neither the archive nor the store", ck, h[:8])
		}
	}
	return nil
}

// unpack decompresses one value within MaxRecord and what remains of
// the archive's budget (the stream read so far and the values before
// counted).
func (im *importer) unpack(v []byte) ([]byte, error) {
	limit := im.lim.MaxRecord
	budget := im.lim.budget()
	if budget >= 0 {
		left := budget - im.stream.n - im.values
		if left < 0 {
			return nil, bombErr(budget, im.lim)
		}
		// A decoder per limit is kept (store.go): limits are rounded up
		// to a power of two, at least 1 MiB, so that there are few; the
		// sum below catches what the rounding lets through.
		l := int64(1 << 20)
		for l < left {
			l <<= 1
		}
		limit = min(limit, l)
	}
	raw, err := unpack(v, limit)
	if err != nil {
		if limit < im.lim.MaxRecord && strings.Contains(err.Error(), "exceeds") {
			return nil, bombErr(budget, im.lim)
		}
		return nil, err
	}
	im.values += int64(len(raw))
	if budget >= 0 && im.stream.n+im.values > budget {
		return nil, bombErr(budget, im.lim)
	}
	return raw, nil
}

// bombErr refuses an archive that decompresses past its budget.
func bombErr(budget int64, lim ImportLimits) error {
	return archiveErr("it decompresses past %d bytes (at most %d times its %d bytes, plus %d): refused as a decompression bomb",
		budget, lim.MaxExpansion, lim.Size, ExpansionSlack)
}
