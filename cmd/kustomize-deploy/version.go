package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/version"
)

func newVersionCommand(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the version, commit and Go version of this build",
		Example: `  kustomize-deploy version -o json`,
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := checkOutput(output, "text", "json"); err != nil {
				return err
			}
			info := version.Get()
			if output == "json" {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			_, err := fmt.Fprintln(e.stdout, info)
			return err
		},
	}
	outputFlag(cmd, &output, "text", "json")
	return cmd
}
