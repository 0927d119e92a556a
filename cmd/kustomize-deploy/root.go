package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/version"
)

// newRootCommand is the command tree. Commands and flags follow kubectl's
// and flux's habits: cobra, --double-dash flags, kubectl's cluster flags,
// -o/--output, completion.
func newRootCommand(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "kustomize-deploy",
		Short: "Push-based GitOps: build, decrypt, validate, apply, prune and wait, as Flux's kustomize-controller does",
		Long: `kustomize-deploy deploys a directory of Kubernetes manifests (a kustomization,
or plain YAML) as one unit, the way Flux's kustomize-controller does, from a CI
step or a laptop: build with kustomize, decrypt SOPS secrets, validate,
server-side apply in stages, prune what left Git using an inventory Secret in
the cluster, and wait for health.`,
		Example: `  # what would change, then apply
  kustomize-deploy diff  --name app --path clusters/prod/app
  kustomize-deploy apply --name app --path clusters/prod/app --depends-on infra

  # every unit and how its last run ended
  kustomize-deploy status`,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("a command is required: %s", commandNames(cmd))
		},
	}
	// --version, as flux and helm have it: what `version` prints.
	root.Version = version.Get().String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	root.SetUsageTemplate(usageTemplate)
	root.AddCommand(
		newBuildCommand(e),
		newImagesCommand(e),
		newTestCommand(e),
		newUnitCommand(e, diffCommand),
		newUnitCommand(e, applyCommand),
		newUnitCommand(e, driftCommand),
		newDeleteCommand(e),
		newStatusCommand(e),
		newHistoryCommand(e),
		newRollbackCommand(e),
		newPlanCommand(e),
	)
	for _, s := range settings {
		root.AddCommand(newSettingCommand(e, s))
	}
	root.AddCommand(
		newActionCommand(e),
		newVersionCommand(e),
	)
	root.CompletionOptions.HiddenDefaultCmd = false
	return root
}

// oldStyleFlag finds a long flag written with one dash, as Go's flag
// package accepted (-name): pflag would read it as -n with the value
// "ame". It returns the flag as it should be written, or "".
func oldStyleFlag(root *cobra.Command, args []string) string {
	cmd, _, err := root.Find(args)
	if err != nil {
		return ""
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(name) > 1 && cmd.Flags().Lookup(name) != nil {
			return "--" + strings.TrimPrefix(a, "-")
		}
	}
	return ""
}

// flagError makes a flag cobra could not parse a usage error (exit 2).
func flagError(_ *cobra.Command, err error) error { return usageError{err} }

// noArgs refuses positional arguments: everything is a flag.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected arguments %q: %s takes flags only", args, cmd.CommandPath())
	}
	return nil
}

func commandNames(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

// outputFlag registers -o/--output with its allowed values.
func outputFlag(cmd *cobra.Command, p *string, allowed ...string) {
	*p = allowed[0]
	cmd.Flags().StringVarP(p, "output", "o", allowed[0], "output format: "+orList(allowed))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(allowed, cobra.ShellCompDirectiveNoFileComp))
}

// checkOutput is a usage error unless o is one of allowed.
func checkOutput(o string, allowed ...string) error {
	for _, a := range allowed {
		if o == a {
			return nil
		}
	}
	return usagef("--output must be %s, not %q", orList(allowed), o)
}

func orList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
