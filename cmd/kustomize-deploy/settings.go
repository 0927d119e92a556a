package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

// setting is a command that says something of a unit on its inventory.
type setting struct {
	use, short, long, example string
	// revision registers --revision (pin)
	revision bool
	apply    func(ctx context.Context, c *kube.Clients, opts pipeline.Options, revision string) (*inventory.Inventory, error)
	done     func(inv *inventory.Inventory) string
}

var settings = []setting{
	{
		use:   "suspend",
		short: "Skip a unit in every run (apply, diff, drift) until it is resumed",
		long: `Suspend records on the unit's inventory that every run skips it, with reason
Suspended, as a suspended Flux Kustomization is; a run under way is not
stopped. Its objects stay as they are.`,
		example: `  kustomize-deploy suspend --name webapp-backend`,
		apply: func(ctx context.Context, c *kube.Clients, o pipeline.Options, _ string) (*inventory.Inventory, error) {
			return pipeline.Suspend(ctx, c, o, true)
		},
		done: func(inv *inventory.Inventory) string { return "unit " + inv.Name + " suspended" },
	},
	{
		use:     "resume",
		short:   "Run a suspended unit again",
		example: `  kustomize-deploy resume --name webapp-backend`,
		apply: func(ctx context.Context, c *kube.Clients, o pipeline.Options, _ string) (*inventory.Inventory, error) {
			return pipeline.Suspend(ctx, c, o, false)
		},
		done: func(inv *inventory.Inventory) string { return "unit " + inv.Name + " resumed" },
	},
	{
		use:   "pin",
		short: "Hold a unit at one revision: runs for any other revision skip it",
		long: `Pin records on the unit's inventory that runs for any revision but the one
given skip it, with reason Pinned: hold one workload during an incident and
keep the rest moving. Unpin to let it follow Git again.`,
		example:  `  kustomize-deploy pin --name webapp-backend --revision 3f1c2a9`,
		revision: true,
		apply: func(ctx context.Context, c *kube.Clients, o pipeline.Options, revision string) (*inventory.Inventory, error) {
			if revision == "" {
				return nil, usagef("--revision is required: the revision to hold the unit at")
			}
			return pipeline.Pin(ctx, c, o, revision)
		},
		done: func(inv *inventory.Inventory) string {
			return fmt.Sprintf("unit %s pinned to revision %s", inv.Name, inv.Status.Pinned)
		},
	},
	{
		use:     "unpin",
		short:   "Let a pinned unit follow Git again",
		example: `  kustomize-deploy unpin --name webapp-backend`,
		apply: func(ctx context.Context, c *kube.Clients, o pipeline.Options, _ string) (*inventory.Inventory, error) {
			return pipeline.Pin(ctx, c, o, "")
		},
		done: func(inv *inventory.Inventory) string { return "unit " + inv.Name + " unpinned" },
	},
}

func newSettingCommand(e *env, s setting) *cobra.Command {
	f, cl := newSpecFlags(), newClusterFlags()
	var output, revision string
	cmd := &cobra.Command{
		Use:     s.use,
		Short:   s.short,
		Long:    s.long,
		Example: s.example,
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
			inv, err := s.apply(cmd.Context(), c, opts, revision)
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(statusRow{Unit: inv.Name, Namespace: inv.Namespace, Objects: len(inv.Entries), Status: inv.Status})
			}
			_, err = fmt.Fprintln(e.stdout, s.done(inv))
			return err
		},
	}
	f.name(cmd, true)
	if s.revision {
		cmd.Flags().StringVar(&revision, "revision", "", "the revision runs may apply (required)")
		noCompletion(cmd, "revision")
	}
	cl.register(cmd)
	outputFlag(cmd, &output, "text", "json")
	_ = cmd.RegisterFlagCompletionFunc("name", cl.completeUnits(e))
	return cmd
}
