package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

func newImagesCommand(e *env) *cobra.Command {
	f := newSpecFlags()
	var output string
	cmd := &cobra.Command{
		Use:   "images",
		Short: "List the images the unit deploys, per container and object; needs no cluster",
		Long: `Images renders the unit as build does and lists every image its workloads
run: one row per container (init containers too) of each Pod, Deployment,
StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job and CronJob,
with the object and, for a chart's object, its HelmRelease. Custom
resources' image fields are not guessed. An image from a secret is ***.`,
		Example: `  kustomize-deploy images --path clusters/prod/app
  kustomize-deploy images --path apps/web --image web=:1.4.2 -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "table", "json"); err != nil {
				return err
			}
			opts, err := f.options(cmd.Context(), spec.NeedPath, e, nil)
			if err != nil {
				return err
			}
			rendered, err := pipeline.Render(cmd.Context(), opts)
			if err != nil {
				return err
			}
			list := rendered.Images()
			if output == "json" {
				if list == nil {
					list = []result.Image{}
				}
				enc := json.NewEncoder(e.plain())
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			tw := tabwriter.NewWriter(e.plain(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "IMAGE\tCONTAINER\tOBJECT\tRELEASE")
			for _, im := range list {
				container := im.Container
				if im.Init {
					container += " (init)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", im.Image, container, im.Object, im.Release)
			}
			return tw.Flush()
		},
	}
	f.build(cmd)
	outputFlag(cmd, &output, "table", "json")
	return cmd
}
