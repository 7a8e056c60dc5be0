package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"landslide/store"
)

func newVerifyStoreCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify-store",
		Short: "Check every record of the store: checksums, decoding, cross-references, lost commits",
		Long: `verify-store reads every record of the store, so that every block's checksum
is checked, decodes each record, and checks that the records refer to each
other as they must (every job, frontier, interleaving log, race, trace and
bug belongs to a run and job that exist; every bug's trace exists; every
run's binary and every checkpoint's pages exist and match their hashes). It
also compares the store with its commit counter, which finds commits lost
with a damaged write-ahead log. Each problem is one line; then the intact
and the damaged runs. Exit 0 when nothing is damaged, 2 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(cmd, true)
			if err != nil {
				return err
			}
			defer st.Close()
			v, err := st.Verify()
			if err != nil {
				return storeErr(st.Dir(), err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, struct {
					Store string `json:"store"`
					OK    bool   `json:"ok"`
					store.Verification
				}{st.Dir(), v.OK(), *v}); err != nil {
					return err
				}
			} else {
				total := 0
				kinds := make([]string, 0, len(v.Records))
				for k, n := range v.Records {
					total += n
					kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
				}
				sort.Strings(kinds)
				fmt.Fprintf(out, "Store %s: %d runs, %d records read (%s).\n", st.Dir(), v.Runs, total, strings.Join(kinds, ", "))
				for _, p := range v.Problems {
					fmt.Fprintf(out, "damaged: %s\n", p)
				}
				if len(v.Intact) > 0 {
					fmt.Fprintf(out, "Intact runs: %s\n", strings.Join(v.Intact, " "))
				}
				if len(v.Damaged) > 0 {
					fmt.Fprintf(out, "Damaged runs: %s\n", strings.Join(v.Damaged, " "))
				}
			}
			if !v.OK() {
				return usageErr("store %s: %d problems found (see above)", st.Dir(), len(v.Problems))
			}
			if !asJSON {
				fmt.Fprintln(out, "No damage found.")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
