package main

import (
	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

func newDeleteCommand(e *env) *cobra.Command {
	f, cl := newSpecFlags(), newClusterFlags()
	var output string
	cmd := &cobra.Command{
		Use:   "delete",
		Short: "Delete every object the unit owns, then its inventory",
		Long: `Delete removes everything the unit's inventory lists, with the safeguards of
prune (only objects that still carry the unit's labels, never those annotated
prune: disabled, never a Namespace holding objects of others), then the
inventory itself. Objects that cannot be deleted stay in the inventory.`,
		Example: `  kustomize-deploy delete --name app`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
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
	f.serviceAccount(cmd, "delete")
	f.lockTimeout(cmd)
	cl.register(cmd)
	outputFlag(cmd, &output, "text", "json")
	_ = cmd.RegisterFlagCompletionFunc("name", cl.completeUnits(e))
	return cmd
}
