package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// This file is a small MessagePack codec for the records that are
// numerous, large or nested (branch chunks, traces, race records,
// checkpoints). It writes standard MessagePack (structs as arrays of their
// fields, in declaration order), so any MessagePack library reads the
// values; it exists because the records come from other packages (no
// struct tags), because it is several times faster than reflection on
// the exploration's hot path, and because its decoder bounds every
// allocation by the input's length: an array header claiming 2^32
// elements is rejected when fewer bytes than that remain, instead of
// being allocated (github.com/vmihailenco/msgpack/v5 preallocates slices
// of structs at the declared length).
//
// Evolution: a decoder reads the fields it knows by position, leaves
// missing trailing fields at their zero value and skips extra ones, so a
// field appended to a record keeps old values readable.

// enc appends MessagePack to a byte slice.
type enc struct{ b []byte }

func (e *enc) arr(n int) {
	switch {
	case n < 16:
		e.b = append(e.b, 0x90|byte(n))
	case n <= math.MaxUint16:
		e.b = append(e.b, 0xdc, byte(n>>8), byte(n))
	default:
		e.b = append(e.b, 0xdd)
		e.b = binary.BigEndian.AppendUint32(e.b, uint32(n))
	}
}

func (e *enc) nil() { e.b = append(e.b, 0xc0) }

func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 0xc3)
	} else {
		e.b = append(e.b, 0xc2)
	}
}

func (e *enc) uint(v uint64) {
	switch {
	case v < 128:
		e.b = append(e.b, byte(v))
	case v <= math.MaxUint8:
		e.b = append(e.b, 0xcc, byte(v))
	case v <= math.MaxUint16:
		e.b = append(e.b, 0xcd, byte(v>>8), byte(v))
	case v <= math.MaxUint32:
		e.b = append(e.b, 0xce)
		e.b = binary.BigEndian.AppendUint32(e.b, uint32(v))
	default:
		e.b = append(e.b, 0xcf)
		e.b = binary.BigEndian.AppendUint64(e.b, v)
	}
}

func (e *enc) int(v int64) {
	switch {
	case v >= 0:
		e.uint(uint64(v))
	case v >= -32:
		e.b = append(e.b, byte(v))
	case v >= math.MinInt8:
		e.b = append(e.b, 0xd0, byte(v))
	case v >= math.MinInt16:
		e.b = append(e.b, 0xd1, byte(v>>8), byte(v))
	case v >= math.MinInt32:
		e.b = append(e.b, 0xd2)
		e.b = binary.BigEndian.AppendUint32(e.b, uint32(v))
	default:
		e.b = append(e.b, 0xd3)
		e.b = binary.BigEndian.AppendUint64(e.b, uint64(v))
	}
}

func (e *enc) f64(v float64) {
	e.b = append(e.b, 0xcb)
	e.b = binary.BigEndian.AppendUint64(e.b, math.Float64bits(v))
}

func (e *enc) str(s string) {
	n := len(s)
	switch {
	case n < 32:
		e.b = append(e.b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		e.b = append(e.b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		e.b = append(e.b, 0xda, byte(n>>8), byte(n))
	default:
		e.b = append(e.b, 0xdb)
		e.b = binary.BigEndian.AppendUint32(e.b, uint32(n))
	}
	e.b = append(e.b, s...)
}

// bin writes b as MessagePack bin; nil is written as nil, so that nil and
// empty survive a round trip.
func (e *enc) bin(b []byte) {
	if b == nil {
		e.nil()
		return
	}
	n := len(b)
	switch {
	case n <= math.MaxUint8:
		e.b = append(e.b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		e.b = append(e.b, 0xc5, byte(n>>8), byte(n))
	default:
		e.b = append(e.b, 0xc6)
		e.b = binary.BigEndian.AppendUint32(e.b, uint32(n))
	}
	e.b = append(e.b, b...)
}

// errCodec is wrapped by every decoding error.
var errCodec = errors.New("malformed record")

// dec reads MessagePack from a byte slice. Errors are sticky: after the
// first one every read returns a zero value, and err says what happened.
type dec struct {
	b     []byte
	off   int
	err   error
	depth int
}

func (d *dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at byte %d", errCodec, fmt.Sprintf(format, args...), d.off)
	}
}

func (d *dec) rest() int { return len(d.b) - d.off }

func (d *dec) need(n int) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || d.rest() < n {
		d.fail("truncated (need %d bytes, have %d)", n, d.rest())
		return false
	}
	return true
}

func (d *dec) byte1() byte {
	if !d.need(1) {
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

func (d *dec) be(n int) uint64 {
	if !d.need(n) {
		return 0
	}
	var v uint64
	for _, c := range d.b[d.off : d.off+n] {
		v = v<<8 | uint64(c)
	}
	d.off += n
	return v
}

// arr reads an array header. Every element takes at least minElem bytes,
// so a count that cannot fit in what is left is an error, never an
// allocation. A nil reads as an empty array.
func (d *dec) arr(minElem int) int {
	c := d.byte1()
	var n uint64
	switch {
	case d.err != nil:
		return 0
	case c&0xf0 == 0x90:
		n = uint64(c & 0x0f)
	case c == 0xdc:
		n = d.be(2)
	case c == 0xdd:
		n = d.be(4)
	case c == 0xc0:
		return 0
	default:
		d.off--
		d.fail("want an array, found type byte 0x%02x", c)
		return 0
	}
	if minElem < 1 {
		minElem = 1
	}
	if n > uint64(d.rest()/minElem) {
		d.fail("array of %d elements in %d bytes", n, d.rest())
		return 0
	}
	return int(n)
}

// u64 reads a non-negative integer of any MessagePack integer type.
func (d *dec) u64() uint64 {
	c := d.byte1()
	switch {
	case d.err != nil:
		return 0
	case c < 0x80:
		return uint64(c)
	case c == 0xcc:
		return d.be(1)
	case c == 0xcd:
		return d.be(2)
	case c == 0xce:
		return d.be(4)
	case c == 0xcf:
		return d.be(8)
	case c >= 0xd0 && c <= 0xd3, c >= 0xe0:
		d.off--
		v := d.i64()
		if v < 0 {
			d.fail("negative value %d for an unsigned field", v)
			return 0
		}
		return uint64(v)
	}
	d.off--
	d.fail("want an integer, found type byte 0x%02x", c)
	return 0
}

// i64 reads a signed integer of any MessagePack integer type.
func (d *dec) i64() int64 {
	c := d.byte1()
	switch {
	case d.err != nil:
		return 0
	case c < 0x80:
		return int64(c)
	case c >= 0xe0:
		return int64(int8(c))
	case c == 0xd0:
		return int64(int8(d.be(1)))
	case c == 0xd1:
		return int64(int16(d.be(2)))
	case c == 0xd2:
		return int64(int32(d.be(4)))
	case c == 0xd3:
		return int64(d.be(8))
	case c >= 0xcc && c <= 0xcf:
		d.off--
		v := d.u64()
		if v > math.MaxInt64 {
			d.fail("value %d overflows a signed field", v)
			return 0
		}
		return int64(v)
	}
	d.off--
	d.fail("want an integer, found type byte 0x%02x", c)
	return 0
}

func (d *dec) uintN(max uint64) uint64 {
	v := d.u64()
	if v > max {
		d.fail("value %d out of range (max %d)", v, max)
		return 0
	}
	return v
}

func (d *dec) u8() uint8   { return uint8(d.uintN(math.MaxUint8)) }
func (d *dec) u32() uint32 { return uint32(d.uintN(math.MaxUint32)) }

func (d *dec) intN(min, max int64) int64 {
	v := d.i64()
	if v < min || v > max {
		d.fail("value %d out of range [%d, %d]", v, min, max)
		return 0
	}
	return v
}

func (d *dec) i32() int32 { return int32(d.intN(math.MinInt32, math.MaxInt32)) }
func (d *dec) int() int   { return int(d.intN(math.MinInt, math.MaxInt)) }

func (d *dec) bool() bool {
	switch c := d.byte1(); {
	case d.err != nil:
		return false
	case c == 0xc3:
		return true
	case c == 0xc2:
		return false
	default:
		d.off--
		d.fail("want a bool, found type byte 0x%02x", c)
		return false
	}
}

func (d *dec) f64() float64 {
	switch c := d.byte1(); {
	case d.err != nil:
		return 0
	case c == 0xcb:
		return math.Float64frombits(d.be(8))
	case c == 0xca:
		return float64(math.Float32frombits(uint32(d.be(4))))
	default:
		d.off--
		return float64(d.i64())
	}
}

// raw reads a str or bin and returns its bytes, aliasing the input. isNil
// reports a MessagePack nil.
func (d *dec) raw() (b []byte, isNil bool) {
	c := d.byte1()
	var n uint64
	switch {
	case d.err != nil:
		return nil, false
	case c == 0xc0:
		return nil, true
	case c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	case c == 0xd9, c == 0xc4:
		n = d.be(1)
	case c == 0xda, c == 0xc5:
		n = d.be(2)
	case c == 0xdb, c == 0xc6:
		n = d.be(4)
	default:
		d.off--
		d.fail("want a string or bytes, found type byte 0x%02x", c)
		return nil, false
	}
	if n > uint64(d.rest()) {
		d.fail("%d bytes of data with %d left", n, d.rest())
		return nil, false
	}
	b = d.b[d.off : d.off+int(n) : d.off+int(n)]
	d.off += int(n)
	return b, false
}

func (d *dec) str() string {
	b, _ := d.raw()
	return string(b)
}

// bin returns a copy of a bin value (nil for a MessagePack nil).
func (d *dec) bin() []byte {
	b, isNil := d.raw()
	if isNil || d.err != nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

func (d *dec) hash() (h [32]byte) {
	b, _ := d.raw()
	if d.err == nil && len(b) != 32 {
		d.fail("hash of %d bytes", len(b))
	}
	copy(h[:], b)
	return h
}

// skip skips one value of any type (an unknown field).
func (d *dec) skip() {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > 64 {
		d.fail("values nested too deep")
		return
	}
	c := d.byte1()
	if d.err != nil {
		return
	}
	skipN := func(n uint64) {
		if n > uint64(d.rest()) {
			d.fail("%d bytes of data with %d left", n, d.rest())
			return
		}
		d.off += int(n)
	}
	elems := func(n uint64) {
		if n > uint64(d.rest()) {
			d.fail("%d elements with %d bytes left", n, d.rest())
			return
		}
		for i := uint64(0); i < n && d.err == nil; i++ {
			d.skip()
		}
	}
	switch {
	case c < 0x80 || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
	case c&0xe0 == 0xa0:
		skipN(uint64(c & 0x1f))
	case c&0xf0 == 0x90:
		elems(uint64(c & 0x0f))
	case c&0xf0 == 0x80:
		elems(2 * uint64(c&0x0f))
	case c == 0xcc || c == 0xd0:
		skipN(1)
	case c == 0xcd || c == 0xd1:
		skipN(2)
	case c == 0xce || c == 0xd2 || c == 0xca:
		skipN(4)
	case c == 0xcf || c == 0xd3 || c == 0xcb:
		skipN(8)
	case c == 0xc4 || c == 0xd9:
		skipN(d.be(1))
	case c == 0xc5 || c == 0xda:
		skipN(d.be(2))
	case c == 0xc6 || c == 0xdb:
		skipN(d.be(4))
	case c == 0xdc:
		elems(d.be(2))
	case c == 0xdd:
		elems(d.be(4))
	case c == 0xde:
		elems(2 * d.be(2))
	case c == 0xdf:
		elems(2 * d.be(4))
	case c == 0xd4:
		skipN(2)
	case c == 0xd5:
		skipN(3)
	case c == 0xd6:
		skipN(5)
	case c == 0xd7:
		skipN(9)
	case c == 0xd8:
		skipN(17)
	case c == 0xc7:
		skipN(d.be(1) + 1)
	case c == 0xc8:
		skipN(d.be(2) + 1)
	case c == 0xc9:
		skipN(d.be(4) + 1)
	default:
		d.off--
		d.fail("invalid type byte 0x%02x", c)
	}
}

// skipAll checks that the input is exactly one well-formed value.
// CheckMsgpack checks that b is a sequence of well-formed MessagePack
// values whose every length fits in the bytes that remain. Decoding b
// with github.com/vmihailenco/msgpack/v5 after that cannot allocate much
// more than len(b) times the size of the largest element type (the
// package preallocates whatever a header claims).
func CheckMsgpack(b []byte) error { return (&dec{b: b}).skipAll() }

func (d *dec) skipAll() error {
	d.skip()
	return d.end()
}

// end checks that the whole input was read.
func (d *dec) end() error {
	if d.err == nil && d.off != len(d.b) {
		d.fail("%d trailing bytes", len(d.b)-d.off)
	}
	return d.err
}
