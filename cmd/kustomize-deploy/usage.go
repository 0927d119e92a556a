package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// clusterGroup marks the flags that say which cluster to talk to and as
// whom, shown apart from the flags about the unit, as kubectl shows its
// global options apart.
const clusterGroup = "kustomize-deploy/cluster"

// usageTemplate is cobra's, with the flags in two groups.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{with flagUsages . false}}

Flags:
{{.}}{{end}}{{with flagUsages . true}}

Cluster flags:
{{.}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

func init() { cobra.AddTemplateFunc("flagUsages", flagUsages) }

// flagUsages lists cmd's own flags of the cluster group, or the others.
func flagUsages(cmd *cobra.Command, cluster bool) string {
	fs := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[clusterGroup]; ok == cluster && !f.Hidden {
			fs.AddFlag(f)
		}
	})
	return strings.TrimRight(fs.FlagUsages(), "\n")
}

// inClusterGroup marks the flags register adds as cluster flags.
func inClusterGroup(cmd *cobra.Command, register func()) {
	before := map[string]bool{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) { before[f.Name] = true })
	register()
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !before[f.Name] {
			_ = cmd.Flags().SetAnnotation(f.Name, clusterGroup, []string{"true"})
		}
	})
}
