package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

func newHistoryCommand(e *env) *cobra.Command {
	cl := newClusterFlags()
	var name, output string
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List a unit's last applies: revision, commit, time, outcome, counts, who ran it",
		Long: fmt.Sprintf(`History reads the unit's inventory and lists its last %d apply runs, oldest
first: the revision number (what rollback --to takes), the commit applied,
when, how the run ended, what it created, configured and deleted, a digest
of the objects it left the unit owning, and who ran it (the GitHub actor and
run, else the user). No object and no value is stored: a rollback renders
the unit again at the commit.`, inventory.HistoryLimit),
		Example: `  kustomize-deploy history --name app
  kustomize-deploy history --name app -o json | jq '.[] | select(.ready)'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			if name == "" {
				return usagef("--name is required: the unit whose history to show")
			}
			c, err := cl.clients(cmd.Context(), e)
			if err != nil {
				return err
			}
			ns := cl.inventoryNamespace(c)
			inv, err := inventory.Load(cmd.Context(), c.Client, ns, name)
			if err != nil {
				return err
			}
			if inv == nil {
				return fmt.Errorf("unit '%s' has no inventory in namespace %s", name, ns)
			}
			history := inv.Status.History
			if history == nil {
				history = []inventory.Revision{}
			}
			if output == "json" {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(history)
			}
			return historyTable(e, name, inv.Status, history)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the unit (required)")
	cl.register(cmd)
	outputFlag(cmd, &output, "text", "json")
	_ = cmd.RegisterFlagCompletionFunc("name", cl.completeUnits(e))
	return cmd
}

func historyTable(e *env, name string, st inventory.Status, history []inventory.Revision) error {
	if len(history) == 0 {
		fmt.Fprintf(e.stdout, "unit %s has no history yet: it is kept from its next apply on\n", name)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tCOMMIT\tTIME\tREADY\tREASON\tCREATED\tCONFIGURED\tDELETED\tBY\tNOTE")
	for _, r := range history {
		note := ""
		if r.RollbackOf > 0 {
			note = "rollback to " + strconv.Itoa(r.RollbackOf)
		}
		if r.Ready && r.SourceRevision == st.LastAppliedRevision && r.Revision == lastReady(history) {
			note = joinNote(note, "applied now")
		}
		by := r.By
		if r.RunURL != "" {
			by = joinNote(by, r.RunURL)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%t\t%s\t%d\t%d\t%d\t%s\t%s\n", r.Revision, short(r.SourceRevision), r.Time.Format("2006-01-02 15:04:05Z"),
			r.Ready, r.Reason, r.Counts.Created, r.Counts.Configured, r.Counts.Deleted, or(by, "-"), note)
	}
	return tw.Flush()
}

func lastReady(history []inventory.Revision) int {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Ready {
			return history[i].Revision
		}
	}
	return 0
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

func newRollbackCommand(e *env) *cobra.Command {
	f, cl := newSpecFlags(), newClusterFlags()
	var output string
	var to int
	cmd := &cobra.Command{
		Use:   "rollback",
		Short: "Apply a revision of the unit's history again (default: the last ready one before the current)",
		Long: `Rollback applies a revision of the unit's history (see history) again: the
unit as it is at that revision's commit, checked out from the repository
of --path (the commit must be in the checkout: a shallow clone needs
fetching), built, decrypted and applied as apply does, recorded as a new
revision that says which one it rolled back to. Without --to, the last
revision that ended ready with another commit than the one applied now.
The commit is older than the one applied: like apply, rollback needs
--allow-rollback to apply it.`,
		Example: `  kustomize-deploy history --name app
  kustomize-deploy rollback --name app --path clusters/prod/app --allow-rollback
  kustomize-deploy rollback --name app --path clusters/prod/app --to 3 --allow-rollback`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			if to < 0 {
				return usagef("--to wants a revision number of the unit's history, got %d", to)
			}
			opts, err := f.options(cmd.Context(), spec.NeedName|spec.NeedPath, e, cl)
			if err != nil {
				return err
			}
			revs := &checkout.Worktrees{}
			defer revs.Close()
			opts.At = revs.Unit
			c, err := cl.clients(cmd.Context(), e)
			if err != nil {
				return err
			}
			opts, rev, err := pipeline.Rollback(cmd.Context(), c, opts, to)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "rolling %s back to revision %d (commit %s)\n", opts.Name, rev.Revision, short(rev.SourceRevision))
			res, err := pipeline.Apply(cmd.Context(), c, opts)
			if rerr := render(e, output, res, err, false); rerr != nil {
				return rerr
			}
			if res != nil && res.Reason == result.ReasonOutOfOrder {
				return errors.New("rollback refused: commit " + short(rev.SourceRevision) + " is older than the one applied; --allow-rollback consents to it")
			}
			return nil
		},
	}
	f.name(cmd, true)
	f.build(cmd)
	f.plan(cmd, "rollback")
	f.write(cmd)
	cl.register(cmd)
	outputFlag(cmd, &output, "text", "json")
	cmd.Flags().IntVar(&to, "to", 0, "the revision of the unit's history to apply again (see history; default: the last ready one before the current)")
	_ = cmd.RegisterFlagCompletionFunc("name", cl.completeUnits(e))
	return cmd
}
