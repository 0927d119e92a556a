package main

import (
	"encoding/json"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
)

func newBuildCommand(e *env) *cobra.Command {
	f := newSpecFlags()
	var output string
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Render the unit's objects (Secret values masked); needs no cluster",
		Long: `Build renders the unit as apply would: kustomize build (a kustomization is
generated for plain manifests), SOPS decryption and ${VAR} substitution. It
needs no cluster; Secret values are printed as ***.`,
		Example: `  kustomize-deploy build --path clusters/prod/app
  kustomize-deploy build --path apps/web --image web=:1.4.2 --substitute ENV=prod -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "yaml", "json"); err != nil {
				return err
			}
			opts, err := f.options(pipeline.NeedPath, e, nil)
			if err != nil {
				return err
			}
			rendered, err := pipeline.Render(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSONList(e, rendered)
			}
			return rendered.WriteYAML(e.stdout)
		},
	}
	f.build(cmd)
	outputFlag(cmd, &output, "yaml", "json")
	return cmd
}

// writeJSONList prints the objects as one v1 List, as kubectl -o json
// does, Secret values masked.
func writeJSONList(e *env, r *pipeline.Rendered) error {
	items := make([]any, len(r.Objects))
	for i, u := range r.Objects {
		items[i] = apply.MaskSecret(u).Object
	}
	list := unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List", "items": items}}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(list.Object)
}
