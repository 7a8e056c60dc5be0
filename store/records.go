package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"

	"landslide/race"
	"landslide/record"
	"landslide/report"
)

// Status is the state of a run or a job.
type Status string

// Statuses.
const (
	StatusRunning  Status = "running"
	StatusVerified Status = "verified"
	StatusBug      Status = "bug"
	StatusBudget   Status = "budget"
	StatusBounded  Status = "bounded"
	StatusStopped  Status = "stopped"
	StatusError    Status = "error"
	// StatusLimit: an execution went past a limit of the checker (threads,
	// memory, output): no bug, and no verdict on the program.
	StatusLimit Status = "limit"
)

// Env describes the machine and build that made a run.
type Env struct {
	Version   string `msgpack:"version" json:"version"`
	GoVersion string `msgpack:"go" json:"go"`
	OS        string `msgpack:"os" json:"os"`
	Arch      string `msgpack:"arch" json:"arch"`
	Host      string `msgpack:"host" json:"host"`
	CPUs      int    `msgpack:"cpus" json:"cpus"`
}

// Run is one invocation of the checker on one program.
type Run struct {
	// ID is assigned by NewRun: 12 hex digits of sha256(binary hash,
	// creation time, host, pid, sequence number), unique across machines so
	// that archives from many machines import into one store.
	ID      string `msgpack:"id"`
	Created int64  `msgpack:"created"` // unix ns
	Updated int64  `msgpack:"updated"` // unix ns
	// Command is the subcommand ("explore", later "quicksand").
	Command string `msgpack:"command"`
	// Program is the path as the user gave it.
	Program string `msgpack:"program"`
	// Binary is the hex sha256 of the ELF (PutBinary).
	Binary string `msgpack:"binary"`
	// Args is the command line as the user gave it, for the user (one
	// shell-quoted string; runs of before that kept os.Args[1:]).
	Args []string `msgpack:"args"`
	// Spec is the job configuration, encoded by the caller (opaque here).
	Spec    []byte `msgpack:"spec"`
	Env     Env    `msgpack:"env"`
	Status  Status `msgpack:"status"`
	Message string `msgpack:"message"` // one-line result
	// State is the command's own state, encoded by the caller (opaque
	// here): Quicksand's job table. Written with the jobs' commits.
	State []byte `msgpack:"state,omitempty"`
}

// Job is one state space (one PP set) of a run.
type Job struct {
	Run    string   `msgpack:"run"`
	ID     int      `msgpack:"id"`
	PPSet  []string `msgpack:"pps"`
	Status Status   `msgpack:"status"`

	Interleavings int `msgpack:"interleavings"`
	Executed      int `msgpack:"executed"`
	Transitions   int `msgpack:"transitions"`
	Budgeted      int `msgpack:"budgeted"`

	Complete bool `msgpack:"complete"`
	Bounded  bool `msgpack:"bounded"`
	Bound    int  `msgpack:"bound"`

	EstSize       float64 `msgpack:"est_size"`
	EstProportion float64 `msgpack:"est_proportion"`
	EstTotal      int64   `msgpack:"est_total"` // ns
	Elapsed       int64   `msgpack:"elapsed"`   // ns
	// Commits counts the commits that wrote this job; Commit increments it.
	Commits int `msgpack:"commits"`
	// Stack are the stack locations (8-byte granules, sorted) that the
	// job's executions so far saw a thread other than their owner access,
	// so that a resumed job reports the same set at its end.
	Stack []uint64 `msgpack:"stack,omitempty"`
	// Spec is the job's own configuration when it differs from the run's
	// (a Quicksand job's PP set), encoded by the caller; empty otherwise.
	Spec []byte `msgpack:"spec,omitempty"`
	// Semantics is the revision of the machine's transitions
	// (kernel.Semantics) that the last commit was explored under; 0 in
	// jobs stored before revisions were counted.
	Semantics int `msgpack:"semantics,omitempty"`
	// Lineup is the revision of the linearizability check
	// (linearize.Revision) that judged the job's interleavings so far; 0
	// in jobs stored before revisions were counted.
	Lineup int `msgpack:"lineup,omitempty"`
}

// BranchRecord is one explored interleaving, as offline race analysis
// needs it.
type BranchRecord struct {
	N   int // 1-based interleaving number within the job
	Div int // index of the first transition not shared with interleaving N-1
	// Transitions are the transitions from Div on (accesses and sync
	// events included).
	Transitions []*record.Transition
	// Pairs are the conflicting, happens-before-unordered transition pairs
	// (i<j) with j >= Div.
	Pairs [][2]int
}

// RaceRecord is a data-race candidate of a job, with the stacks of its two
// accesses.
type RaceRecord struct {
	Run            string
	Job            int
	Candidate      race.Candidate
	StackA, StackB []report.Frame
	// Data names the racing memory (job.RaceReport.Data); "" when
	// unnamed, and in records stored before names were kept.
	Data string
}

// TraceRecord is a stored execution: its choices and its transitions.
type TraceRecord struct {
	Run  string
	Job  int
	ID   int
	Kind string // "bug", or "minimal" (see Of)
	// Choices replay the execution.
	Choices []record.Choice
	// Hashes holds, per transition, record.Hash of that single transition:
	// a replay checks it is bit-identical.
	Hashes      [][32]byte
	Transitions []*record.Transition
	Preempted   []bool
	// Of, in a trace of Kind "minimal" (landslide minimize), is the ID of
	// the bug trace of the same job it minimizes: the same bug with the
	// fewest preemptions. Explain is what minimize found of its nearest
	// passing interleaving, as text.
	Of      int
	Explain string
}

// TraceMinimal is the Kind of a minimized bug trace.
const TraceMinimal = "minimal"

// BugRecord is a bug found by a job; Trace names its TraceRecord.
type BugRecord struct {
	Run     string         `msgpack:"run"`
	Job     int            `msgpack:"job"`
	Trace   int            `msgpack:"trace"`
	Kind    record.BugKind `msgpack:"kind"`
	Message string         `msgpack:"message"`
	Thread  record.TID     `msgpack:"thread"`
	PC      uint64         `msgpack:"pc"`
	// Signature deduplicates bugs (see Signature).
	Signature string `msgpack:"signature"`
	// Funcs are the function names of the failing stack, innermost first.
	Funcs []string `msgpack:"funcs"`
}

// CheckpointRecord is an emulator state at one PP of a prefix.
type CheckpointRecord struct {
	// Machine identifies (binary, kernel configuration): the caller's hex
	// digest. It must be a non-empty string of letters, digits, '-' and
	// '_' of at most 128 bytes.
	Machine string
	// Prefix is PrefixHash of the choices leading to the state.
	Prefix [32]byte
	Depth  int
	State  []byte // opaque (kernel.Checkpoint.State)
	Pages  []PageRecord
}

// PageRecord is one page of a checkpoint: Data is its content (4096 bytes)
// or nil for a zero page. Pages are stored once per content across the
// whole store.
type PageRecord struct {
	Addr uint64
	Data []byte
}

// PrefixHash is the sha256 of a list of choices: each choice as its
// thread (int32, little-endian) then its value (int64, little-endian).
func PrefixHash(choices []record.Choice) [32]byte {
	h := sha256.New()
	var b [12]byte
	for _, c := range choices {
		putChoice(&b, c)
		h.Write(b[:])
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func putChoice(b *[12]byte, c record.Choice) {
	binary.LittleEndian.PutUint32(b[0:], uint32(c.Thread))
	binary.LittleEndian.PutUint64(b[4:], uint64(c.Value))
}

// prefixHashes returns PrefixHash(choices[:d]) for every d from 0 to
// len(choices), in one pass.
func prefixHashes(choices []record.Choice) [][32]byte {
	h := sha256.New()
	out := make([][32]byte, 0, len(choices)+1)
	var b [12]byte
	var sum [32]byte
	h.Sum(sum[:0])
	out = append(out, sum)
	for _, c := range choices {
		putChoice(&b, c)
		h.Write(b[:])
		h.Sum(sum[:0])
		out = append(out, sum)
	}
	return out
}

// Signature identifies a bug independently of the binary's layout: the
// first 16 hex digits of a sha256 over the bug kind, the failing PC as
// function + offset, and the function names of the failing stack.
func Signature(kind record.BugKind, pcFunc string, pcOff uint64, funcs []string) string {
	h := sha256.New()
	var b [binary.MaxVarintLen64]byte
	str := func(s string) {
		h.Write(b[:binary.PutUvarint(b[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	str("landslide-bug")
	str(kind.String())
	str(pcFunc)
	h.Write(b[:binary.PutUvarint(b[:], pcOff)])
	h.Write(b[:binary.PutUvarint(b[:], uint64(len(funcs)))])
	for _, f := range funcs {
		str(f)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ---- MessagePack codecs of the records (see codec.go) ----

// Minimum encoded sizes (array header + one byte per field of format
// version 1), used to bound decoded counts by the input length.
const (
	minTransition = 1 + 8
	minSync       = 1 + 7
	minBranch     = 1 + 4
	minPair       = 1 + 2
	minChoice     = 1 + 2
	minFrame      = 1 + 6
	minSide       = 1 + 6
	minPageRef    = 1 + 2
)

// fields reads a struct's array header: at least min fields (those of
// format version 1), more are skipped by the caller's default case.
func (d *dec) fields(min int) int {
	n := d.arr(1)
	if d.err == nil && n < min {
		d.fail("record of %d fields, want at least %d", n, min)
		return 0
	}
	return n
}

func encTransition(e *enc, t *record.Transition) {
	n := 8
	if len(t.Own) > 0 {
		n = 9 // a later field: older readers skip it
	}
	e.arr(n)
	e.int(int64(t.Thread))
	e.uint(uint64(t.PP.Kind))
	e.uint(t.PP.PC)
	e.str(t.PP.Func)
	e.arr(len(t.Stack))
	for _, pc := range t.Stack {
		e.uint(pc)
	}
	encAccesses(e, t.Accesses)
	e.arr(len(t.Sync))
	for i := range t.Sync {
		s := &t.Sync[i]
		e.arr(7)
		e.uint(uint64(s.Kind))
		e.int(int64(s.Other))
		e.str(s.Func.String())
		e.uint(s.Arg)
		e.uint(uint64(s.Block))
		e.uint(uint64(s.Gen))
		e.uint(s.PC)
	}
	e.uint(t.Instructions)
	if n > 8 {
		encAccesses(e, t.Own)
	}
}

func decTransition(d *dec) *record.Transition {
	t := new(record.Transition)
	n := d.fields(8)
	for i := 0; i < n && d.err == nil; i++ {
		switch i {
		case 0:
			t.Thread = record.TID(d.i32())
		case 1:
			t.PP.Kind = record.PPKind(d.u8())
		case 2:
			t.PP.PC = d.u64()
		case 3:
			t.PP.Func = d.str()
		case 4:
			if k := d.arr(1); k > 0 {
				t.Stack = make([]uint64, k)
				for j := range t.Stack {
					t.Stack[j] = d.u64()
				}
			}
		case 5:
			t.Accesses = decAccesses(d)
		case 6:
			if k := d.arr(minSync); k > 0 {
				t.Sync = make([]record.SyncEvent, k)
				for j := range t.Sync {
					decSync(d, &t.Sync[j])
				}
			}
		case 7:
			t.Instructions = d.u64()
		case 8:
			t.Own = decAccesses(d)
		default:
			d.skip()
		}
	}
	return t
}

// Accesses are the bulk of a branch record: they are stored as one
// MessagePack bin holding a packed table (doc.go, "access table"): a
// uvarint count, then per access a flags byte, the zigzag deltas of Addr
// and PC from the previous access, and only the fields that changed.
const (
	accSizeMask  = 0x03 // log2(Size) when accSizeOther is clear
	accSizeOther = 0x04 // Size follows as a byte
	accWrite     = 0x08
	accAtomic    = 0x10
	accBlock     = 0x20 // Block and Gen follow (uvarints)
	accSync      = 0x40 // Sync follows (uvarint)
	accOrder     = 0x80 // an order byte follows: bit 0 Acquire, bit 1 Release (the rest zero)
	minAccessLen = 3    // flags + two one-byte deltas
)

// appendUvarint is binary.AppendUvarint with the one- and two-byte cases
// inlined (most deltas).
func appendUvarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	if v < 0x4000 {
		return append(b, byte(v)|0x80, byte(v>>7))
	}
	return binary.AppendUvarint(b, v)
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// maxAccessLen bounds one packed access: flags, two 10-byte deltas, a
// size byte, three 5-byte uvarints, an order byte.
const maxAccessLen = 1 + 10 + 10 + 1 + 5 + 5 + 5 + 1

// putUvarint writes v at b[0:] and returns the length (b must have room).
func putUvarint(b []byte, v uint64) int {
	if v < 0x80 {
		b[0] = byte(v)
		return 1
	}
	if v < 0x4000 {
		_ = b[1]
		b[0], b[1] = byte(v)|0x80, byte(v>>7)
		return 2
	}
	return binary.PutUvarint(b, v)
}

func encAccesses(e *enc, as []record.Access) {
	if len(as) == 0 {
		e.nil()
		return
	}
	e.b = append(e.b, 0xc6, 0, 0, 0, 0)
	start := len(e.b)
	e.b = slices.Grow(e.b, binary.MaxVarintLen64+len(as)*maxAccessLen)
	buf := e.b[start : start+binary.MaxVarintLen64+len(as)*maxAccessLen]
	n := binary.PutUvarint(buf, uint64(len(as)))
	var addr, pc uint64
	var block, gen, sync uint32
	for i := range as {
		a := &as[i]
		var flags byte
		switch a.Size {
		case 1:
		case 2:
			flags = 1
		case 4:
			flags = 2
		case 8:
			flags = 3
		default:
			flags = accSizeOther
		}
		if a.Write {
			flags |= accWrite
		}
		if a.Atomic {
			flags |= accAtomic
		}
		if a.Block != block || a.Gen != gen {
			flags |= accBlock
		}
		if a.Sync != sync {
			flags |= accSync
		}
		if a.Acquire || a.Release {
			flags |= accOrder
		}
		p := buf[n : n+maxAccessLen]
		p[0] = flags
		k := 1
		k += putUvarint(p[k:], zigzag(int64(a.Addr-addr)))
		k += putUvarint(p[k:], zigzag(int64(a.PC-pc)))
		if flags&accSizeOther != 0 {
			p[k] = a.Size
			k++
		}
		if flags&accBlock != 0 {
			k += putUvarint(p[k:], uint64(a.Block))
			k += putUvarint(p[k:], uint64(a.Gen))
		}
		if flags&accSync != 0 {
			k += putUvarint(p[k:], uint64(a.Sync))
		}
		if flags&accOrder != 0 {
			p[k] = byte(b2u(a.Acquire) | b2u(a.Release)<<1)
			k++
		}
		n += k
		addr, pc, block, gen, sync = a.Addr, a.PC, a.Block, a.Gen, a.Sync
	}
	binary.BigEndian.PutUint32(e.b[start-4:], uint32(n))
	e.b = e.b[:start+n]
}

func decAccesses(d *dec) []record.Access {
	b, _ := d.raw()
	if d.err != nil || len(b) == 0 {
		return nil
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k)/minAccessLen {
		d.fail("access table of %d entries in %d bytes", n, len(b))
		return nil
	}
	b = b[k:]
	out := make([]record.Access, n)
	uv := func() uint64 {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			d.fail("truncated access table")
			b = nil
			return 0
		}
		b = b[k:]
		return v
	}
	u32 := func() uint32 {
		v := uv()
		if v > math.MaxUint32 {
			d.fail("access field %d out of range", v)
		}
		return uint32(v)
	}
	var addr, pc uint64
	var block, gen, sync uint32
	for i := range out {
		if len(b) == 0 {
			d.fail("truncated access table")
		}
		if d.err != nil {
			return nil
		}
		flags := b[0]
		b = b[1:]
		a := &out[i]
		addr += uint64(unzigzag(uv()))
		pc += uint64(unzigzag(uv()))
		a.Addr, a.PC = addr, pc
		a.Size = 1 << (flags & accSizeMask)
		if flags&accSizeOther != 0 {
			if len(b) == 0 {
				d.fail("truncated access table")
				return nil
			}
			a.Size, b = b[0], b[1:]
		}
		a.Write = flags&accWrite != 0
		a.Atomic = flags&accAtomic != 0
		if flags&accBlock != 0 {
			block, gen = u32(), u32()
		}
		if flags&accSync != 0 {
			sync = u32()
		}
		a.Block, a.Gen, a.Sync = block, gen, sync
		if flags&accOrder != 0 {
			if len(b) == 0 {
				d.fail("truncated access table")
				return nil
			}
			if b[0]&^3 != 0 {
				d.fail("access order 0x%02x", b[0])
				return nil
			}
			a.Acquire, a.Release, b = b[0]&1 != 0, b[0]&2 != 0, b[1:]
		}
	}
	if d.err == nil && len(b) != 0 {
		d.fail("%d bytes after the access table", len(b))
	}
	if d.err != nil {
		return nil
	}
	return out
}

func decSync(d *dec, s *record.SyncEvent) {
	n := d.fields(7)
	for i := 0; i < n && d.err == nil; i++ {
		switch i {
		case 0:
			s.Kind = record.SyncKind(d.u8())
		case 1:
			s.Other = record.TID(d.i32())
		case 2:
			name := d.str()
			fn, ok := record.SyncFuncNamed(name)
			if !ok {
				d.fail("sync event in unknown function %q", name)
			}
			s.Func = fn
		case 3:
			s.Arg = d.u64()
		case 4:
			s.Block = d.u32()
		case 5:
			s.Gen = d.u32()
		case 6:
			s.PC = d.u64()
		default:
			d.skip()
		}
	}
}

func encTransitions(e *enc, ts []*record.Transition) {
	e.arr(len(ts))
	for _, t := range ts {
		if t == nil {
			t = &record.Transition{}
		}
		encTransition(e, t)
	}
}

func decTransitions(d *dec) []*record.Transition {
	k := d.arr(minTransition)
	if k == 0 {
		return nil
	}
	ts := make([]*record.Transition, k)
	for i := range ts {
		ts[i] = decTransition(d)
	}
	return ts
}

// encBranches encodes a chunk of branch records (one commit's).
func encBranches(e *enc, bs []*BranchRecord) {
	e.arr(len(bs))
	for _, b := range bs {
		encBranch(e, b)
	}
}

func encBranch(e *enc, b *BranchRecord) {
	e.arr(4)
	e.int(int64(b.N))
	e.int(int64(b.Div))
	encTransitions(e, b.Transitions)
	e.arr(len(b.Pairs))
	for _, p := range b.Pairs {
		e.arr(2)
		e.int(int64(p[0]))
		e.int(int64(p[1]))
	}
}

// decodeBranches decodes a chunk of branch records.
func decodeBranches(b []byte) ([]*BranchRecord, error) {
	d := &dec{b: b}
	k := d.arr(minBranch)
	out := make([]*BranchRecord, 0, k)
	for i := 0; i < k && d.err == nil; i++ {
		br := new(BranchRecord)
		n := d.fields(4)
		for f := 0; f < n && d.err == nil; f++ {
			switch f {
			case 0:
				br.N = d.int()
			case 1:
				br.Div = d.int()
			case 2:
				br.Transitions = decTransitions(d)
			case 3:
				if p := d.arr(minPair); p > 0 {
					br.Pairs = make([][2]int, p)
					for j := range br.Pairs {
						pn := d.fields(2)
						for x := 0; x < pn && d.err == nil; x++ {
							if x < 2 {
								br.Pairs[j][x] = d.int()
							} else {
								d.skip()
							}
						}
					}
				}
			default:
				d.skip()
			}
		}
		out = append(out, br)
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return out, nil
}

func encodeTrace(t *TraceRecord) []byte {
	e := &enc{}
	e.arr(10)
	e.str(t.Run)
	e.int(int64(t.Job))
	e.int(int64(t.ID))
	e.str(t.Kind)
	e.arr(len(t.Choices))
	for _, c := range t.Choices {
		e.arr(2)
		e.int(int64(c.Thread))
		e.int(c.Value)
	}
	e.arr(len(t.Hashes))
	for i := range t.Hashes {
		e.bin(t.Hashes[i][:])
	}
	encTransitions(e, t.Transitions)
	e.arr(len(t.Preempted))
	for _, p := range t.Preempted {
		e.bool(p)
	}
	e.int(int64(t.Of))
	e.str(t.Explain)
	return e.b
}

func decodeTrace(b []byte) (*TraceRecord, error) {
	d := &dec{b: b}
	t := new(TraceRecord)
	n := d.fields(8)
	for i := 0; i < n && d.err == nil; i++ {
		switch i {
		case 0:
			t.Run = d.str()
		case 1:
			t.Job = d.int()
		case 2:
			t.ID = d.int()
		case 3:
			t.Kind = d.str()
		case 4:
			if k := d.arr(minChoice); k > 0 {
				t.Choices = make([]record.Choice, k)
				for j := range t.Choices {
					cn := d.fields(2)
					for x := 0; x < cn && d.err == nil; x++ {
						switch x {
						case 0:
							t.Choices[j].Thread = record.TID(d.i32())
						case 1:
							t.Choices[j].Value = d.i64()
						default:
							d.skip()
						}
					}
				}
			}
		case 5:
			if k := d.arr(34); k > 0 {
				t.Hashes = make([][32]byte, k)
				for j := range t.Hashes {
					t.Hashes[j] = d.hash()
				}
			}
		case 6:
			t.Transitions = decTransitions(d)
		case 7:
			if k := d.arr(1); k > 0 {
				t.Preempted = make([]bool, k)
				for j := range t.Preempted {
					t.Preempted[j] = d.bool()
				}
			}
		case 8:
			t.Of = d.int()
		case 9:
			t.Explain = d.str()
		default:
			d.skip()
		}
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return t, nil
}

func encFrames(e *enc, fs []report.Frame) {
	e.arr(len(fs))
	for _, f := range fs {
		e.arr(6)
		e.uint(f.PC)
		e.str(f.Func)
		e.uint(f.Offset)
		e.str(f.File)
		e.int(int64(f.Line))
		e.str(f.Text)
	}
}

func decFrames(d *dec) []report.Frame {
	k := d.arr(minFrame)
	if k == 0 {
		return nil
	}
	fs := make([]report.Frame, k)
	for j := range fs {
		f := &fs[j]
		n := d.fields(6)
		for i := 0; i < n && d.err == nil; i++ {
			switch i {
			case 0:
				f.PC = d.u64()
			case 1:
				f.Func = d.str()
			case 2:
				f.Offset = d.u64()
			case 3:
				f.File = d.str()
			case 4:
				f.Line = d.int()
			case 5:
				f.Text = d.str()
			default:
				d.skip()
			}
		}
	}
	return fs
}

func encSide(e *enc, s *race.Side) {
	e.arr(6)
	e.uint(s.PC)
	e.uint(s.Addr)
	e.int(int64(s.Thread))
	e.bool(s.Write)
	e.bool(s.Atomic)
	e.int(int64(s.Tr))
}

func decSide(d *dec, s *race.Side) {
	n := d.fields(6)
	for i := 0; i < n && d.err == nil; i++ {
		switch i {
		case 0:
			s.PC = d.u64()
		case 1:
			s.Addr = d.u64()
		case 2:
			s.Thread = record.TID(d.i32())
		case 3:
			s.Write = d.bool()
		case 4:
			s.Atomic = d.bool()
		case 5:
			s.Tr = d.int()
		default:
			d.skip()
		}
	}
}

func encodeRace(r *RaceRecord) []byte {
	e := &enc{}
	e.arr(6)
	e.str(r.Run)
	e.int(int64(r.Job))
	c := &r.Candidate
	e.arr(9)
	encSide(e, &c.A)
	encSide(e, &c.B)
	e.bool(c.BothOrder)
	e.bool(c.FirstInterleaving)
	e.bool(c.Realloc)
	e.int(int64(c.Count))
	e.int(int64(c.Branch))
	e.int(int64(c.I))
	e.int(int64(c.J))
	encFrames(e, r.StackA)
	encFrames(e, r.StackB)
	e.str(r.Data)
	return e.b
}

func decodeRace(b []byte) (*RaceRecord, error) {
	d := &dec{b: b}
	r := new(RaceRecord)
	n := d.fields(5)
	for i := 0; i < n && d.err == nil; i++ {
		switch i {
		case 0:
			r.Run = d.str()
		case 1:
			r.Job = d.int()
		case 2:
			c := &r.Candidate
			cn := d.fields(9)
			for j := 0; j < cn && d.err == nil; j++ {
				switch j {
				case 0:
					decSide(d, &c.A)
				case 1:
					decSide(d, &c.B)
				case 2:
					c.BothOrder = d.bool()
				case 3:
					c.FirstInterleaving = d.bool()
				case 4:
					c.Realloc = d.bool()
				case 5:
					c.Count = d.int()
				case 6:
					c.Branch = d.int()
				case 7:
					c.I = d.int()
				case 8:
					c.J = d.int()
				default:
					d.skip()
				}
			}
		case 3:
			r.StackA = decFrames(d)
		case 4:
			r.StackB = decFrames(d)
		case 5:
			r.Data = d.str()
		default:
			d.skip()
		}
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return r, nil
}

// storedCheckpoint is a checkpoint as stored: its pages by content hash.
type storedCheckpoint struct {
	Machine string
	Prefix  [32]byte
	Depth   int
	State   []byte
	Pages   []pageRef
}

type pageRef struct {
	Addr uint64
	Hash [32]byte
	Zero bool
}

func encodeCheckpoint(c *storedCheckpoint) []byte {
	e := &enc{b: make([]byte, 0, 64+len(c.State)+len(c.Pages)*45)}
	e.arr(5)
	e.str(c.Machine)
	e.bin(c.Prefix[:])
	e.int(int64(c.Depth))
	e.bin(c.State)
	e.arr(len(c.Pages))
	for i := range c.Pages {
		p := &c.Pages[i]
		e.arr(2)
		e.uint(p.Addr)
		if p.Zero {
			e.nil()
		} else {
			e.bin(p.Hash[:])
		}
	}
	return e.b
}

func decodeCheckpoint(b []byte) (*storedCheckpoint, error) {
	d := &dec{b: b}
	c := new(storedCheckpoint)
	n := d.fields(5)
	for i := 0; i < n && d.err == nil; i++ {
		switch i {
		case 0:
			c.Machine = d.str()
		case 1:
			c.Prefix = d.hash()
		case 2:
			c.Depth = d.int()
		case 3:
			c.State = d.bin()
		case 4:
			if k := d.arr(minPageRef); k > 0 {
				c.Pages = make([]pageRef, k)
				for j := range c.Pages {
					p := &c.Pages[j]
					pn := d.fields(2)
					for x := 0; x < pn && d.err == nil; x++ {
						switch x {
						case 0:
							p.Addr = d.u64()
						case 1:
							h, isNil := d.raw()
							if isNil {
								p.Zero = true
							} else if d.err == nil {
								if len(h) != 32 {
									d.fail("page hash of %d bytes", len(h))
								}
								copy(p.Hash[:], h)
							}
						default:
							d.skip()
						}
					}
				}
			}
		default:
			d.skip()
		}
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	if !validMachine(c.Machine) {
		return nil, fmt.Errorf("%w: invalid machine id %q", errCodec, c.Machine)
	}
	return c, nil
}

// validJob reports whether id fits the key schema (0 <= id < 2^32).
func validJob(id int) bool { return id >= 0 && uint64(id) <= math.MaxUint32 }

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}
