package check

import (
	"testing"

	"landslide/internal/gctune"
)

// TestMain: the tests' explorations collect as the command's do.
func TestMain(m *testing.M) { gctune.RunTests(m) }
