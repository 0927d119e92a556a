package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
	"github.com/kustomize-deploy/kustomize-deploy/internal/units"
)

func newPlanCommand(e *env) *cobra.Command {
	var path, by, output, root string
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Split a configuration of Flux Kustomizations into groups for parallel jobs (a matrix)",
		Long: `Plan reads the Flux Kustomizations of --config, as apply --config does, and
prints the groups of units that can run as separate jobs: each connected set
of units (dependencies in either direction), or with --by cluster each
cluster's units (the kubeConfig Secret they name). With -o json it prints a
matrix for a workflow's strategy.matrix; each job then runs apply --config DIR
--name <units>, and checks in the cluster whatever its units depend on outside
the group.

With --by config, --config is a directory of configurations, one per
subdirectory (Flux's clusters/<name>/ layout), and each is a group: its
"config" is the path to give apply --config (or the action's config input).
Plan needs no cluster. It checks the configuration as an apply would before
writing anything (every Kustomization read, no dependency cycle, every
spec.path a directory of the repository) and refuses one of no unit.`,
		Example: `  kustomize-deploy plan --config clusters/production
  echo "matrix=$(kustomize-deploy plan --config clusters/production -o json)" >> "$GITHUB_OUTPUT"
  kustomize-deploy plan --config clusters --by config -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			if by != "group" && by != "cluster" && by != "config" {
				return usagef("--by must be group, cluster or config, not %q", by)
			}
			var groups []units.Group
			if by == "config" {
				if path == "" {
					return usagef("--config is required")
				}
				dir, err := paths.Resolve(path, root)
				if err != nil {
					return usagef("--config: %v", err)
				}
				open := func(sub string) (*config.Set, error) {
					set, _, err := planConfig(cmd.Context(), e, sub, dir.Root)
					return set, err
				}
				if groups, err = units.PlanConfigs(dir.Root, dir, open); err != nil {
					return err
				}
			} else {
				set, dir, err := planConfig(cmd.Context(), e, path, root)
				if err != nil {
					return err
				}
				if groups, err = units.Plan(set, by == "cluster"); err != nil {
					return err
				}
				if err := units.CheckPaths(dir.Root, set); err != nil {
					return err
				}
			}
			if output == "json" {
				return json.NewEncoder(e.stdout).Encode(map[string]any{"include": groups})
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			if by == "config" {
				fmt.Fprintln(tw, "GROUP\tCONFIG\tUNITS")
				for _, g := range groups {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", g.Name, g.Config, g.Units)
				}
				return tw.Flush()
			}
			fmt.Fprintln(tw, "GROUP\tCLUSTER\tUNITS")
			for _, g := range groups {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", g.Name, or(g.Cluster, "-"), g.Units)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&path, "config", "", "file or directory of Flux Kustomizations (required)")
	cmd.Flags().StringVar(&root, "root", "", "repository root (default: the git work tree of --config)")
	cmd.Flags().StringVar(&by, "by", "group", "group (units connected by dependencies), cluster (the kubeConfig Secret units name) or config (a configuration per subdirectory of --config)")
	_ = cmd.MarkFlagDirname("config")
	_ = cmd.RegisterFlagCompletionFunc("by", cobra.FixedCompletions([]string{"group", "cluster", "config"}, cobra.ShellCompDirectiveNoFileComp))
	outputFlag(cmd, &output, "text", "json")
	return cmd
}

// planConfig reads the configuration at path as a run opens it, with no
// cluster: the Kustomizations found by building included. A unit that
// cannot be built here (its source is another repository, its values are
// in the cluster) is planned without what it would emit, and said so.
func planConfig(ctx context.Context, e *env, path, root string) (*config.Set, paths.Dir, error) {
	if _, _, err := readConfig(path, root); err != nil {
		return nil, paths.Dir{}, err
	}
	gh, err := e.github()
	if err != nil {
		return nil, paths.Dir{}, err
	}
	run, err := units.Open(ctx, units.Spec{
		Path: path, Root: root, Getenv: e.getenv, Unit: spec.Default(), GitHub: gh,
		Cluster: func(string) (*kube.Clients, error) { return nil, nil },
	})
	if err != nil {
		return nil, paths.Dir{}, configError(err)
	}
	defer run.Close()
	for _, w := range run.Warnings {
		fmt.Fprintln(e.stderr, "warning: "+w)
	}
	return run.Set(), run.Dir, nil
}

// readConfig reads the configuration at path (a file or a directory), in
// the repository around it (or root), and returns it with its directory.
func readConfig(path, root string) (*config.Set, paths.Dir, error) {
	if path == "" {
		return nil, paths.Dir{}, usagef("--config is required")
	}
	set, dir, err := units.Load(path, root)
	if pe := (*units.PathError)(nil); errors.As(err, &pe) {
		return nil, dir, usagef("--config: %v", pe.Err)
	}
	return set, dir, err
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
