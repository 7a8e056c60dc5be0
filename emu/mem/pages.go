package mem

// Walk calls fn for every mapped page of the snapshot, in ascending address
// order, with its permission and contents. data is nil for a page that was
// never written (it reads as zero); otherwise it is the snapshot's own page,
// which no one may modify: it is shared, and a snapshot never changes.
func (s *Snapshot) Walk(fn func(addr uint64, perm Perm, data *[PageSize]byte)) {
	for i, n := range s.root.kids {
		if n != nil {
			walk(n, 0, uint64(i), fn)
		}
	}
}

// walk visits the inner node n at level l whose pages' numbers start with
// the bits in prefix.
func walk(n *inner, l int, prefix uint64, fn func(uint64, Perm, *[PageSize]byte)) {
	for i, kid := range n.kids {
		if kid == nil {
			continue
		}
		vpn := prefix<<levelBits | uint64(i)
		if l < innerLevels-1 {
			walk((*inner)(kid), l+1, vpn, fn)
			continue
		}
		lf := (*leaf)(kid)
		for j, p := range lf.perms {
			if p&permMapped == 0 {
				continue
			}
			var data *[PageSize]byte
			if pg := lf.pages[j]; pg != nil {
				data = &pg.Data
			}
			fn((vpn<<levelBits|uint64(j))<<PageShift, p&^permMapped, data)
		}
	}
}
