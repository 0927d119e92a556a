package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/report"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/units"
)

func newTestCommand(e *env) *cobra.Command {
	f, cf := newSpecFlags(), &configFlags{}
	var output string
	cmd := &cobra.Command{
		Use:   "test",
		Short: "Check a whole configuration without a cluster: pass or fail per Kustomization and HelmRelease",
		Long: `Test renders every unit of a configuration of Flux Kustomizations (--config)
as the offline diff of a pull request does — build, substitution, charts,
the offline schema check with the configuration's CRDs (--schema-dir for
more) — and says for each Kustomization, and each HelmRelease it renders,
whether it passed, and the dangers a review flags in what it creates (RBAC
grants of * or cluster-admin). Nothing is decrypted and no cluster is
reached. It exits 1 when a unit fails.`,
		Example: `  kustomize-deploy test --config clusters/prod
  kustomize-deploy test --config clusters/prod --schema-dir schemas/ -o json
  kustomize-deploy test --config clusters/prod --source GitRepository/flux-system/apps=../apps`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			if cf.path == "" {
				return usagef("--config is required: the configuration to test")
			}
			cf.offline = true
			revs := &checkout.Worktrees{}
			defer revs.Close()
			s, err := configSpec(cmd.Context(), e, f, newClusterFlags(), cf, revs)
			if err != nil {
				return err
			}
			run, err := units.Open(cmd.Context(), s)
			if err != nil {
				return configError(err)
			}
			defer run.Close()
			opened(e, run, cf.verbose)
			set := run.DiffOffline(cmd.Context())
			set.MaskTexts(e.masker.String)
			if output == "json" {
				enc := json.NewEncoder(e.plain())
				enc.SetIndent("", "  ")
				if err := enc.Encode(set); err != nil {
					return err
				}
			} else {
				writeTest(e, set)
			}
			if !set.Ready {
				return errReported
			}
			return nil
		},
	}
	f.build(cmd)
	_ = cmd.Flags().MarkHidden("path") // test takes a configuration, not a unit's directory
	cmd.Flags().StringVar(&f.spec.SchemaDir, "schema-dir", "", "directory of JSON schemas (kubeconform's layout) for the offline schema check of custom resources")
	cmd.Flags().StringVar(&cf.path, "config", "", "test every Flux Kustomization found in this file or directory (e.g. clusters/prod) as a unit")
	_ = cmd.MarkFlagDirname("config")
	cf.registerRun(cmd)
	outputFlag(cmd, &output, "text", "json")
	return cmd
}

// writeTest prints one row per unit and per HelmRelease it rendered,
// PASS or FAIL, the dangers found, and a count.
func writeTest(e *env, set *result.Set) {
	tw := tabwriter.NewWriter(e.plain(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESULT\tKUSTOMIZATION / HELMRELEASE\tREASON\tMESSAGE")
	passed := 0
	for _, r := range set.Units {
		verdict := report.Verdict(r)
		if verdict == "PASS" {
			passed++
		}
		msg, _, _ := strings.Cut(r.Message, "\n")
		if verdict == "PASS" {
			msg = fmt.Sprintf("%d objects", len(r.Entries))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", verdict, r.Unit, r.Reason, msg)
		for _, rel := range r.Releases {
			fmt.Fprintf(tw, "%s\t  %s\t\tchart %s %s, %d objects\n", verdict, rel.HelmRelease, rel.Chart, rel.Version, len(rel.Objects))
		}
	}
	tw.Flush()
	for _, r := range set.Units {
		for _, e2 := range r.Entries {
			for _, d := range e2.Dangers {
				fmt.Fprintf(e.plain(), "warning: unit %s: %s %s: %s\n", r.Unit, e2.Object, d.Field, d.Consequence)
			}
		}
	}
	fmt.Fprintf(e.plain(), "%d of %d unit(s) passed; %s\n", passed, len(set.Units), report.SetSummary(set))
}
