package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
)

type statusRow struct {
	Unit      string           `json:"unit"`
	Namespace string           `json:"namespace"`
	Objects   int              `json:"objects"`
	Status    inventory.Status `json:"status"`
}

func newStatusCommand(e *env) *cobra.Command {
	cl := newClusterFlags()
	var name, output string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "List units with their revision, last result, reason and object count",
		Long: `Status reads the inventories in the inventory namespace and shows, for each
unit, whether its last run ended Ready, the Flux reason, the revision last
applied, how many objects it owns and the message.`,
		Example: `  kustomize-deploy status
  kustomize-deploy status --name app -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			c, err := cl.clients(cmd.Context(), e)
			if err != nil {
				return err
			}
			ns := cl.inventoryNamespace(c)
			var invs []*inventory.Inventory
			if name != "" {
				inv, err := inventory.Load(cmd.Context(), c.Client, ns, name)
				if err != nil {
					return err
				}
				if inv == nil {
					return fmt.Errorf("unit '%s' has no inventory in namespace %s", name, ns)
				}
				invs = append(invs, inv)
			} else if invs, err = inventory.List(cmd.Context(), c.Client, ns); err != nil {
				return err
			}
			rows := make([]statusRow, len(invs))
			for i, inv := range invs {
				rows[i] = statusRow{Unit: inv.Name, Namespace: inv.Namespace, Objects: len(inv.Entries), Status: inv.Status}
			}
			if output == "json" {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			return statusTable(e, ns, rows)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "show only this unit")
	cl.register(cmd)
	outputFlag(cmd, &output, "text", "json")
	_ = cmd.RegisterFlagCompletionFunc("name", cl.completeUnits(e))
	return cmd
}

func statusTable(e *env, ns string, rows []statusRow) error {
	if len(rows) == 0 {
		fmt.Fprintf(e.stdout, "no units in namespace %s\n", ns)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "UNIT\tREADY\tSUSPENDED\tREASON\tREVISION\tOBJECTS\tAGE\tMESSAGE")
	for _, r := range rows {
		rev := short(r.Status.LastAppliedRevision)
		if r.Status.Pinned != "" {
			rev += " (pinned to " + short(r.Status.Pinned) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%s\t%d\t%s\t%s\n", r.Unit, r.Status.Ready.Status, r.Status.Suspended, r.Status.Ready.Reason,
			rev, r.Objects, age(r.Status.Ready.LastTransitionTime), firstLine(r.Status.Ready.Message))
	}
	return tw.Flush()
}
