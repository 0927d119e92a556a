package source

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testfs"
)

// An ArtifactGenerator's spec.pathPattern (Flux 2.9) makes one artifact
// per directory of its source the pattern matches, as source-watcher
// does: names take the captures lower-cased, copies take them as
// written; a Kustomization of one of them builds from it. A directory
// that makes a bad name, two that make one name, and a name no directory
// makes each fail naming the generator.
func TestResolvePathPatternArtifacts(t *testing.T) {
	t.Parallel()
	pattern := func(t *testing.T, text string) *config.PathPattern {
		p, err := config.ParsePathPattern(text)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	gitRef := config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system"}
	generator := func(t *testing.T) *config.Generator {
		return &config.Generator{
			Ref: config.Ref{Namespace: "flux-system", Name: "apps"}, File: "clusters/prod/apps.yaml", Line: 3,
			Sources:     []config.GeneratorSource{{Alias: "mono", Source: gitRef}},
			PathPattern: pattern(t, "@mono/apps/{app}/envs/{env}"),
			Artifacts: []config.Artifact{{Name: "{app}-{env}", Copy: []config.Copy{
				{From: "@mono/apps/{app}/envs/{env}/**", To: "@artifact/", Strategy: "Overwrite"},
				{From: "@mono/apps/{app}/base/**", To: "@artifact/base/", Strategy: "Overwrite"},
			}}},
		}
	}
	resolve := func(t *testing.T, files map[string]string, name string) (map[string]string, error) {
		root := t.TempDir()
		testfs.Write(t, root, files)
		r := &Resolver{set: &config.Set{Generators: []*config.Generator{generator(t)}}, root: root, revision: "abc123"}
		t.Cleanup(func() { r.Close() })
		got, err := r.Resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "flux-system", Name: name}, File: "apps.yaml", Line: 9,
			Source: config.SourceRef{Kind: "ExternalArtifact", Namespace: "flux-system", Name: name}})
		if err != nil {
			return nil, err
		}
		if got.Revision != "abc123" || got.Generated == nil {
			t.Errorf("artifact %s: %+v, want the checkout's revision and made again at a base", name, got)
		}
		return testfs.Read(t, got.Root), nil
	}
	tree := map[string]string{
		"apps/Web/base/deploy.yaml":   "web",
		"apps/Web/envs/prod/p.yaml":   "web-prod",
		"apps/api/base/deploy.yaml":   "api",
		"apps/api/envs/prod/p.yaml":   "api-prod",
		"apps/api/envs/dev/d.yaml":    "api-dev",
		"apps/api/notes/envs/x/x.txt": "not matched: a capture is one segment",
	}
	got, err := resolve(t, tree, "web-prod")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"p.yaml": "web-prod", "base/deploy.yaml": "web"}, got); diff != "" {
		t.Errorf("web-prod (-want +got):\n%s", diff)
	}
	if got, err = resolve(t, tree, "api-dev"); err != nil || got["d.yaml"] != "api-dev" || len(got) != 2 {
		t.Errorf("api-dev: %v %v", got, err)
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		ask   string
		err   string
	}{
		{name: "no directory makes it", files: tree, ask: "db-prod", err: "no ArtifactGenerator among the configuration's objects makes ExternalArtifact flux-system/db-prod"},
		{name: "a capture that is no label value", files: map[string]string{"apps/.hidden/envs/prod/p.yaml": "x"}, ask: "x-prod",
			err: `ArtifactGenerator flux-system/apps (clusters/prod/apps.yaml:3): directory apps/.hidden/envs/prod: pathPattern "@mono/apps/{app}/envs/{env}": app=".hidden" is not a label value`},
		{name: "two directories, one name", files: map[string]string{"apps/Web/envs/prod/p.yaml": "a", "apps/web/envs/prod/p.yaml": "b"}, ask: "web-prod",
			err: "directories apps/Web/envs/prod and apps/web/envs/prod both make artifact web-prod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resolve(t, tc.files, tc.ask)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}
