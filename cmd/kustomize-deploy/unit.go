package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/report"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
	"github.com/kustomize-deploy/kustomize-deploy/internal/units"
)

// unitCommand is diff, apply or drift: the commands that run a unit's
// pipeline.
type unitCommand struct {
	use, short, long, example string
	run                       func(ctx context.Context, c *kube.Clients, opts pipeline.Options, correct bool) (*result.Result, error)
	diffs                     bool
	// drift registers --correct.
	drift bool
	mode  result.Mode
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
	run: func(ctx context.Context, c *kube.Clients, opts pipeline.Options, _ bool) (*result.Result, error) {
		return pipeline.Diff(ctx, c, opts)
	},
	diffs: true,
	mode:  result.ModeDiff,
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
	run: func(ctx context.Context, c *kube.Clients, opts pipeline.Options, _ bool) (*result.Result, error) {
		return pipeline.Apply(ctx, c, opts)
	},
	mode: result.ModeApply,
}

var driftCommand = unitCommand{
	use:   "drift",
	short: "Find where the cluster differs from Git, and with --correct apply it again",
	long: `Drift compares the cluster with the unit's desired state, as a scheduled
drift run of the GitHub Action does: objects that differ in fields this tool
applies (fields other managers own, such as replicas set by an HPA, are not
drift unless Git sets them), objects missing from the cluster, and objects
prune would delete. It reports them; with --correct it applies the unit
again and shows what it corrected.`,
	example: `  kustomize-deploy drift --name app --path clusters/prod/app
  kustomize-deploy drift --name app --path clusters/prod/app --correct`,
	run:   pipeline.Drift,
	diffs: true,
	drift: true,
	mode:  result.ModeDrift,
}

func newUnitCommand(e *env, u unitCommand) *cobra.Command {
	f, cl, cf := newSpecFlags(), newClusterFlags(), &configFlags{}
	var output string
	var correct, failOnDrift bool
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
			if cf.offline && cf.base == "" {
				return usagef("--offline needs --base: the commit to diff the working tree against")
			}
			revs := &checkout.Worktrees{}
			defer revs.Close()
			f.spec.IncludeTags, f.spec.ExcludeTags = cf.includeTags, cf.excludeTags
			if cf.path != "" {
				return runConfig(cmd.Context(), cmd, e, f, cl, cf, u.mode, correct, output, revs)
			}
			if flag := cf.needsConfig(); flag != "" {
				return usagef("%s stops the units of --config at the first failure: a unit run on its own has no other unit", flag)
			}
			opts, err := f.options(cmd.Context(), spec.NeedName|spec.NeedPath, e, cl)
			if err != nil {
				return err
			}
			if cf.base != "" {
				if opts.Base, err = resolveBase(cmd.Context(), opts.Dir.Path, cf.base); err != nil {
					return err
				}
			}
			// A three-way diff renders the base; a failed Helm upgrade
			// rolls back to the revision last applied.
			opts.At = revs.Unit
			var res *result.Result
			if cf.offline {
				res, err = pipeline.DiffOffline(cmd.Context(), opts, units.At(opts.Base, opts.At, opts.Dir))
			} else {
				c, cerr := cl.clients(cmd.Context(), e)
				if cerr != nil {
					return cerr
				}
				res, err = u.run(cmd.Context(), c, opts, correct)
			}
			if err := render(e, output, res, err, u.diffs); err != nil {
				return err
			}
			if failOnDrift && res.Drifted {
				return errReported // the output says what drifted
			}
			return nil
		},
	}
	f.name(cmd, true)
	f.build(cmd)
	f.plan(cmd, u.use)
	if u.mode != result.ModeDiff {
		f.write(cmd)
	}
	cf.register(cmd)
	cl.register(cmd)
	outputFlag(cmd, &output, "text", "json")
	if u.mode == result.ModeDiff {
		cmd.Flags().StringVar(&cf.base, "base", "", "a three-way diff: show what the working tree changes against this commit (e.g. origin/main) apart from what someone changed in the cluster since this tool applied it, which applying reverts")
		cmd.Flags().BoolVar(&cf.allUnits, "all-units", false, "with --config and --base, render and diff every unit, not only those the change since --base can reach (a unit whose files, Kustomization, source or values changed, and their dependents)")
		cmd.Flags().BoolVar(&cf.offline, "offline", false, "diff the rendered manifests against --base without a cluster, as the Action does for a pull request without cluster access (nothing is decrypted)")
	}
	if u.drift {
		cmd.Flags().BoolVar(&correct, "correct", false, "apply the unit again when it drifted (default: only report)")
		cmd.Flags().BoolVar(&failOnDrift, "fail-on-drift", false, "exit 1 when the unit drifted, corrected or not")
	}
	_ = cmd.RegisterFlagCompletionFunc("name", cl.completeUnits(e))
	if cmd.Flags().Lookup("depends-on") != nil {
		_ = cmd.RegisterFlagCompletionFunc("depends-on", cl.completeUnits(e))
	}
	return cmd
}

// resolveBase is the commit rev names in the repository around path (a
// file or a directory): the base of a three-way or offline diff.
func resolveBase(ctx context.Context, path, rev string) (string, error) {
	dir := path
	if info, err := os.Stat(path); err == nil && !info.IsDir() {
		dir = filepath.Dir(path)
	}
	sha, err := checkout.Git(ctx, dir, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", usagef("--base %s is not a commit of the repository at %s", rev, dir)
	}
	return sha, nil
}

// render prints a run's result; a failed run exits 1 once it is printed,
// with a hint when a flag would get it past its failure.
func render(e *env, output string, res *result.Result, err error, diffs bool) error {
	if res == nil {
		return err
	}
	res.MaskTexts(e.masker.String)
	if output == "json" {
		enc := json.NewEncoder(e.plain())
		enc.SetIndent("", "  ")
		if encErr := enc.Encode(res); encErr != nil {
			return encErr
		}
	} else {
		report.Text(e.plain(), res, diffs)
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
	var te *kube.TimeoutError
	if errors.As(err, &te) {
		return fmt.Sprintf("raise --request-timeout (now %s) if the API server is merely slow", te.After)
	}
	var f *pipeline.Failure
	if !errors.As(err, &f) {
		return ""
	}
	return hintFor(f.Fix)
}

// hintFor names the flag that gets a run past a failure (fix), if any.
func hintFor(fix pipeline.Fix) string {
	switch fix {
	case pipeline.FixForce:
		return "--force recreates objects whose immutable fields changed"
	case pipeline.FixAllowRemoteBases:
		return "--allow-remote-bases lets the build fetch remote resources"
	case pipeline.FixForcePrune:
		return "--force-prune prunes over --max-prune and of --protect kinds, and garbage-collects over --max-collect"
	case pipeline.FixMapSource:
		return "--source KIND/NAMESPACE/NAME=DIR builds a source from a directory you checked out"
	case pipeline.FixFetchSources:
		return "--fetch-sources (the default) fetches GitRepositories of other repositories and pulls OCIRepositories; or map them with --source KIND/NAMESPACE/NAME=DIR"
	case pipeline.FixGitSecret:
		return "--git-secret NAME=FILE gives the Secret a GitRepository's spec.secretRef names (username and password, or identity and known_hosts)"
	case pipeline.FixOCISecret:
		return "--oci-secret NAME=FILE gives the Secret an OCIRepository's spec.secretRef names (a Docker config.json)"
	case pipeline.FixGitHubToken:
		return "set GITHUB_TOKEN (and GITHUB_API_URL for GitHub Enterprise Server) to a token that may read what needs it: a GitRepository with provider github, a ResourceSetInputProvider's pull requests, branches and tags"
	}
	return ""
}
