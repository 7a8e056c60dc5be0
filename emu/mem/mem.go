// Package mem is the guest's memory: a sparse 39-bit address space of 4 KiB
// pages with per-page permissions and copy-on-write snapshots.
//
// Layout. A virtual page number (27 bits) indexes a radix tree: an 8-entry
// root, three levels of 64-entry inner nodes and 64-entry leaves holding
// page pointers and permissions. Unmapped regions cost nothing.
//
// Snapshots. Every node and page carries the epoch that owns it. The Memory
// may modify in place only what its current epoch owns; anything older is
// shared with at least one snapshot and is cloned on first write (the path
// from the root down is cloned with it). Snapshot therefore records the root
// and starts a new epoch: O(1). Restore installs a recorded root and starts a
// new epoch, so neither the snapshot nor later writes can see each other:
// also O(1). The cost of a snapshot is paid lazily, one page per page written.
//
// Invariants:
//
//	M1. A node or page whose epoch equals m.epoch is reachable only from
//	    m.root (never from a Snapshot), so it may be written in place.
//	M2. Epochs are never reused: epochs come from a process-wide counter.
//	M3. Gen changes whenever a cached page pointer may have become stale
//	    (snapshot, restore, map, unmap, protect, and a page allocated or
//	    cloned by WritePage); caches compare it.
//	M4. At Restore, what the current epoch allocated is garbage: by M1
//	    only the old root reached it, and Restore replaces the root. So
//	    Restore recycles it, unless a Snapshot was taken in the epoch
//	    (then the snapshot holds the list). Optimal DPOR's re-runs and
//	    every leaf of a search write pages after the last snapshot:
//	    without recycling, copying them was a fifth of what an
//	    exploration allocated.
//	M5. What an epoch allocated is reachable only from the snapshot that
//	    ended it and from the states and snapshots made from that one
//	    (M1). Release(s) declares that none of those will be used again
//	    (a search pops a node and every node below it, after restoring
//	    an ancestor): the snapshot's list is then garbage and is
//	    recycled too. Tests set PoisonReleased to make any later use of
//	    it fail loudly.
//
// Host accesses (ReadBytes, WriteBytes, Read64, ...) ignore permissions: they
// are for the loader and the kernel. Guest accesses go through the CPU, which
// checks permissions and watch bits via Translate.
package mem

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Page geometry and the guest address limit.
const (
	PageShift = 12
	PageSize  = 1 << PageShift
	PageMask  = PageSize - 1
	AddrBits  = 39
	Limit     = 1 << AddrBits

	// The radix tree: a root of 2^rootBits entries, innerLevels levels of
	// inner nodes and a level of leaves, each of fanout entries. Small
	// nodes keep copy-on-write cheap: the first write after a snapshot
	// copies one node per level on the path to the page.
	levelBits   = 6
	fanout      = 1 << levelBits
	innerLevels = 3
	rootBits    = AddrBits - PageShift - levelBits*(innerLevels+1)
)

// Perm is a page's permission set.
type Perm uint8

// Permission bits. PermWatch marks pages whose guest accesses must be seen
// by the Watcher (the kernel's heap checker) rather than served from a cache.
const (
	PermR Perm = 1 << iota
	PermW
	PermX
	PermWatch

	permMapped Perm = 1 << 7
)

func (p Perm) String() string {
	b := []byte("---")
	if p&PermR != 0 {
		b[0] = 'r'
	}
	if p&PermW != 0 {
		b[1] = 'w'
	}
	if p&PermX != 0 {
		b[2] = 'x'
	}
	return string(b)
}

// Page is one page of guest memory.
type Page struct {
	Data  [PageSize]byte
	epoch uint64
	// pinned: a cache outside the Memory keys on this page's address
	// (Pin), so it is never recycled (M4, M5) as another page.
	pinned bool
}

// Pin keeps p from being recycled as another page: for caches keyed by a
// page's address, such as the CPU's decoded code pages.
func (p *Page) Pin() {
	if p != &zeroPage && !p.pinned {
		p.pinned = true
	}
}

type leaf struct {
	pages [fanout]*Page
	perms [fanout]Perm
	epoch uint64
}

// inner is an interior node; at the last inner level kids point to leaves.
type inner struct {
	kids  [fanout]unsafe.Pointer // *inner or *leaf
	epoch uint64
}

type root struct {
	kids   [1 << rootBits]*inner
	epoch  uint64
	mapped int // number of mapped pages
}

var epochCounter atomic.Uint64

func newEpoch() uint64 { return epochCounter.Add(1) }

// Memory is a guest address space. It is not safe for concurrent use.
type Memory struct {
	root  *root
	epoch uint64
	// Gen changes whenever cached translations may be stale (M3).
	Gen uint64
	// fresh are the pages, leaves and inner nodes the current epoch
	// allocated; Restore recycles them (M4) into the free lists, from
	// which the next copies are made instead of new allocations.
	fresh objects
	free  objects
	// spare are empty lists (their arrays) Release gave back, for the
	// next epochs' fresh lists.
	spare []objects
}

// objects are pages and nodes of one epoch, or free ones.
type objects struct {
	pages  []*Page
	leaves []*leaf
	inners []*inner
}

// maxFree bounds each free list (pages: 16 MiB).
const maxFree = 4096

// Snapshot is an immutable image of a Memory at one moment.
type Snapshot struct {
	root *root
	// by is the Memory that took it; own is what the epoch it ended
	// allocated (M5), until Release.
	by  *Memory
	own objects
}

// PoisonReleased makes Release overwrite what it recycles (page bytes
// with 0xA5, node pointers with nil) before reusing it, so that a state
// still reaching it misbehaves at once: for tests, which set it.
var PoisonReleased = false

// Pages returns the number of mapped pages in the snapshot.
func (s *Snapshot) Pages() int { return s.root.mapped }

// New returns an empty address space.
func New() *Memory {
	e := newEpoch()
	return &Memory{root: &root{epoch: e}, epoch: e, Gen: 1}
}

// Snapshot captures the current contents in O(1).
func (m *Memory) Snapshot() *Snapshot {
	s := &Snapshot{root: m.root, by: m, own: m.fresh}
	m.epoch = newEpoch()
	m.Gen++
	// The snapshot holds the epoch's objects now (M5); the next epoch's
	// lists start in spare buffers a Release gave back, if any.
	m.fresh = objects{}
	if n := len(m.spare); n > 0 {
		m.fresh, m.spare = m.spare[n-1], m.spare[:n-1]
	}
	return s
}

// Restore makes the memory equal to the snapshot in O(1). The snapshot stays
// valid and may be restored again, until Release.
func (m *Memory) Restore(s *Snapshot) {
	if s.root == nil {
		panic("mem: Restore of a released snapshot")
	}
	m.recycleFresh() // M4
	m.root = s.root
	m.epoch = newEpoch()
	m.Gen++
}

// Release declares that s, every snapshot taken of a state made from s,
// and every state made from it (the live one included) will never be
// read again: a search popping a node and the nodes below it, after it
// restored an ancestor. What the epoch s ended allocated is then garbage
// (M5) and is recycled. A snapshot another Memory took is left alone.
// s may not be restored afterwards.
func (m *Memory) Release(s *Snapshot) {
	if s.by != m || s.root == nil {
		return
	}
	s.root = nil
	o := &s.own
	for _, p := range o.pages {
		if p.pinned {
			continue
		}
		if PoisonReleased {
			for i := range p.Data {
				p.Data[i] = 0xA5
			}
		}
		if len(m.free.pages) < maxFree {
			m.free.pages = append(m.free.pages, p)
		}
	}
	for _, lf := range o.leaves {
		if PoisonReleased {
			*lf = leaf{}
		}
		if len(m.free.leaves) < maxFree {
			m.free.leaves = append(m.free.leaves, lf)
		}
	}
	for _, n := range o.inners {
		if PoisonReleased {
			*n = inner{}
		}
		if len(m.free.inners) < maxFree {
			m.free.inners = append(m.free.inners, n)
		}
	}
	clear(o.pages)
	clear(o.leaves)
	clear(o.inners)
	if len(m.spare) < maxSpare {
		m.spare = append(m.spare, objects{pages: o.pages[:0], leaves: o.leaves[:0], inners: o.inners[:0]})
	}
	s.own = objects{}
}

// maxSpare bounds the spare lists Release gives back.
const maxSpare = 64

func (m *Memory) forgetFresh() {
	clear(m.fresh.pages)
	clear(m.fresh.leaves)
	clear(m.fresh.inners)
	m.fresh = objects{pages: m.fresh.pages[:0], leaves: m.fresh.leaves[:0], inners: m.fresh.inners[:0]}
}

// recycleFresh moves what the current epoch allocated to the free lists
// (M4); O(what the epoch wrote), which Restore's callers paid to write.
func (m *Memory) recycleFresh() {
	put := func(free, fresh int) int { return min(fresh, maxFree-free) }
	for _, p := range m.fresh.pages {
		if len(m.free.pages) < maxFree && !p.pinned {
			m.free.pages = append(m.free.pages, p)
		}
	}
	n := put(len(m.free.leaves), len(m.fresh.leaves))
	m.free.leaves = append(m.free.leaves, m.fresh.leaves[:n]...)
	n = put(len(m.free.inners), len(m.fresh.inners))
	m.free.inners = append(m.free.inners, m.fresh.inners[:n]...)
	m.forgetFresh()
}

// newPage is a page owned by the current epoch holding a copy of from
// (nil: zeroes), recycled when the free list has one.
func (m *Memory) newPage(from *Page) *Page {
	var p *Page
	if n := len(m.free.pages); n > 0 {
		p, m.free.pages = m.free.pages[n-1], m.free.pages[:n-1]
		if from != nil {
			p.Data = from.Data
		} else {
			p.Data = [PageSize]byte{}
		}
	} else {
		p = new(Page)
		if from != nil {
			p.Data = from.Data
		}
	}
	p.epoch = m.epoch
	m.fresh.pages = append(m.fresh.pages, p)
	return p
}

// MappedPages is the number of mapped pages.
func (m *Memory) MappedPages() int { return m.root.mapped }

// index returns the child index of vpn at inner level l (0 is the level
// below the root) and at the leaf.
func index(vpn uint64, l int) uint64 {
	return vpn >> (levelBits * (innerLevels - l)) & (fanout - 1)
}

// lookup returns the leaf and index for vpn without modifying anything.
func (m *Memory) lookup(vpn uint64) (*leaf, uint64) {
	n := m.root.kids[vpn>>(levelBits*(innerLevels+1))]
	if n == nil {
		return nil, 0
	}
	for l := 0; l < innerLevels-1; l++ {
		n = (*inner)(n.kids[index(vpn, l)])
		if n == nil {
			return nil, 0
		}
	}
	lf := (*leaf)(n.kids[index(vpn, innerLevels-1)])
	if lf == nil {
		return nil, 0
	}
	return lf, vpn & (fanout - 1)
}

// mutableLeaf returns the leaf for vpn owned by the current epoch, cloning
// or creating the path as needed (M1).
func (m *Memory) mutableLeaf(vpn uint64) (*leaf, uint64) {
	if m.root.epoch != m.epoch {
		r := *m.root
		r.epoch = m.epoch
		m.root = &r
	}
	slot := &m.root.kids[vpn>>(levelBits*(innerLevels+1))]
	n := m.ownInner(*slot)
	*slot = n
	for l := 0; l < innerLevels-1; l++ {
		p := &n.kids[index(vpn, l)]
		n = m.ownInner((*inner)(*p))
		*p = unsafe.Pointer(n)
	}
	p := &n.kids[index(vpn, innerLevels-1)]
	lf := m.ownLeaf((*leaf)(*p))
	*p = unsafe.Pointer(lf)
	return lf, vpn & (fanout - 1)
}

// ownInner returns n if the current epoch owns it, else a new node (n nil)
// or a copy of n owned by the current epoch. The caller stores the result
// in n's parent.
func (m *Memory) ownInner(n *inner) *inner {
	if n != nil && n.epoch == m.epoch {
		return n
	}
	var c *inner
	if k := len(m.free.inners); k > 0 {
		c, m.free.inners = m.free.inners[k-1], m.free.inners[:k-1]
	} else {
		c = new(inner)
	}
	if n != nil {
		*c = *n
	} else {
		*c = inner{}
	}
	c.epoch = m.epoch
	m.fresh.inners = append(m.fresh.inners, c)
	return c
}

// ownLeaf is ownInner for leaves.
func (m *Memory) ownLeaf(lf *leaf) *leaf {
	if lf != nil && lf.epoch == m.epoch {
		return lf
	}
	var c *leaf
	if k := len(m.free.leaves); k > 0 {
		c, m.free.leaves = m.free.leaves[k-1], m.free.leaves[:k-1]
	} else {
		c = new(leaf)
	}
	if lf != nil {
		*c = *lf
	} else {
		*c = leaf{}
	}
	c.epoch = m.epoch
	m.fresh.leaves = append(m.fresh.leaves, c)
	return c
}

// Fault describes a failed guest access.
type Fault struct {
	Addr  uint64
	Write bool
	Exec  bool
	// Mapped is true when the page exists but lacks the permission.
	Mapped bool
	Perm   Perm
}

func (f *Fault) Error() string {
	what := "read"
	if f.Write {
		what = "write"
	} else if f.Exec {
		what = "execute"
	}
	if f.Mapped {
		return fmt.Sprintf("%s of 0x%x: page is %s", what, f.Addr, f.Perm&(PermR|PermW|PermX))
	}
	return fmt.Sprintf("%s of 0x%x: address not mapped", what, f.Addr)
}

func checkRange(addr, length uint64) error {
	if addr&PageMask != 0 {
		return fmt.Errorf("address 0x%x is not page aligned", addr)
	}
	if length == 0 || addr >= Limit || length > Limit-addr {
		return fmt.Errorf("range 0x%x+0x%x is outside the guest address space", addr, length)
	}
	return nil
}

func pagesIn(addr, length uint64) (first, n uint64) {
	first = addr >> PageShift
	last := (addr + length - 1) >> PageShift
	return first, last - first + 1
}

// Map maps [addr, addr+length) with zeroed pages; length is rounded up to
// whole pages. It fails, changing nothing, if any page is already mapped.
func (m *Memory) Map(addr, length uint64, perm Perm) error {
	if err := checkRange(addr, length); err != nil {
		return err
	}
	first, n := pagesIn(addr, length)
	for v := first; v < first+n; v++ {
		if lf, k := m.lookup(v); lf != nil && lf.perms[k]&permMapped != 0 {
			return fmt.Errorf("page 0x%x is already mapped", v<<PageShift)
		}
	}
	for v := first; v < first+n; v++ {
		lf, k := m.mutableLeaf(v)
		lf.pages[k] = nil // allocated on first write
		lf.perms[k] = perm | permMapped
	}
	m.root.mapped += int(n)
	m.Gen++
	return nil
}

// Unmap removes every mapped page in [addr, addr+length).
func (m *Memory) Unmap(addr, length uint64) error {
	if err := checkRange(addr, length); err != nil {
		return err
	}
	first, n := pagesIn(addr, length)
	for v := first; v < first+n; v++ {
		if lf, k := m.lookup(v); lf == nil || lf.perms[k]&permMapped == 0 {
			continue
		}
		lf, k := m.mutableLeaf(v)
		lf.pages[k] = nil
		lf.perms[k] = 0
		m.root.mapped--
	}
	m.Gen++
	return nil
}

// Protect sets the permission of every mapped page in [addr, addr+length).
func (m *Memory) Protect(addr, length uint64, perm Perm) error {
	if err := checkRange(addr, length); err != nil {
		return err
	}
	first, n := pagesIn(addr, length)
	for v := first; v < first+n; v++ {
		if lf, k := m.lookup(v); lf == nil || lf.perms[k]&permMapped == 0 {
			return fmt.Errorf("page 0x%x is not mapped", v<<PageShift)
		}
	}
	for v := first; v < first+n; v++ {
		lf, k := m.mutableLeaf(v)
		lf.perms[k] = perm | permMapped
	}
	m.Gen++
	return nil
}

// PermAt reports the permission of the page holding addr.
func (m *Memory) PermAt(addr uint64) (Perm, bool) {
	if addr >= Limit {
		return 0, false
	}
	lf, k := m.lookup(addr >> PageShift)
	if lf == nil || lf.perms[k]&permMapped == 0 {
		return 0, false
	}
	return lf.perms[k] &^ permMapped, true
}

// AnyMapped reports whether any page of [addr, addr+length) is mapped.
func (m *Memory) AnyMapped(addr, length uint64) bool {
	if length == 0 {
		return false
	}
	first, n := pagesIn(addr, length)
	for v := first; v < first+n && v < Limit>>PageShift; v++ {
		if lf, k := m.lookup(v); lf != nil && lf.perms[k]&permMapped != 0 {
			return true
		}
	}
	return false
}

var zeroPage Page

// ReadPage returns the page holding addr for reading, and its permission.
// The returned page must not be modified. A mapped page never written reads
// as the shared zero page.
func (m *Memory) ReadPage(addr uint64) (*Page, Perm, bool) {
	if addr >= Limit {
		return nil, 0, false
	}
	lf, k := m.lookup(addr >> PageShift)
	if lf == nil || lf.perms[k]&permMapped == 0 {
		return nil, 0, false
	}
	p := lf.pages[k]
	if p == nil {
		p = &zeroPage
	}
	return p, lf.perms[k] &^ permMapped, true
}

// WritePage returns the page holding addr, owned by the current epoch and
// so safe to modify, and its permission. Permissions are not checked.
func (m *Memory) WritePage(addr uint64) (*Page, Perm, bool) {
	if addr >= Limit {
		return nil, 0, false
	}
	vpn := addr >> PageShift
	lf, k := m.lookup(vpn)
	if lf == nil || lf.perms[k]&permMapped == 0 {
		return nil, 0, false
	}
	if p := lf.pages[k]; lf.epoch == m.epoch && p != nil && p.epoch == m.epoch {
		return p, lf.perms[k] &^ permMapped, true
	}
	lf, k = m.mutableLeaf(vpn)
	m.Gen++ // a page object changes: cached pointers to the old one are stale
	p := lf.pages[k]
	switch {
	case p == nil:
		p = m.newPage(nil)
		lf.pages[k] = p
	case p.epoch != m.epoch:
		c := m.newPage(p)
		lf.pages[k] = c
		p = c
	}
	return p, lf.perms[k] &^ permMapped, true
}

// ReadBytes copies guest memory into b, ignoring permissions.
func (m *Memory) ReadBytes(addr uint64, b []byte) error {
	for len(b) > 0 {
		p, _, ok := m.ReadPage(addr)
		if !ok {
			return &Fault{Addr: addr}
		}
		n := copy(b, p.Data[addr&PageMask:])
		b = b[n:]
		addr += uint64(n)
	}
	return nil
}

// ReadBytes copies the snapshot's memory into b, ignoring permissions.
func (s *Snapshot) ReadBytes(addr uint64, b []byte) error {
	return (&Memory{root: s.root}).ReadBytes(addr, b)
}

// WriteBytes copies b into guest memory, ignoring permissions.
func (m *Memory) WriteBytes(addr uint64, b []byte) error {
	// Check first so that a failing write changes nothing.
	for a, left := addr, uint64(len(b)); left > 0; {
		if _, ok := m.PermAt(a); !ok {
			return &Fault{Addr: a, Write: true}
		}
		step := PageSize - a&PageMask
		if step > left {
			step = left
		}
		a += step
		left -= step
	}
	for len(b) > 0 {
		p, _, _ := m.WritePage(addr)
		n := copy(p.Data[addr&PageMask:], b)
		b = b[n:]
		addr += uint64(n)
	}
	return nil
}

// Zero clears n bytes of guest memory from addr, ignoring permissions,
// as WriteBytes of n zeroes would (a kernel scrubbing reused memory), but
// a whole page goes back to the shared zero page instead of being copied
// and cleared, and nothing is allocated.
func (m *Memory) Zero(addr, n uint64) error {
	if addr >= Limit || n > Limit-addr {
		return &Fault{Addr: addr, Write: true}
	}
	for a, left := addr, n; left > 0; {
		if _, ok := m.PermAt(a); !ok {
			return &Fault{Addr: a, Write: true}
		}
		step := min(PageSize-a&PageMask, left)
		a += step
		left -= step
	}
	for n > 0 {
		off := addr & PageMask
		step := min(PageSize-off, n)
		if step == PageSize {
			vpn := addr >> PageShift
			if lf, k := m.lookup(vpn); lf.pages[k] != nil {
				lf, k = m.mutableLeaf(vpn)
				lf.pages[k] = nil
				m.Gen++ // a page object changes: cached pointers to the old one are stale
			}
		} else {
			p, _, _ := m.WritePage(addr)
			clear(p.Data[off : off+step])
		}
		addr += step
		n -= step
	}
	return nil
}

// Read64 reads a little-endian uint64, ignoring permissions.
func (m *Memory) Read64(addr uint64) (uint64, bool) {
	var b [8]byte
	if m.ReadBytes(addr, b[:]) != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[:]), true
}

// Read32 reads a little-endian uint32, ignoring permissions.
func (m *Memory) Read32(addr uint64) (uint32, bool) {
	var b [4]byte
	if m.ReadBytes(addr, b[:]) != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b[:]), true
}

// Write64 writes a little-endian uint64, ignoring permissions.
func (m *Memory) Write64(addr, v uint64) bool {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return m.WriteBytes(addr, b[:]) == nil
}

// Write32 writes a little-endian uint32, ignoring permissions.
func (m *Memory) Write32(addr uint64, v uint32) bool {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	return m.WriteBytes(addr, b[:]) == nil
}

// ReadString reads a NUL-terminated string of at most max bytes.
func (m *Memory) ReadString(addr uint64, max int) (string, bool) {
	var out []byte
	for len(out) < max {
		p, _, ok := m.ReadPage(addr)
		if !ok {
			return string(out), false
		}
		for _, c := range p.Data[addr&PageMask:] {
			if c == 0 {
				return string(out), true
			}
			out = append(out, c)
			addr++
			if len(out) == max {
				break
			}
		}
	}
	return string(out), true
}
