package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/report"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// unitCommand is diff or apply: the commands that run a unit's pipeline.
type unitCommand struct {
	use, short, long, example string
	run                       func(context.Context, *kube.Clients, pipeline.Options) (*result.Result, error)
	diffs                     bool
}

var diffCommand = unitCommand{
	use:   "diff",
	short: "Show what apply would change, and what prune would delete; writes nothing",
	long: `Diff builds the unit and dry-runs every object that may change on the
server, then lists what apply would create, configure and prune, with a
unified diff of each change. Secret values are shown as ***. Nothing is
written to the cluster.`,
	example: `  kustomize-deploy diff --name app --path clusters/prod/app
  kustomize-deploy diff --name app --path clusters/prod/app -o json | jq '.entries[] | select(.action != "unchanged")'`,
	run:   pipeline.Diff,
	diffs: true,
}

var applyCommand = unitCommand{
	use:   "apply",
	short: "Build, decrypt, validate, apply in stages, prune and wait for health",
	long: `Apply runs the unit's pipeline: its dependencies must be Ready; the
directory is built with kustomize (a kustomization is generated for plain
manifests), SOPS files are decrypted, ${VAR}s substituted; every object is
validated before anything is written; objects are applied with server-side
apply in stages (CRDs and Namespaces first); what left the build is pruned;
and the run waits for every object to become ready. The inventory Secret
records the objects and how the run ended.`,
	example: `  # a kustomization, after the unit it depends on
  kustomize-deploy apply --name app --path clusters/prod/app --depends-on infra

  # plain manifests without namespaces, into the namespace shop
  kustomize-deploy apply --name shop --path manifests/ -n shop

  # override an image, as a service account
  kustomize-deploy apply --name web --path apps/web --image web=:1.4.2 --service-account deployer`,
	run: pipeline.Apply,
}

func newUnitCommand(e *env, u unitCommand) *cobra.Command {
	f, cl := newSpecFlags(), newClusterFlags()
	var output string
	cmd := &cobra.Command{
		Use:     u.use,
		Short:   u.short,
		Long:    u.long,
		Example: u.example,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			opts, err := f.options(pipeline.NeedName|pipeline.NeedPath, e, cl)
			if err != nil {
				return err
			}
			c, err := cl.clients(e)
			if err != nil {
				return err
			}
			res, err := u.run(cmd.Context(), c, opts)
			return render(e, output, res, err, u.diffs)
		},
	}
	f.name(cmd, true)
	f.build(cmd)
	f.apply(cmd)
	cl.register(cmd)
	outputFlag(cmd, &output, "text", "json")
	_ = cmd.RegisterFlagCompletionFunc("name", cl.completeUnits(e))
	_ = cmd.RegisterFlagCompletionFunc("depends-on", cl.completeUnits(e))
	return cmd
}

// render prints a run's result; a failed run exits 1 once it is printed,
// with a hint when a flag would get it past its failure.
func render(e *env, output string, res *result.Result, err error, diffs bool) error {
	if res == nil {
		return err
	}
	if output == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if encErr := enc.Encode(res); encErr != nil {
			return encErr
		}
	} else {
		report.Text(e.stdout, res, diffs)
	}
	if err == nil {
		return nil
	}
	if hint := fixHint(err); hint != "" {
		fmt.Fprintln(e.stderr, "hint: "+hint)
	}
	return errReported
}

// fixHint names the flag that gets a run past its failure, if one does.
func fixHint(err error) string {
	var f *pipeline.Failure
	if !errors.As(err, &f) {
		return ""
	}
	switch f.Fix {
	case pipeline.OptForce:
		return "--force recreates objects whose immutable fields changed"
	case pipeline.OptAllowRemoteBases:
		return "--allow-remote-bases lets the build fetch remote resources"
	}
	return ""
}
