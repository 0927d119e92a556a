package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
)

// A unit built to find the Kustomizations it emits (FluxObjects) is not
// built again when it runs: its rendering takes that build, substitutes
// its own values in a copy of it, and renders what a build of its own
// would. Taken once, it is built again the next time. A unit whose
// rendering rewrites a file the other did not (an encrypted
// secretGenerator file, decrypted only for the run), whose files are not
// the run's snapshot, or that renders with no Builds, is built for each.
func TestUnitIsBuiltOnce(t *testing.T) {
	key, err := sopstest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := sopstest.Encrypt(key.Recipient, []byte("token: s3cret\n"), formats.Yaml, "")
	if err != nil {
		t.Fatal(err)
	}
	const apps = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  path: ./apps\n  prune: true\n  interval: 1h\n  sourceRef: {kind: GitRepository, name: flux-system}\n"
	const settings = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  region: ${REGION}\n"
	for _, tc := range []struct {
		name      string
		files     map[string]string
		noBuilds  bool
		noSnap    bool
		wantBuilt int // by discovery and the unit's two renderings
	}{
		{name: "built by discovery", files: map[string]string{"kustomization.yaml": "resources: [apps.yaml, settings.yaml]\n"}, wantBuilt: 2},
		{name: "an encrypted generator file", files: map[string]string{
			"kustomization.yaml": "resources: [apps.yaml, settings.yaml]\nsecretGenerator:\n- name: creds\n  files: [creds.yaml=creds.enc.yaml]\n",
			"creds.enc.yaml":     string(enc),
		}, wantBuilt: 3},
		{name: "no snapshot", files: map[string]string{"kustomization.yaml": "resources: [apps.yaml, settings.yaml]\n"}, noSnap: true, wantBuilt: 3},
		{name: "no builds", files: map[string]string{"kustomization.yaml": "resources: [apps.yaml, settings.yaml]\n"}, noBuilds: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tc.files["apps.yaml"], tc.files["settings.yaml"] = apps, settings
			for name, text := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d, err := paths.Resolve(dir, dir)
			if err != nil {
				t.Fatal(err)
			}
			opts := DefaultOptions()
			opts.Dir, opts.Decryption.Keys = d, []string{key.Identity}
			if !tc.noSnap {
				if opts.Snapshot, err = workspace.List(t.Context(), d.Root, workspace.Options{}); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.noBuilds {
				opts.Builds = &Builds{}
			}
			found := opts
			found.Substitute = map[string]string{"REGION": "found"}
			objs, _, err := FluxObjects(t.Context(), found)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) < 2 || objs[0].GetKind() != "Kustomization" {
				t.Fatalf("found %v", objs)
			}
			for i, region := range []string{"eu", "us"} {
				run := opts
				run.Substitute = map[string]string{"REGION": region}
				r, err := Render(t.Context(), run)
				if err != nil {
					t.Fatal(err)
				}
				if got := regionOf(t, r.Objects); got != region {
					t.Errorf("rendering %d: region %q, want its own %q", i, got, region)
				}
				if r.Sources[object.ID{Kind: "ConfigMap", Name: "settings"}] != "settings.yaml" || len(r.Inputs.Files) == 0 {
					t.Errorf("rendering %d: sources %v, inputs %v", i, r.Sources, r.Inputs)
				}
			}
			if got := regionOf(t, objs); got != "found" {
				t.Errorf("discovery's objects changed by the renderings: region %q", got)
			}
			if got := opts.Builds.Made(); got != tc.wantBuilt {
				t.Errorf("%d build(s), want %d", got, tc.wantBuilt)
			}
		})
	}
}

func regionOf(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == "ConfigMap" && u.GetName() == "settings" {
			region, _, _ := unstructured.NestedString(u.Object, "data", "region")
			return region
		}
	}
	t.Fatal("no ConfigMap settings")
	return ""
}
