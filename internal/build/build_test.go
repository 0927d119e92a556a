package build

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// copyFixture copies testdata/name into a temporary root, since Build may
// write a generated kustomization.yaml.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return root
}

// render prints objects as a YAML stream, each headed by its source.
func render(t *testing.T, res *Result) string {
	t.Helper()
	var b strings.Builder
	for i, u := range res.Objects {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString("# Source: " + res.Sources[object.IDOf(u)] + "\n")
		y, err := kyaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(y)
	}
	return b.String()
}

// golden compares got with testdata/name.golden, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update after checking):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

func build(t *testing.T, opts Options) (*Result, error) {
	t.Helper()
	return Build(context.Background(), opts)
}

func mustBuild(t *testing.T, opts Options) *Result {
	t.Helper()
	res, err := build(t, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wantErr fails unless err contains every fragment.
func wantErr(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", fragments)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not contain %q", err, f)
		}
	}
}

func find(t *testing.T, res *Result, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, u := range res.Objects {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	t.Fatalf("no %s %s in the output", kind, name)
	return nil
}

func TestBuildPlainDir(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "plain-dir")
	res := mustBuild(t, Options{Root: root, Path: root})
	golden(t, "plain-dir", render(t, res))
	if _, err := os.Stat(filepath.Join(root, "kustomization.yaml")); err != nil {
		t.Errorf("generated kustomization.yaml not written into the scratch copy: %v", err)
	}
}

func TestBuildPlainDirInvalidYAML(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "apps", "broken.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: [\n")
	_, err := build(t, Options{Root: root, Path: root})
	wantErr(t, err, "generating a kustomization for the repository root", "apps/broken.yaml: invalid YAML")
}

func TestBuildNestedKustomization(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "nested-kustomization")
	res := mustBuild(t, Options{Root: root, Path: root})
	golden(t, "nested-kustomization", render(t, res))
}

func overlayOptions(root string) Options {
	return Options{
		Root:            root,
		Path:            filepath.Join(root, "overlay"),
		TargetNamespace: "prod",
		Images: []Image{
			{Name: "nginx", NewName: "registry.example.com/nginx", NewTag: "1.27"},
			{Name: "busybox", Digest: "sha256:" + strings.Repeat("ab", 32)},
		},
		NamePrefix:  "team-",
		NameSuffix:  "-v1",
		Labels:      map[string]string{"team": "payments"},
		Annotations: map[string]string{"example.com/owner": "payments"},
	}
}

func TestBuildOverlayTransformations(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "overlay")
	res := mustBuild(t, overlayOptions(root))
	golden(t, "overlay", render(t, res))

	deploy := find(t, res, "Deployment", "team-web-v1")
	if deploy.GetNamespace() != "prod" || deploy.GetLabels()["team"] != "payments" || deploy.GetAnnotations()["example.com/owner"] != "payments" {
		t.Errorf("deployment metadata not transformed: %v", deploy.Object["metadata"])
	}
	selector, _, _ := unstructured.NestedStringMap(deploy.Object, "spec", "selector", "matchLabels")
	template, _, _ := unstructured.NestedStringMap(deploy.Object, "spec", "template", "metadata", "labels")
	podAnnotations, _, _ := unstructured.NestedStringMap(deploy.Object, "spec", "template", "metadata", "annotations")
	svcSelector, _, _ := unstructured.NestedStringMap(find(t, res, "Service", "team-web-v1").Object, "spec", "selector")
	for name, m := range map[string]map[string]string{"deployment selector": selector, "pod template labels": template, "service selector": svcSelector} {
		if diff := cmp.Diff(map[string]string{"app": "web"}, m); diff != "" {
			t.Errorf("%s changed (-want +got):\n%s", name, diff)
		}
	}
	if len(podAnnotations) != 0 {
		t.Errorf("pod template annotated (would restart pods): %v", podAnnotations)
	}
	for _, c := range []struct{ kind, name string }{
		{"CustomResourceDefinition", "widgets.example.com"},
		{"ClusterRole", "team-web-reader-v1"},
		{"Widget", "team-default-v1"},
	} {
		if ns := find(t, res, c.kind, c.name).GetNamespace(); ns != "" {
			t.Errorf("cluster-scoped %s %s got namespace %q", c.kind, c.name, ns)
		}
	}
}

func TestBuildRecordsSources(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "overlay")
	res := mustBuild(t, overlayOptions(root))
	want := map[string]string{
		"CustomResourceDefinition": "base/crd.yaml",
		"Widget":                   "base/widget.yaml",
		"ClusterRole":              "base/clusterrole.yaml",
		"Deployment":               "base/deployment.yaml",
		"Service":                  "base/service.yaml",
		"ConfigMap":                "overlay/kustomization.yaml", // generated
	}
	if len(res.Objects) != len(want) || len(res.Sources) != len(want) {
		t.Fatalf("got %d objects and %d sources, want %d of each", len(res.Objects), len(res.Sources), len(want))
	}
	got := map[string]string{}
	for _, u := range res.Objects {
		got[u.GetKind()] = res.Sources[object.IDOf(u)]
		for k := range u.GetAnnotations() {
			if strings.Contains(k, "config.kubernetes.io/") || strings.HasPrefix(k, "config.k8s.io/") {
				t.Errorf("%s keeps build annotation %s", object.IDOf(u), k)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sources by kind mismatch (-want +got):\n%s", diff)
	}
}

func TestBuildRefusesRemoteBase(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "remote-base")
	_, err := build(t, Options{Root: root, Path: root})
	wantErr(t, err, "kustomization.yaml", `"github.com/org/repo//deploy?ref=v1"`, "allow remote bases")
	if !errors.Is(err, ErrRemoteBase) {
		t.Errorf("%v is not ErrRemoteBase", err)
	}
}

// A configuration that refuses remote bases (Flux's lockdown,
// --no-remote-bases) refuses them whatever the run allows, saying why,
// and names no option of the run that would get past it.
func TestBuildRefusesRemoteBaseLockedDown(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "remote-base")
	_, err := build(t, Options{Root: root, Path: root, AllowRemoteBases: true, NoRemoteBases: "kustomize-controller --no-remote-bases=true (flux-system/kustomization.yaml:17)"})
	wantErr(t, err, "kustomization.yaml", `"github.com/org/repo//deploy?ref=v1"`, "is remote: remote bases are disabled: kustomize-controller --no-remote-bases=true (flux-system/kustomization.yaml:17)")
	if !errors.Is(err, ErrNoRemoteBases) || errors.Is(err, ErrRemoteBase) {
		t.Errorf("%v is not ErrNoRemoteBases alone", err)
	}
}

func TestBuildRefusesRemoteFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "kustomization.yaml"), "resources:\n- https://example.com/deploy.yaml\n")
	_, err := build(t, Options{Root: root, Path: root})
	wantErr(t, err, "kustomization.yaml", "https://example.com/deploy.yaml", "allow remote bases")
}

func TestIsRemote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		entry string
		want  bool
	}{
		{"github.com/org/repo//deploy?ref=v1", true},
		{"GitHub.com:org/repo", true},
		{"https://gitlab.com/org/repo.git//deploy", true},
		{"ssh://git@example.com/org/repo", true},
		{"git::https://example.com/org/repo", true},
		{"git@gitlab.com:org/repo.git", true},
		{"file:///etc/repo", true},
		{"../base", false},
		{"deploy.yaml", false},
		{"github.com.yaml", false},
	} {
		if got := remoteBase.MatchString(tc.entry); got != tc.want {
			t.Errorf("remote(%q) = %v, want %v", tc.entry, got, tc.want)
		}
	}
}

func TestBuildRefusesSymlinkOutOfRoot(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	writeFile(t, outside, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\n")
	for _, tc := range []struct {
		name    string
		fixture string
		remove  string // files to drop from the fixture first
	}{
		{name: "listed in a kustomization", fixture: "symlink-escape"},
		{name: "found by the generator", fixture: "symlink-escape", remove: "kustomization.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := copyFixture(t, tc.fixture)
			if tc.remove != "" {
				if err := os.Remove(filepath.Join(root, tc.remove)); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(outside, filepath.Join(root, "leak.yaml")); err != nil {
				t.Fatal(err)
			}
			_, err := build(t, Options{Root: root, Path: root})
			wantErr(t, err, "leak.yaml", "outside the root")
			var oe *outsideRootError
			if !errors.As(err, &oe) {
				t.Errorf("error %v is not an outsideRootError", err)
			}
		})
	}
}

// Flux's loading rules: a kustomization may read files anywhere inside
// the repository root (beside its own directory too), never outside it.
func TestBuildLoadingRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		path string
		want []string // object names built, or nil for an error
		err  []string
	}{
		{name: "resource beside the kustomization's directory", path: "apps/web", want: []string{"local", "shared"}},
		{name: "patch beside the kustomization's directory", path: "apps/patched", want: []string{"local"}},
		{name: "resource outside the root", path: "apps/escape", err: []string{"apps/escape/kustomization.yaml", `"../../../outside.yaml"`, "outside the root"}},
		{name: "patch outside the root", path: "apps/escape-patch", err: []string{"outside.yaml", "outside the root"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := copyFixture(t, "loading-rules")
			// A readable file just outside the root, which must never be read.
			writeFile(t, filepath.Join(filepath.Dir(root), "outside.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: outside\n")
			res, err := build(t, Options{Root: root, Path: filepath.Join(root, tc.path)})
			if tc.err != nil {
				wantErr(t, err, tc.err...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, u := range res.Objects {
				names = append(names, u.GetName())
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("objects built mismatch (-want +got):\n%s", diff)
			}
			if tc.name == "patch beside the kustomization's directory" {
				if v, _, _ := unstructured.NestedString(res.Objects[0].Object, "data", "patched"); v != "true" {
					t.Errorf("the patch from ../../common was not applied: %v", res.Objects[0].Object)
				}
			}
		})
	}
}

func TestBuildInvalidManifest(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "invalid-manifest")
	_, err := build(t, Options{Root: root, Path: root})
	wantErr(t, err, "configmap.yaml", "missing kind")
}

// An Argo CD hook Job names itself with generateName: the build says
// that apply needs a fixed name, not that the object is no object.
func TestBuildRefusesGenerateName(t *testing.T) {
	t.Parallel()
	const job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: hook-\n"
	const want = `metadata.generateName "hook-" without metadata.name: apply needs a fixed name, and generateName cannot be applied declaratively`
	plain := t.TempDir()
	writeFile(t, filepath.Join(plain, "hook.yaml"), job)
	_, err := build(t, Options{Root: plain, Path: plain})
	wantErr(t, err, "hook.yaml: document 1: "+want)

	listed := t.TempDir()
	writeFile(t, filepath.Join(listed, "kustomization.yaml"), "resources: [hook.yaml]\n")
	writeFile(t, filepath.Join(listed, "hook.yaml"), job)
	_, err = build(t, Options{Root: listed, Path: listed})
	wantErr(t, err, "hook.yaml (listed in kustomization.yaml): document 1: "+want)
}

func TestBuildRejectsBadOptions(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "plain-dir")
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{name: "relative path", opts: Options{Root: root, Path: "plain-dir"}, want: "must be absolute"},
		{name: "path is a file", opts: Options{Root: root, Path: filepath.Join(root, "deployment.yaml")}, want: "is not a directory"},
		{name: "path outside root", opts: Options{Root: filepath.Join(root, "config"), Path: root}, want: "outside the root"},
		{name: "namespace", opts: Options{Root: root, Path: root, TargetNamespace: "Prod"}, want: `namespace "Prod"`},
		{name: "label value", opts: Options{Root: root, Path: root, Labels: map[string]string{"team": "a b"}}, want: `label "team" value "a b"`},
		{name: "annotation key", opts: Options{Root: root, Path: root, Annotations: map[string]string{"a b": "x"}}, want: `annotation "a b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := build(t, tc.opts)
			wantErr(t, err, tc.want)
		})
	}
}

func TestBuildCanceled(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "plain-dir")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Build(ctx, Options{Root: root, Path: root}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBuildKeepsRootOnlySettings(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "kustomization.yaml"),
		"resources: [configmap.yaml, namespace.yaml]\nsortOptions:\n  order: legacy\nbuildMetadata: [managedByLabel]\n")
	writeFile(t, filepath.Join(root, "configmap.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n")
	writeFile(t, filepath.Join(root, "namespace.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: app\n")
	res := mustBuild(t, Options{Root: root, Path: root})
	if got := res.Objects[0].GetKind(); got != "Namespace" {
		t.Errorf("first object is a %s: the root's sortOptions were ignored", got)
	}
	if _, ok := res.Objects[0].GetLabels()["app.kubernetes.io/managed-by"]; !ok {
		t.Errorf("no managed-by label: the root's buildMetadata was ignored")
	}
}

func TestBuildInvalidKustomization(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "apps", "kustomization.yaml"), "resourcez: [configmap.yaml]\n")
	_, err := build(t, Options{Root: root, Path: filepath.Join(root, "apps")})
	wantErr(t, err, "apps/kustomization.yaml", "resourcez")
}

// A plain directory: a manifest whose kind is misspelled is reported (not
// as listed in the kustomization generated for the directory), not
// skipped as if it were Helm values (the run would prune its object); a
// directory with no manifest at all says so and names what it left out.
func TestBuildPlainDirNotManifests(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "Chart.yaml"), "apiVersion: v2\nname: web\nversion: 1.0.0\n")
	writeFile(t, filepath.Join(root, "values.yaml"), "replicaCount: 2\n")
	_, err := build(t, Options{Root: root, Path: root})
	wantErr(t, err, "generating a kustomization for the repository root: no Kubernetes manifests", "left out as not manifests: Chart.yaml, values.yaml")

	writeFile(t, filepath.Join(root, "settings.yaml"), "apiVersion: v1\nknd: ConfigMap\nmetadata:\n  name: settings\n")
	_, err = build(t, Options{Root: root, Path: root})
	wantErr(t, err, "settings.yaml: document 1: not a Kubernetes object: missing kind")
	if strings.Contains(err.Error(), "listed in") {
		t.Errorf("the error names the kustomization generated for the directory: %v", err)
	}

	writeFile(t, filepath.Join(root, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n")
	res := mustBuild(t, Options{Root: root, Path: root})
	if len(res.Objects) != 1 {
		t.Errorf("built %d objects, want the ConfigMap alone", len(res.Objects))
	}
}

// An object declared twice, or a resource that is missing, is reported
// once: not again as "not a directory", which kustomize also tried.
func TestBuildResourceErrorsSaidOnce(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
	writeFile(t, filepath.Join(root, "a.yaml"), cm)
	writeFile(t, filepath.Join(root, "b.yaml"), cm)
	writeFile(t, filepath.Join(root, "kustomization.yaml"), "resources:\n- a.yaml\n- b.yaml\n")
	_, err := build(t, Options{Root: root, Path: root})
	wantErr(t, err, "merging resources from 'b.yaml': may not add resource with an already registered id: ConfigMap.v1.[noGrp]/settings.[noNs]")
	if strings.Contains(err.Error(), "directory") {
		t.Errorf("the error says the file is not a directory: %v", err)
	}

	writeFile(t, filepath.Join(root, "kustomization.yaml"), "resources:\n- a.yaml\n- missing.yaml\n")
	_, err = build(t, Options{Root: root, Path: root})
	wantErr(t, err, `kustomization.yaml: resources entry "missing.yaml": missing.yaml does not exist`)
	if strings.Contains(err.Error(), "evalsymlink") {
		t.Errorf("the error says the same thing twice: %v", err)
	}
}
