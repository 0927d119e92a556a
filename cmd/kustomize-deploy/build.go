package main

import (
	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

func newBuildCommand(e *env) *cobra.Command {
	f := newSpecFlags()
	var output string
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Render the unit's objects (secret values masked); needs no cluster",
		Long: `Build renders the unit as apply would: kustomize build (a kustomization is
generated for plain manifests), SOPS decryption and ${VAR} substitution. It
needs no cluster; Secret values, and every field whose value SOPS decrypted
or a secret variable was substituted into, are printed as ***.`,
		Example: `  kustomize-deploy build --path clusters/prod/app
  kustomize-deploy build --path apps/web --image web=:1.4.2 --substitute ENV=prod -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "yaml", "json"); err != nil {
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
			// Masked by where values came from, not by value.
			if output == "json" {
				return rendered.WriteJSON(e.plain())
			}
			return rendered.WriteYAML(e.plain())
		},
	}
	f.build(cmd)
	outputFlag(cmd, &output, "yaml", "json")
	return cmd
}
