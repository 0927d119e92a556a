package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
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
cluster's units. With -o json it prints a matrix for a workflow's
strategy.matrix; each job then runs apply --config DIR --name <units>, and
checks in the cluster whatever its units depend on outside the group. Plan
needs no cluster.`,
		Example: `  kustomize-deploy plan --config clusters/production
  echo "matrix=$(kustomize-deploy plan --config clusters/production -o json)" >> "$GITHUB_OUTPUT"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			if by != "group" && by != "cluster" {
				return usagef("--by must be group or cluster, not %q", by)
			}
			set, _, err := readConfig(path, root)
			if err != nil {
				return err
			}
			groups, err := units.Plan(set, by == "cluster")
			if err != nil {
				return err
			}
			if output == "json" {
				return json.NewEncoder(e.stdout).Encode(map[string]any{"include": groups})
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "GROUP\tCLUSTER\tUNITS")
			for _, g := range groups {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", g.Name, or(g.Cluster, "-"), g.Units)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&path, "config", "", "file or directory of Flux Kustomizations (required)")
	cmd.Flags().StringVar(&root, "root", "", "repository root (default: the git work tree of --config)")
	cmd.Flags().StringVar(&by, "by", "group", "group (units connected by dependencies) or cluster")
	_ = cmd.MarkFlagDirname("config")
	_ = cmd.RegisterFlagCompletionFunc("by", cobra.FixedCompletions([]string{"group", "cluster"}, cobra.ShellCompDirectiveNoFileComp))
	outputFlag(cmd, &output, "text", "json")
	return cmd
}

// readConfig reads the configuration at path (a file or a directory), in
// the repository around it (or root), and returns it with its directory.
func readConfig(path, root string) (*config.Set, paths.Dir, error) {
	if path == "" {
		return nil, paths.Dir{}, usagef("--config is required")
	}
	dir := path
	if info, err := os.Stat(path); err == nil && !info.IsDir() {
		dir = filepath.Dir(path)
	}
	d, err := paths.Resolve(dir, root)
	if err != nil {
		return nil, d, usagef("--config: %v", err)
	}
	target := d.Path
	if dir != path {
		target = filepath.Join(d.Path, filepath.Base(path))
	}
	set, err := config.Read(d.Root, target)
	if err != nil {
		return nil, d, configError(err)
	}
	return set, d, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
