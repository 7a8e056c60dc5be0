// Package store keeps explorations on disk: one embedded Pebble database
// per workspace (default ./.landslide/) holding runs, jobs, DPOR frontiers,
// analyzer states, the explored branches with their access logs, race
// candidates, bug traces, bugs and emulator checkpoints, so that an
// exploration resumes after a restart, races are reanalysed offline, and
// bug traces are archived and exchanged (Export, Import).
//
// # Guarantees
//
//   - Every write is one pebble.Batch committed with pebble.Sync: a commit
//     is on disk entirely or not at all, and a kill -9 at any moment loses
//     at most the commit in flight. A failed commit (disk full, read-only
//     file system) returns an error, is found after reopening entirely or
//     not at all (never in part, never damaging earlier commits), and
//     leaves the store unusable until it is reopened (Pebble's commit pipeline cannot go on
//     after a failed WAL write).
//
//   - One writer per workspace: Open takes flock(2) on <dir>/landslide.lock
//     (LOCK_EX, non-blocking) and writes its pid there; a second writer gets
//     ErrLocked, "workspace DIR is in use by another landslide process (pid
//     N)". Read-only opens (ls, show, bugs, races, replay) take LOCK_SH, so
//     any number of readers share a store, but a reader cannot open a store
//     while a writer holds it: it gets the same ErrLocked message (a
//     writer's live status file says what it does meanwhile, below).
//     flock locks belong to the open file, so this holds within one process
//     too, and the kernel drops them when a process dies.
//
//   - The key schema below has a version, FormatVersion, in meta/version. A
//     store of another version, a Pebble database without one, or a
//     directory holding other files is refused with ErrVersion or
//     ErrNotFound, naming the version found and the one supported.
//
//   - Nothing read from disk or from an archive can crash the reader or
//     make it allocate without bound: every decoder checks counts against
//     the bytes that remain, and every decompression has a limit.
//
//   - Damage is an error, never a panic or a silent change. Pebble's
//     reports of corruption go to the store's EventListener (not to its
//     default, a fatal log); a read of a damaged block, a record that
//     does not decode, or a store Pebble cannot open returns a
//     *CorruptError (errors.Is ErrCorrupt) naming the damaged file and
//     the record or key range. Reads of other records go on working.
//     Verify reads and checks everything and lists the intact and the
//     damaged runs. A directory holding tables, a manifest or a commit
//     counter but no manifest marker is damage: it is never taken for a
//     new store.
//
//   - What a damaged write-ahead log can take is bounded and never
//     silent: Pebble replays a log only up to its first damaged record,
//     so a job's last commit, every import, and any commit FlushInterval
//     after the last flush are flushed into table files (checksummed
//     blocks); and the commit counter (below) finds the commits lost
//     since the last flush. A log lost from the middle (moved aside so
//     that the store opens), its later logs intact, leaves the newest
//     job records and the counter in agreement; what it took shows as a
//     gap in a job's branch chunks, which number its interleavings 1 to
//     Job.Executed without a gap: Verify reports a gap or a shortfall,
//     and offline race analysis stops at it with an error. The commit
//     sequence (below) finds such a loss when the store is opened.
//
// # The commit counter
//
// landslide.commits (CounterFile), beside Pebble's files, holds for every
// job the number of commits made (Job.Commits after its last successful
// commit; job 0: the run was created), as text lines "<run> <job> <n>"
// after the header "landslide commit counter 1", then "crc32c <hex>" of
// everything before. It is rewritten after each commit (write a .tmp,
// sync, rename, sync the directory), so it is never ahead of a commit that
// Pebble did not make durable; a crash between the two leaves it behind,
// which is not damage. Open compares it with the job records: a job whose
// stored Commits is lower (or missing) lost commits with the log (Lost);
// the CLI says so on every command and refuses to read that run's results
// until resume redoes the lost work (its next commit lowers the counter to
// the store's value). A counter that does not verify is reported
// (CounterDamaged) and, by a writer, rebuilt from the job records.
//
// # The commit sequence
//
// Every commit (Commit, NewRun, PutBinary, Import) also writes
// seq/<n>, n counting the store's commits from 1, its value the envelope
// byte then the ID of the run it writes (empty for a binary). Commits are
// made one at a time, so the numbers reach the log in order. After a
// flush (Flush: a job's last commit, every import, FlushInterval), the
// next commit also deletes the keys up to, not including, the last
// commit the flush made durable (a flush adds nothing to the log, so a
// store closed after one has nothing to replay). The keys left are the
// commits since the last flush and a few before, without a gap; Open
// reads them (few) and
// reports each gap (Gaps, SeqGap): commits lost with a write-ahead log
// while a later log was replayed, with the runs of the commits either
// side. A writer's Open records a new gap in meta/gaps (a msgpack list of
// SeqGap), flushed, so that it is still reported after the keys around it
// are deleted. Stores written before the sequence have no keys: nothing
// is reported until their next commits.
//
// # Watching a running store
//
// A writer publishes what it does in LiveFile (landslide.status) in the
// store's directory, JSON (Live: pid, command, start, update time, and
// per run its progress), written to a .tmp file and renamed over it at
// most every LiveEvery (UpdateLive), removed by Close and by the next
// writer's Open. It is advisory: a reader that gets ErrLocked reads it
// (ReadLive), and believes it only if its pid is the live process named
// in the lock file; a reader that opens the store knows that no process
// is writing it, so a run still marked running lost its process.
//
// # Format version 1: keys
//
// Keys are '/'-separated ASCII. <run> is a run ID (12 lowercase hex
// digits), <job> and trace numbers are 8 lowercase hex digits, <n> and
// PCs 16, hashes 64 (sha256). <machine> is a caller-chosen id of letters,
// digits, '-' and '_' (at most 128 bytes).
//
//	meta/version                       "1" (ASCII decimal, no envelope)
//	meta/gaps                          commits found lost from the middle
//	                                   (msgpack list; see "The commit sequence")
//	seq/<n>                            the run a commit wrote (see "The
//	                                   commit sequence"), n 16 hex digits
//	bin/<sha256 of the ELF>            program image (zstd)
//	run/<run>                          Run (msgpack map)
//	job/<run>/<job>                    Job (msgpack map)
//	front/<run>/<job>                  DPOR frontier, opaque (zstd)
//	state/<run>/<job>                  analyzer state, opaque (zstd)
//	br/<run>/<job>/<n>                 one commit's BranchRecords, the first
//	                                   numbered n (zstd; see "branch chunks")
//	race/<run>/<job>/<pc A>/<pc B>     RaceRecord (zstd if large)
//	trace/<run>/<job>/<id>             TraceRecord (zstd)
//	bug/<run>/<job>/<trace>            BugRecord (msgpack map)
//	rmach/<run>/<machine>              empty: the run committed checkpoints
//	                                   of this machine (Export uses it)
//	ckpt/<machine>/<prefix hash>       checkpoint: machine, prefix, depth,
//	                                   state and (address, page hash) pairs
//	                                   (zstd)
//	page/<sha256 of the page>          page content (zstd), stored once per
//	                                   content across the whole store
//
// The first component is the key's kind; Usage reports space by kind.
//
// # Values
//
// Every value but meta/version starts with an envelope byte: 0 = the
// encoding follows as is, 1 = a zstd frame of it follows (used for the
// kinds marked zstd above when that is smaller; small records are not
// compressed, since per-value zstd costs more than it saves on them).
//
// Runs, jobs and bugs are MessagePack maps with the field names of their
// msgpack tags (github.com/vmihailenco/msgpack/v5): few, small, and
// readable by any tool. Branch chunks, traces, races and checkpoints are
// MessagePack arrays, a struct being the array of its fields in
// declaration order (codec.go writes and reads them without reflection,
// with bounded allocation); a reader accepts more fields than it knows
// (skipped) but not fewer than version 1 had.
//
// Transitions are [Thread, PP.Kind, PP.PC, PP.Func, Stack, Accesses, Sync,
// Instructions] with Accesses as an "access table": one MessagePack bin
// holding a uvarint count, then per access a flags byte (bits 0-1 log2 of
// Size; bit 2 Size follows as a byte instead; bit 3 Write; bit 4 Atomic;
// bit 5 Block and Gen follow as uvarints; bit 6 Sync follows as a uvarint;
// bit 7 an order byte follows), the zigzag uvarint deltas of Addr and of
// PC from the previous access (from 0 for the first), then the fields the
// flags announce, the order byte last (bit 0 Acquire, bit 1 Release, the
// rest zero; stores written before it existed never set bit 7); Block,
// Gen and Sync not announced equal the previous access's (0 for the
// first). Accesses are the bulk of the data, and this packing
// halves them before compression.
//
// # Branch chunks
//
// A commit stores all its BranchRecords under one key, keyed by the first
// N and compressed together (zstd's fastest level): per-interleaving
// overhead stays small, and similar transitions compress against each
// other. Branches streams them back in N order, one chunk in memory at a
// time. BenchmarkCommitBranches measures the cost per branch.
//
// # Checkpoints
//
// A checkpoint is an emulator state at the end of a prefix (the choices
// leading to it, identified by PrefixHash) for one machine (binary and
// kernel configuration, identified by the caller). Its pages are stored by
// content hash, so checkpoints that share pages, within a run or across
// runs, store each page once; a nil page is a zero page and is not stored.
//
// # Archives
//
// An archive (Export, Import) is one file carrying one run: the magic
// "LANDSLIDE-ARCHIVE\n", the archive format version (uint32 big-endian,
// ArchiveVersion, equal to FormatVersion since records travel as stored),
// then length-prefixed chunks (uint32 big-endian, ending with a zero
// length) that together form one zstd stream of records (kind byte, uvarint
// key length, key, uvarint value length, value: the store's own keys and
// values), then a trailer: the record count (uint64 big-endian) and the
// sha256 of every byte before the trailer.
//
// It holds the run, its binary, jobs, frontiers, analyzer states, branch
// chunks, races, traces, bugs, machine list, and the checkpoints of the
// run's machines at every prefix of its traces, with their pages: what a
// replay of any stored trace needs, from its nearest checkpoint.
// Checkpoints of other prefixes are not exported.
//
// Import checks everything before writing anything: the magic, the
// version ("archive format version N, this landslide reads M"), sizes
// (ImportLimits: the decompressed archive, each record, each value's
// decompressed size, and everything decompressed at MaxExpansion times the
// archive's size plus ExpansionSlack; a decompression bomb stops at the
// limit), that every
// key is exactly one the store would write for the archived run (another
// run's key, '..', an absolute or path-like component, an unknown kind
// are hostile and rejected), that every record decodes and matches its
// key, that binaries and pages match their hashes, that checkpoints
// belong to the run's machines and their pages are present, and the
// checksum and count. Then one synced batch writes it all. Importing a run
// already in the store writes nothing and returns its ID with an error
// wrapping ErrExists. Checkpoints and pages already in the store are kept
// (they are deterministic functions of their keys).
package store
