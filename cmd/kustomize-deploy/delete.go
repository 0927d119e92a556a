package main

import (
	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

func newDeleteCommand(e *env) *cobra.Command {
	f, cl, cf := newSpecFlags(), newClusterFlags(), &configFlags{}
	var output string
	cmd := &cobra.Command{
		Use:   "delete",
		Short: "Delete every object the unit owns, then its inventory",
		Long: `Delete removes everything the unit's inventory lists, with the safeguards of
prune (only objects that still carry the unit's labels, never those annotated
prune: disabled, never a Namespace holding objects of others), then the
inventory itself. Objects that cannot be deleted stay in the inventory. A unit
with no inventory (deleted already, or never applied) has nothing to delete:
that is a success.

With --config, every unit of the configuration (or those --name lists) is
deleted as deleting its Flux Kustomization would: per the deletionPolicy its
last apply recorded (Orphan, or a suspended unit, keeps the objects), each
after the units that depend on it. More units than --max-collect, or their
objects all together over --max-prune or of a --protect kind, are refused
unless --force-prune.`,
		Example: `  kustomize-deploy delete --name app
  kustomize-deploy delete --config clusters/staging --force-prune`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			if cf.path != "" {
				revs := &checkout.Worktrees{}
				defer revs.Close()
				return runConfig(cmd.Context(), cmd, e, f, cl, cf, result.ModeDelete, false, output, revs)
			}
			opts, err := f.options(cmd.Context(), spec.NeedName, e, cl)
			if err != nil {
				return err
			}
			c, err := cl.clients(cmd.Context(), e)
			if err != nil {
				return err
			}
			res, err := pipeline.Delete(cmd.Context(), c, opts)
			return render(e, output, res, err, false)
		},
	}
	f.name(cmd, true)
	cmd.Flags().Lookup("name").Usage = "unit name: names its inventory Secret (required; with --config, the units to delete, comma-separated, default all)"
	f.serviceAccount(cmd, "delete")
	f.lockTimeout(cmd)
	f.deleteBudget(cmd)
	cf.register(cmd)
	cl.register(cmd)
	outputFlag(cmd, &output, "text", "json")
	_ = cmd.RegisterFlagCompletionFunc("name", cl.completeUnits(e))
	return cmd
}
