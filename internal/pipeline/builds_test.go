package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/google/go-cmp/cmp"
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

// The rendering that found a unit's Flux objects (FluxObjects) is the one
// the unit's own continues from, when it substitutes the same values and
// there is nothing to decrypt: the unit is rendered once, to the objects
// a rendering of its own makes, its Secrets' values masked all the same.
// Values of its own, a SOPS-encrypted manifest or generator file make it
// render again (the build shared unless a file was rewritten); taken
// once, the next rendering is its own.
func TestUnitIsRenderedOnce(t *testing.T) {
	key, err := sopstest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	encFile, err := sopstest.Encrypt(key.Recipient, []byte("token: s3cret\n"), formats.Yaml, "")
	if err != nil {
		t.Fatal(err)
	}
	encSecret, err := sopstest.Encrypt(key.Recipient, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: sealed\nstringData:\n  token: sops-plaintext\n"), formats.Yaml, "")
	if err != nil {
		t.Fatal(err)
	}
	const apps = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  path: ./apps\n  prune: true\n  interval: 1h\n  sourceRef: {kind: GitRepository, name: flux-system}\n"
	const settings = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  region: ${REGION}\n"
	const secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: plain\nstringData:\n  password: plain-value-in-git\n"
	const plain = "resources: [apps.yaml, settings.yaml, secret.yaml]\n"
	for _, tc := range []struct {
		name          string
		files         map[string]string
		region        string // the run's value; discovery's is "eu"
		renderings    int    // the unit's own, after discovery's
		renders, made int
	}{
		{name: "the same values, nothing to decrypt: rendered once", files: map[string]string{"kustomization.yaml": plain}, region: "eu", renderings: 1, renders: 1, made: 1},
		{name: "taken once: the next rendering is its own", files: map[string]string{"kustomization.yaml": plain}, region: "eu", renderings: 2, renders: 2, made: 2},
		{name: "values of its own: rendered again from the same build", files: map[string]string{"kustomization.yaml": plain}, region: "us", renderings: 1, renders: 2, made: 1},
		{name: "an encrypted manifest: rendered again to decrypt it", files: map[string]string{
			"kustomization.yaml": "resources: [apps.yaml, settings.yaml, secret.yaml, sealed.yaml]\n", "sealed.yaml": string(encSecret),
		}, region: "eu", renderings: 1, renders: 2, made: 1},
		{name: "an encrypted generator file: rendered and built again", files: map[string]string{
			"kustomization.yaml": plain + "secretGenerator:\n- name: creds\n  files: [creds.yaml=creds.enc.yaml]\n", "creds.enc.yaml": string(encFile),
		}, region: "eu", renderings: 1, renders: 2, made: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tc.files["apps.yaml"], tc.files["settings.yaml"], tc.files["secret.yaml"] = apps, settings, secret
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
			opts.Name, opts.Dir, opts.Decryption.Keys = "web", d, []string{key.Identity}
			if opts.Snapshot, err = workspace.List(t.Context(), d.Root, workspace.Options{}); err != nil {
				t.Fatal(err)
			}
			own := opts // renders on its own, for comparison
			opts.Builds = &Builds{}
			var masked []string
			opts.Mask = func(v []string) { masked = append(masked, v...) }
			found := opts
			found.Substitute = map[string]string{"REGION": "eu"}
			if _, _, err := FluxObjects(t.Context(), found); err != nil {
				t.Fatal(err)
			}
			for i := range tc.renderings {
				run := opts
				run.Substitute = map[string]string{"REGION": tc.region}
				got, err := Render(t.Context(), run)
				if err != nil {
					t.Fatal(err)
				}
				own.Substitute = run.Substitute
				want, err := Render(t.Context(), own)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.Objects, got.Objects); diff != "" {
					t.Errorf("rendering %d (-its own +continued):\n%s", i, diff)
				}
				if diff := cmp.Diff(want.Sources, got.Sources); diff != "" || !slices.Equal(want.Inputs.Files, got.Inputs.Files) {
					t.Errorf("rendering %d: sources (-its own +continued):\n%s, inputs %v, want %v", i, diff, got.Inputs.Files, want.Inputs.Files)
				}
			}
			if !slices.Contains(masked, "plain-value-in-git") {
				t.Error("the Secret's value was not masked")
			}
			if got := opts.Builds.Renders(); got["web"] != tc.renders {
				t.Errorf("rendered %d time(s), want %d", got["web"], tc.renders)
			}
			if got := opts.Builds.Made(); got != tc.made {
				t.Errorf("%d build(s), want %d", got, tc.made)
			}
		})
	}
}
