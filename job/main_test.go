package job

import (
	"testing"

	"landslide/emu/mem"
	"landslide/internal/gctune"
)

// TestMain: the tests' explorations collect as the command's do, and
// memory a search released is poisoned before reuse (mem.PoisonReleased):
// a state that still reached it would fail the tests.
func TestMain(m *testing.M) {
	mem.PoisonReleased = true
	gctune.RunTests(m)
}
