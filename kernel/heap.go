package kernel

import (
	"fmt"
	"sort"

	"landslide/emu/mem"
	"landslide/record"
)

// The heap. malloc and friends are kernel intrinsics so that every block is
// known exactly. The arena [HeapBase, HeapLimit) is carved into slots by a
// bump pointer; a slot is [redzone | user bytes rounded to 16 | redzone].
// A freed slot waits in a FIFO quarantine before it can be reused, and only
// by a request of the same rounded size, so a slot's user address is fixed
// and the generation of a block is the number of blocks that slot has held.
//
// Every arena page is mem.PermWatch: the CPU asks Check before each guest
// access there, and Check stops accesses outside a live block: use after
// free, overflow into a redzone, or memory never allocated.

const (
	redzone        = 16
	heapAlign      = 16
	quarantineMax  = 64
	quarantineSize = 1 << 20
)

type block struct {
	id, gen     uint32
	addr, size  uint64 // user range
	slot        int
	freed       bool
	allocThread record.TID
	freeThread  record.TID
	allocStack  []uint64
	freeStack   []uint64
}

type slot struct {
	lo, hi  uint64 // including redzones
	rounded uint64
	cur     int // index of the live block, or -1
	last    int // index of the most recent block
	gen     uint32
}

type heapState struct {
	blocks     []block
	slots      []slot // sorted by lo (bump allocation appends in order)
	free       map[uint64][]int
	quarantine []int
	quarBytes  uint64
	brk        uint64
	mapped     uint64 // arena is mapped up to here
	live       uint64 // bytes in live blocks
	shared     bool   // the slices and map are shared with a snapshot
}

func newHeap() heapState {
	return heapState{free: map[uint64][]int{}, brk: HeapBase, mapped: HeapBase}
}

// own makes the heap metadata private before a mutation: snapshots share
// it (copy on write) because most transitions never allocate.
func (h *heapState) own() {
	if h.shared {
		*h = h.clone()
	}
}

func (h *heapState) clone() heapState {
	c := *h
	c.shared = false
	c.blocks = append([]block(nil), h.blocks...)
	c.slots = append([]slot(nil), h.slots...)
	c.quarantine = append([]int(nil), h.quarantine...)
	c.free = make(map[uint64][]int, len(h.free))
	for k, v := range h.free {
		c.free[k] = append([]int(nil), v...)
	}
	return c
}

// slotAt returns the index of the slot containing addr, or -1.
func (h *heapState) slotAt(addr uint64) int {
	i := sort.Search(len(h.slots), func(i int) bool { return h.slots[i].hi > addr })
	if i < len(h.slots) && h.slots[i].lo <= addr {
		return i
	}
	return -1
}

// blockAt returns the live block whose user range contains addr.
func (h *heapState) blockAt(addr uint64) *block {
	if addr < HeapBase || addr >= h.brk {
		return nil
	}
	s := h.slotAt(addr)
	if s < 0 || h.slots[s].cur < 0 {
		return nil
	}
	b := &h.blocks[h.slots[s].cur]
	if addr >= b.addr && addr < b.addr+b.size {
		return b
	}
	return nil
}

func roundUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }

// heapViolation is why Check rejected an access.
type heapViolation struct {
	msg   string
	block *block // the block concerned, if any
}

// Check implements cpu.Watcher for the heap arena.
func (k *Kernel) Check(addr uint64, size uint8, write bool, pc uint64) bool {
	h := &k.st.heap
	end := addr + uint64(size)
	s := h.slotAt(addr)
	if s < 0 || addr >= h.brk {
		k.violation = &heapViolation{msg: fmt.Sprintf("access to heap memory that was never allocated (0x%x)", addr)}
		return false
	}
	sl := &h.slots[s]
	if sl.cur < 0 {
		b := &h.blocks[sl.last]
		if addr >= b.addr && addr < b.addr+b.size {
			k.violation = &heapViolation{msg: fmt.Sprintf("use after free: %s of %d bytes at 0x%x, %d bytes into block #%d (%d bytes) freed by thread %d",
				rw(write), size, addr, addr-b.addr, b.id, b.size, b.freeThread), block: b}
		} else {
			k.violation = &heapViolation{msg: fmt.Sprintf("%s of %d bytes at 0x%x in the redzone of freed block #%d", rw(write), size, addr, b.id), block: b}
		}
		return false
	}
	b := &h.blocks[sl.cur]
	if addr >= b.addr && end <= b.addr+b.size {
		return true
	}
	where := "after the end"
	if addr < b.addr {
		where = "before the start"
	}
	k.violation = &heapViolation{msg: fmt.Sprintf("heap overflow: %s of %d bytes at 0x%x, %s of block #%d (0x%x, %d bytes)",
		rw(write), size, addr, where, b.id, b.addr, b.size), block: b}
	return false
}

func rw(write bool) string {
	if write {
		return "write"
	}
	return "read"
}

// malloc allocates size bytes and returns the user address, or 0 with a
// limit bug recorded when the memory limit is exceeded.
func (k *Kernel) malloc(size uint64) uint64 {
	h := &k.st.heap
	h.own()
	if size > k.cfg.MaxMemory {
		return 0
	}
	rounded := roundUp(size, heapAlign)
	if rounded == 0 {
		rounded = heapAlign
	}
	si := -1
	if l := h.free[rounded]; len(l) > 0 {
		si = l[len(l)-1]
		h.free[rounded] = l[:len(l)-1]
	} else {
		lo := h.brk
		hi := lo + redzone + rounded + redzone
		if hi > HeapLimit || k.memoryUsed()+(hi-lo) > k.cfg.MaxMemory {
			k.memoryLimit(fmt.Sprintf("malloc(%d)", size))
			return 0
		}
		if hi > h.mapped {
			top := roundUp(hi, mem.PageSize)
			if err := k.mem.Map(h.mapped, top-h.mapped, mem.PermR|mem.PermW|mem.PermWatch); err != nil {
				k.limitBug("heap arena: " + err.Error())
				return 0
			}
			h.mapped = top
		}
		h.brk = hi
		h.slots = append(h.slots, slot{lo: lo, hi: hi, rounded: rounded, cur: -1, last: -1})
		si = len(h.slots) - 1
	}
	sl := &h.slots[si]
	sl.gen++
	b := block{
		id: uint32(len(h.blocks) + 1), gen: sl.gen,
		addr: sl.lo + redzone, size: size, slot: si,
		allocThread: k.curTID(), allocStack: k.stack(),
	}
	h.blocks = append(h.blocks, b)
	sl.cur, sl.last = len(h.blocks)-1, len(h.blocks)-1
	h.live += size
	k.syncEvent(record.SyncEvent{Kind: record.SyncAlloc, Arg: b.addr, Block: b.id, Gen: b.gen})
	// Fresh memory reads as zero on first use; a reused slot is scrubbed
	// so that no value leaks from the previous block (calloc relies on it).
	if sl.gen > 1 {
		k.mem.Zero(b.addr, rounded)
		k.charge(rounded)
	}
	return b.addr
}

// free releases the block at ptr; a bad pointer is a heap bug.
func (k *Kernel) free(ptr uint64, fn string) {
	h := &k.st.heap
	h.own()
	if ptr == 0 {
		return
	}
	s := -1
	if ptr >= HeapBase && ptr < h.brk {
		s = h.slotAt(ptr)
	}
	if s < 0 {
		k.heapBug(fmt.Sprintf("invalid %s(0x%x): not a heap pointer", fn, ptr), nil)
		return
	}
	sl := &h.slots[s]
	if sl.cur < 0 {
		b := &h.blocks[sl.last]
		if ptr == b.addr {
			k.heapBug(fmt.Sprintf("double free: %s(0x%x) of block #%d, already freed by thread %d", fn, ptr, b.id, b.freeThread), b)
		} else {
			k.heapBug(fmt.Sprintf("invalid %s(0x%x): not the start of a block (freed block #%d starts at 0x%x)", fn, ptr, b.id, b.addr), b)
		}
		return
	}
	b := &h.blocks[sl.cur]
	if ptr != b.addr {
		k.heapBug(fmt.Sprintf("invalid %s(0x%x): points %d bytes into block #%d (0x%x, %d bytes)", fn, ptr, int64(ptr-b.addr), b.id, b.addr, b.size), b)
		return
	}
	b.freed = true
	b.freeThread = k.curTID()
	b.freeStack = k.stack()
	sl.cur = -1
	h.live -= b.size
	k.syncEvent(record.SyncEvent{Kind: record.SyncFree, Arg: b.addr, Block: b.id, Gen: b.gen})
	k.wakeRange(b.addr, b.size) // a spinner reading the block would now fault
	h.quarantine = append(h.quarantine, s)
	h.quarBytes += sl.rounded
	for len(h.quarantine) > quarantineMax || h.quarBytes > quarantineSize {
		old := h.quarantine[0]
		h.quarantine = h.quarantine[1:]
		h.quarBytes -= h.slots[old].rounded
		r := h.slots[old].rounded
		h.free[r] = append(h.free[r], old)
	}
}

// leaks lists the blocks still live.
func (h *heapState) leaks() []*block {
	var out []*block
	for i := range h.slots {
		if c := h.slots[i].cur; c >= 0 {
			out = append(out, &h.blocks[c])
		}
	}
	return out
}
