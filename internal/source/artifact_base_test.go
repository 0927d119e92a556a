package source

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testfs"
)

// An artifact an ArtifactGenerator makes from this checkout alone is made
// again at another revision, from the checkout's files there, for a
// unit's diff against a PR's base; one with a source that is not the
// checkout (mapped here) is not, as that source has no such revision.
func TestArtifactAtTheBase(t *testing.T) {
	t.Parallel()
	head, base, old := t.TempDir(), t.TempDir(), t.TempDir()
	testfs.Write(t, head, map[string]string{"apps/base/web/web.yaml": "web: 2", "apps/production/kustomization.yaml": "resources: [../base/web]\n"})
	testfs.Write(t, base, map[string]string{"apps/base/web/web.yaml": "web: 1", "apps/production/kustomization.yaml": "resources: [../base/web]\n"})
	testfs.Write(t, old, map[string]string{"deploy/web.yaml": "web: 0"}) // before apps/ was
	trees := map[string]string{"base": base, "old": old}
	at := func(_ context.Context, rev string, dir paths.Dir) (*paths.Dir, error) {
		if dir.Root != head || dir.Rel != "." {
			t.Errorf("at was asked for %+v, want the checkout's root", dir)
		}
		root, ok := trees[rev]
		if !ok {
			return nil, nil
		}
		return &paths.Dir{Root: root, Path: root, Rel: "."}, nil
	}
	gitRef := config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system"}
	mappedRef := config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "other"}
	apps := config.Artifact{Name: "apps", OriginRevision: "@monorepo", Copy: []config.Copy{
		{From: "@monorepo/apps/base/**", To: "@artifact/base/", Strategy: "Overwrite"},
		{From: "@monorepo/apps/production/**", To: "@artifact/production/", Strategy: "Overwrite"},
	}}
	set := &config.Set{Generators: []*config.Generator{
		{Ref: config.Ref{Namespace: "flux-system", Name: "flux-system"}, Sources: []config.GeneratorSource{{Alias: "monorepo", Source: gitRef}}, Artifacts: []config.Artifact{apps}},
		{Ref: config.Ref{Namespace: "flux-system", Name: "other"}, Sources: []config.GeneratorSource{{Alias: "monorepo", Source: mappedRef}},
			Artifacts: []config.Artifact{{Name: "other-apps", Copy: apps.Copy}}},
	}}
	r := &Resolver{set: set, root: head, revision: "head", mapped: map[config.SourceRef]string{mappedRef: head}}
	defer r.Close()
	resolve := func(artifact string) Tree {
		t.Helper()
		src, err := r.Resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "flux-system", Name: "apps"},
			Source: config.SourceRef{Kind: "ExternalArtifact", Namespace: "flux-system", Name: artifact}})
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	if src := resolve("other-apps"); src.Generated != nil {
		t.Errorf("an artifact of a mapped source can be made at the base: %+v", src)
	}
	src := resolve("apps")
	if src.Generated == nil {
		t.Fatalf("an artifact of the checkout alone cannot be made at the base: %+v", src)
	}
	unitAt := r.ArtifactAt(at, src.Generated)

	for _, tc := range []struct {
		name, rev, rel string
		want           map[string]string // nil: no unit there
	}{
		{name: "the unit's directory in the artifact made from the base's files", rev: "base", rel: "production",
			want: map[string]string{"kustomization.yaml": "resources: [../base/web]\n"}},
		{name: "beside it, what the artifact copied there", rev: "base", rel: "base",
			want: map[string]string{"web/web.yaml": "web: 1"}},
		{name: "a path the base's artifact does not hold", rev: "base", rel: "staging"},
		{name: "a revision whose files the copy operations do not find", rev: "old", rel: "production"},
		{name: "a revision where the checkout's root is not", rev: "gone", rel: "production"},
	} {
		dir, err := unitAt(t.Context(), tc.rev, paths.Dir{Root: src.Root, Path: filepath.Join(src.Root, tc.rel), Rel: tc.rel})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.want == nil {
			if dir != nil {
				t.Errorf("%s: %+v, want no directory (everything is new)", tc.name, dir)
			}
			continue
		}
		if dir == nil {
			t.Errorf("%s: no directory", tc.name)
			continue
		}
		if dir.Rel != tc.rel {
			t.Errorf("%s: Rel %q, want %q", tc.name, dir.Rel, tc.rel)
		}
		if diff := cmp.Diff(tc.want, testfs.Read(t, dir.Path)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if diff := cmp.Diff(map[string]string{"base/web/web.yaml": "web: 2", "production/kustomization.yaml": "resources: [../base/web]\n"}, testfs.Read(t, src.Root)); diff != "" {
		t.Errorf("the head's artifact changed (-want +got):\n%s", diff)
	}
	first, _ := unitAt(t.Context(), "base", paths.Dir{Root: src.Root, Rel: "production"})
	second, _ := unitAt(t.Context(), "base", paths.Dir{Root: src.Root, Rel: "base"})
	if first == nil || second == nil || first.Root != second.Root {
		t.Errorf("the artifact was made twice at the same revision: %+v %+v", first, second)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first.Root); !os.IsNotExist(err) {
		t.Errorf("the base's artifact is still there after Close: %v", err)
	}
}
