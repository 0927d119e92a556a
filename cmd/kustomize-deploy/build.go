package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
	"github.com/kustomize-deploy/kustomize-deploy/internal/units"
)

func newBuildCommand(e *env) *cobra.Command {
	f, cf := newSpecFlags(), &configFlags{}
	var output, outputDir string
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Render the unit's objects, or a whole configuration's (secret values masked); needs no cluster",
		Long: `Build renders the unit as apply would: kustomize build (a kustomization is
generated for plain manifests), SOPS decryption and ${VAR} substitution. It
needs no cluster; Secret values, and every field whose value SOPS decrypted
or a secret variable was substituted into, are printed as ***.

With --config, it renders every unit of a configuration of Flux
Kustomizations — their HelmReleases' charts and the Kustomizations they
emit included — as the offline diff of a pull request renders them
(nothing is decrypted): one YAML stream, each unit's objects after a
"# unit: NAME" line, or with --output-dir one file per unit (NAME.yaml)
and SHA256SUMS, their digests: a release snapshot.`,
		Example: `  kustomize-deploy build --path clusters/prod/app
  kustomize-deploy build --path apps/web --image web=:1.4.2 --substitute ENV=prod -o json
  kustomize-deploy build --config clusters/prod --output-dir snapshot/`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "yaml", "json"); err != nil {
				return err
			}
			if cf.path != "" {
				if output != "yaml" {
					return usagef("--output json cannot be used with --config: its units are written as YAML")
				}
				return buildConfig(cmd.Context(), e, f, cf, outputDir)
			}
			if outputDir != "" {
				return usagef("--output-dir needs --config: one file per unit of a configuration")
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
	cmd.Flags().StringVar(&cf.path, "config", "", "render every Flux Kustomization found in this file or directory (e.g. clusters/prod) as a unit, without a cluster")
	cmd.Flags().StringVar(&outputDir, "output-dir", "", "with --config, write each unit's objects to DIR/NAME.yaml and their SHA-256 digests to DIR/SHA256SUMS instead of stdout")
	_ = cmd.MarkFlagDirname("config")
	_ = cmd.MarkFlagDirname("output-dir")
	outputFlag(cmd, &output, "yaml", "json")
	return cmd
}

// buildConfig renders every unit of the configuration cf names to
// stdout, or one file per unit in outputDir with SHA256SUMS. A unit that
// does not render is named with why, the others still written, and the
// command fails.
func buildConfig(ctx context.Context, e *env, f *specFlags, cf *configFlags, outputDir string) error {
	cf.offline, cf.fetch = true, true
	revs := &checkout.Worktrees{}
	defer revs.Close()
	s, err := configSpec(ctx, e, f, newClusterFlags(), cf, revs)
	if err != nil {
		return err
	}
	run, err := units.Open(ctx, s)
	if err != nil {
		return configError(err)
	}
	defer run.Close()
	if outputDir != "" {
		if err := os.MkdirAll(outputDir, 0o755); err != nil {
			return err
		}
	}
	var sums strings.Builder
	failed := 0
	for _, u := range run.Render(ctx) {
		if u.Err != nil {
			failed++
			fmt.Fprintf(e.stderr, "error: unit %s: %s\n", u.Name, e.masker.String(u.Err.Error()))
			continue
		}
		var buf bytes.Buffer
		if err := u.WriteYAML(&buf); err != nil {
			return fmt.Errorf("unit %s: %w", u.Name, err)
		}
		if outputDir == "" {
			fmt.Fprintf(e.plain(), "# unit: %s\n%s", u.Name, buf.String())
			if !strings.HasSuffix(buf.String(), "---\n") {
				fmt.Fprintln(e.plain(), "---")
			}
			continue
		}
		file := unitFile(u.Name)
		if err := os.WriteFile(filepath.Join(outputDir, file), buf.Bytes(), 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(buf.Bytes())
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), file)
	}
	if outputDir != "" {
		if err := os.WriteFile(filepath.Join(outputDir, "SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
			return err
		}
	}
	if failed > 0 {
		return errReported
	}
	return nil
}

// unitFile is the file a unit's objects are written to: its name, with
// anything but letters, digits, '-', '_' and '.' made '_' (a unit's name
// never leaves the output directory).
func unitFile(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	s := strings.TrimLeft(string(b), ".")
	if s == "" {
		s = "_"
	}
	return s + ".yaml"
}
