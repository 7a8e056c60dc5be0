package cli

import (
	"github.com/spf13/cobra"
)

func newCCCmd() *cobra.Command {
	return &cobra.Command{Use: "cc", Short: "(soon)"}
}
