package build

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fluxApp is a kustomization like those Flux Kustomizations point at: a
// Deployment whose images entry renames web, a sidecar image, and a
// component beside it.
func fluxApp(t *testing.T) string {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "app/kustomization.yaml"), `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [deployment.yaml, service.yaml]
images:
- name: web
  newName: registry.example/web
  newTag: "1.0"
- name: proxy
  newTag: "3.1"
`)
	writeFile(t, filepath.Join(root, "app/deployment.yaml"), `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {tier: front}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: web}
      - {name: proxy, image: proxy}
`)
	writeFile(t, filepath.Join(root, "app/service.yaml"), "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80}]\n")
	writeFile(t, filepath.Join(root, "components/team/kustomization.yaml"), `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
labels:
- pairs: {team: shop}
`)
	return root
}

func containerImages(u *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	var out []string
	for _, c := range cs {
		out = append(out, c.(map[string]any)["image"].(string))
	}
	return strings.Join(out, ",")
}

func TestBuildFluxSpecFields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opts  func(o *Options)
		check func(t *testing.T, res *Result)
		err   string
	}{
		{name: "an image override replaces the kustomization's entry of that name, as Flux does",
			opts: func(o *Options) { o.Images = []Image{{Name: "web", NewTag: "2.0"}} },
			check: func(t *testing.T, res *Result) {
				if got := containerImages(find(t, res, "Deployment", "web")); got != "web:2.0,proxy:3.1" {
					t.Errorf("images %s, want web:2.0 (the renaming entry replaced) and proxy:3.1 (kept)", got)
				}
			}},
		{name: "a patch with a target",
			opts: func(o *Options) {
				o.Patches = []Patch{{
					Patch:  "- op: add\n  path: /metadata/annotations\n  value: {patched: json6902}\n",
					Target: &Target{Kind: "Deployment", LabelSelector: "tier=front"},
				}}
			},
			check: func(t *testing.T, res *Result) {
				if got := find(t, res, "Deployment", "web").GetAnnotations()["patched"]; got != "json6902" {
					t.Errorf("the targeted patch was not applied: %q", got)
				}
				if got := find(t, res, "Service", "web").GetAnnotations()["patched"]; got != "" {
					t.Errorf("the patch reached an object its target does not select")
				}
			}},
		{name: "a strategic merge patch naming its object",
			opts: func(o *Options) {
				o.Patches = []Patch{{Patch: "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  type: NodePort\n"}}
			},
			check: func(t *testing.T, res *Result) {
				if got, _, _ := unstructured.NestedString(find(t, res, "Service", "web").Object, "spec", "type"); got != "NodePort" {
					t.Errorf("spec.type %q", got)
				}
			}},
		{name: "a component relative to the path",
			opts: func(o *Options) { o.Components = []string{"../components/team"} },
			check: func(t *testing.T, res *Result) {
				for _, u := range res.Objects {
					if u.GetLabels()["team"] != "shop" {
						t.Errorf("%s/%s lacks the component's label: %v", u.GetKind(), u.GetName(), u.GetLabels())
					}
				}
			}},
		{name: "a missing component is an error",
			opts: func(o *Options) { o.Components = []string{"../components/gone"} },
			err:  "components/gone"},
		{name: "a missing component is skipped when asked",
			opts: func(o *Options) {
				o.Components, o.IgnoreMissingComponents = []string{"../components/gone", "../components/team"}, true
			},
			check: func(t *testing.T, res *Result) { _ = find(t, res, "Service", "web") }},
		{name: "a component outside the root",
			opts: func(o *Options) { o.Components = []string{"../../elsewhere"} },
			err:  "outside the root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := fluxApp(t)
			opts := Options{Root: root, Path: filepath.Join(root, "app")}
			tc.opts(&opts)
			res, err := build(t, opts)
			if tc.err != "" {
				wantErr(t, err, tc.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, res)
		})
	}
}

// A plain directory large enough to be built in chunks is built whole when
// a patch must see every object.
func TestPatchesBuildPlainDirectoriesWhole(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for i := range defaultChunkSize + 5 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("cm-%03d.yaml", i)), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d}\n", i))
	}
	res := mustBuild(t, Options{Root: root, Path: root, Patches: []Patch{{Patch: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-000}\ndata: {patched: \"yes\"}\n"}}})
	if got, _, _ := unstructured.NestedString(find(t, res, "ConfigMap", "cm-000").Object, "data", "patched"); got != "yes" || len(res.Objects) != defaultChunkSize+5 {
		t.Errorf("patched %q, %d objects", got, len(res.Objects))
	}
}
