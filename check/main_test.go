package check

import (
	"os"
	"testing"

	"landslide/internal/gctune"
)

// TestMain runs the tests with the collector set as the command sets it
// (gctune): the explorations here allocate as users' do.
func TestMain(m *testing.M) {
	gctune.Tune()
	os.Exit(m.Run())
}
