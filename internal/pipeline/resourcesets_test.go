package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/github"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// renderUnit writes files into a directory and renders it (sealed, for
// discovery, or not).
func renderUnit(t *testing.T, files map[string]string, opts Options, sealed bool) (*Rendered, error) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := paths.Resolve(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	opts.Dir = d
	if sealed {
		return RenderSealed(t.Context(), opts)
	}
	return Render(t.Context(), opts)
}

const rsetUnit = `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSetInputProvider
metadata:
  name: previews
  namespace: apps
spec:
  type: GitHubPullRequest
  url: https://github.com/acme/app
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: previews
  namespace: apps
spec:
  inputs:
    - id: main
  inputsFrom:
    - name: previews
  resourcesTemplate: |
    apiVersion: v1
    kind: Namespace
    metadata:
      name: preview-<< inputs.id >>
    ---
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: app-<< inputs.id >>
      namespace: apps
    spec:
      path: ./app
      targetNamespace: preview-<< inputs.id >>
`

type pulls []github.Pull

func (p pulls) WebURL() string { return "https://github.com" }
func (p pulls) OpenPulls(_ context.Context, _, _ string, visit func(github.Pull) bool) error {
	for _, pr := range p {
		if !visit(pr) {
			break
		}
	}
	return nil
}
func (pulls) Branches(context.Context, string, string, func(github.Ref) bool) error { return nil }
func (pulls) Tags(context.Context, string, string, func(github.Ref) bool) error     { return nil }

// Rendering expands a unit's ResourceSets: what they generate is the
// unit's (from the ResourceSet's file), they and their providers are left
// out with a note each, and a build that asked GitHub is not reusable.
func TestRenderExpandsResourceSets(t *testing.T) {
	opts := DefaultOptions()
	opts.ResourceSets.GitHub = pulls{{Number: 12, HeadRef: "feat", HeadSHA: "abc"}}
	for _, sealed := range []bool{false, true} {
		r, err := renderUnit(t, map[string]string{"kustomization.yaml": "resources: [rset.yaml]\n", "rset.yaml": rsetUnit}, opts, sealed)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range r.Objects {
			id := object.IDOf(u)
			got = append(got, id.String()+" < "+r.Sources[id])
		}
		want := []string{"Namespace/preview-main < rset.yaml", "Kustomization/apps/app-main < rset.yaml", "Namespace/preview-12 < rset.yaml", "Kustomization/apps/app-12 < rset.yaml"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("sealed %v: (-want +got):\n%s", sealed, diff)
		}
		var left []string
		for _, l := range r.LeftOut {
			left = append(left, l.ID.String())
		}
		if diff := cmp.Diff([]string{"ResourceSetInputProvider/apps/previews", "ResourceSet/apps/previews"}, left); diff != "" {
			t.Errorf("left out (-want +got):\n%s", diff)
		}
		if r.Inputs.Complete {
			t.Error("Inputs.Complete: a build that asked GitHub is reusable")
		}
		if len(r.Notes) != 1 || r.Notes[0] != "ResourceSet/apps/previews: 2 input set(s), 4 object(s) generated" {
			t.Errorf("notes = %q", r.Notes)
		}
	}
}

// A ResourceSet's problem fails the rendering at its file and line, as
// a build.FileError the front ends annotate.
func TestRenderResourceSetError(t *testing.T) {
	_, err := renderUnit(t, map[string]string{"kustomization.yaml": "resources: [rset.yaml]\n", "rset.yaml": rsetUnit}, DefaultOptions(), false)
	fes := build.FileErrors(err)
	if len(fes) != 1 || fes[0].File != "rset.yaml" || fes[0].Line != 1 || !errors.Is(err, resourceset.ErrNoGitHub) {
		t.Fatalf("error = %v (file errors %+v), want one at rset.yaml:1 wrapping ErrNoGitHub", err, fes)
	}
	if !strings.Contains(err.Error(), "ResourceSetInputProvider/apps/previews (rset.yaml:1): an input provider of ResourceSet/apps/previews") {
		t.Errorf("error = %v", err)
	}
}

// A ResourceSet or provider an earlier run applied as an object is
// orphaned, not deleted, in any unit.
func TestOrphanResourceSets(t *testing.T) {
	r := newRun(Options{}, "apply")
	entries := []inventory.Entry{
		{ID: object.ID{Group: "fluxcd.controlplane.io", Kind: "ResourceSet", Namespace: "a", Name: "x"}},
		{ID: object.ID{Kind: "ConfigMap", Namespace: "a", Name: "y"}},
	}
	kept := r.orphanFlux(entries)
	if len(kept) != 1 || kept[0].ID.Kind != "ConfigMap" || len(r.res.Notes) != 1 {
		t.Errorf("kept %v, notes %q", kept, r.res.Notes)
	}
}

// A ResourceSet or provider holding a value substituted from a secret is
// not read: what it generates would show the value unmasked.
func TestRenderRefusesSecretResourceSets(t *testing.T) {
	opts := DefaultOptions()
	opts.Substitute, opts.SubstituteSecret = map[string]string{"TOKEN": "s3cr3t-value"}, []string{"TOKEN"}
	_, err := renderUnit(t, map[string]string{"kustomization.yaml": "resources: [rset.yaml]\n", "rset.yaml": `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: leaky
  namespace: apps
spec:
  inputs:
  - token: ${TOKEN}
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: plain
    data:
      token: << inputs.token >>
`}, opts, false)
	if err == nil || !strings.Contains(err.Error(), "ResourceSet/apps/leaky holds values decrypted or substituted from a secret") || strings.Contains(err.Error(), "s3cr3t-value") {
		t.Fatalf("error = %v", err)
	}
}

// A provider of a GitHub type with no token fails its unit with the fix
// that front ends name (the CLI's GITHUB_TOKEN, the Action's input).
func TestRenderWithoutGitHubTokenNamesTheFix(t *testing.T) {
	_, err := renderUnit(t, map[string]string{"kustomization.yaml": "resources: [rset.yaml]\n", "rset.yaml": rsetUnit}, DefaultOptions(), true)
	if f := failure(result.ReasonBuildFailed, err); f.Fix != FixGitHubToken {
		t.Errorf("fix %q, want %q (error %v)", f.Fix, FixGitHubToken, err)
	}
}
