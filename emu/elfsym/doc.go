// Package elfsym owns everything Landslide knows about a guest binary: it
// validates a RISC-V RV64 ELF executable and loads its PT_LOAD segments into
// guest memory (keeping the first 64 KiB unmapped as a null guard), reads the
// ELF symbol table and the DWARF line tables, names program addresses for bug
// reports (function, file and line), unwinds guest stacks, and reads the
// directives a test records for the checker (LANDSLIDE_CONFIG, section
// .landslide) without interpreting them.
//
// Guest code is built by clang with -O1 -fno-omit-frame-pointer, so every
// function keeps a frame record (saved ra and caller's s0) just below the
// address held in s0. The unwinder walks that chain; for the innermost frame
// it analyses the function's own prologue and epilogue instructions so that
// a pc anywhere in a function, including between the first and last
// instruction of the prologue or epilogue, unwinds correctly.
//
// Everything here is computed once when the binary is loaded; a *Symbols is
// immutable afterwards and safe for concurrent use. Lookups by address use
// binary search over sorted slices.
//
// Load never panics on malformed input: every problem becomes a one-line
// *LoadError. Broken debugging information (symbols, DWARF) does not stop a
// load; it is dropped and described in Image.Warnings.
package elfsym
