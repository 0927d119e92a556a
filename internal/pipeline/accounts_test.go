package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// release is a HelmRelease in namespace ns naming account (none: "").
func release(ns, name, account string) *unstructured.Unstructured {
	u := obj("helm.toolkit.fluxcd.io/v2", "HelmRelease", ns, name)
	spec := map[string]any{"interval": "5m", "chart": map[string]any{"spec": map[string]any{"chart": "web", "sourceRef": map[string]any{"kind": "HelmRepository", "name": "charts"}}}}
	if account != "" {
		spec["serviceAccountName"] = account
	}
	u.Object["spec"] = spec
	return u
}

// A HelmRelease is installed as its spec.serviceAccountName, in its own
// namespace, as helm-controller installs it; a unit applying as anyone
// else refuses it, naming the release, where it is written, the field,
// both identities and the way out. Without the field, or naming the
// unit's own account, it is the unit's.
func TestCheckReleaseAccounts(t *testing.T) {
	tenant := identity{Namespace: "team-a", Name: "team-a"}
	for _, tc := range []struct {
		name     string
		objs     []*unstructured.Unstructured
		as       identity
		inConfig bool
		// want are the releases refused, by name; says, what the message
		// says besides.
		want []string
		says []string
	}{
		{name: "no account, unit as the caller", objs: []*unstructured.Unstructured{release("team-a", "web", "")}},
		{name: "no account, unit as an account", objs: []*unstructured.Unstructured{release("team-a", "web", "")}, as: identity{Namespace: "flux-system", Name: "platform"}},
		{name: "the unit's own account", objs: []*unstructured.Unstructured{release("team-a", "web", "team-a")}, as: tenant, inConfig: true},
		{name: "namespace not known yet, same name", objs: []*unstructured.Unstructured{release("team-a", "web", "team-a")}, as: identity{Name: "team-a"}},
		{name: "not a HelmRelease", objs: []*unstructured.Unstructured{configMap("team-a")}, as: tenant},
		{
			name: "an account, unit as the caller", objs: []*unstructured.Unstructured{configMap("settings"), release("team-a", "web", "team-a")},
			want: []string{"web"},
			says: []string{
				"HelmRelease team-a/web (web.yaml:7): spec.serviceAccountName team-a:",
				"installs the release as system:serviceaccount:team-a:team-a",
				"this unit applies as the caller's own credentials (no service account)",
				"run it with service-account team-a and inventory-namespace team-a",
				"or remove the HelmRelease's serviceAccountName",
			},
		},
		{
			name: "same name, another namespace", objs: []*unstructured.Unstructured{release("team-a", "web", "team-a")},
			as: identity{Namespace: "flux-system", Name: "team-a"}, inConfig: true,
			want: []string{"web"},
			says: []string{
				"applies as system:serviceaccount:flux-system:team-a",
				"set the Kustomization's spec.serviceAccountName to team-a, with the Kustomization in namespace team-a",
			},
		},
		{
			name: "another name, same namespace", objs: []*unstructured.Unstructured{release("team-a", "web", "admin")},
			as: tenant, inConfig: true, want: []string{"web"},
			says: []string{"installs the release as system:serviceaccount:team-a:admin", "applies as system:serviceaccount:team-a:team-a"},
		},
		{
			name: "namespace not known yet, another name", objs: []*unstructured.Unstructured{release("team-a", "web", "admin")},
			as: identity{Name: "team-a"}, want: []string{"web"}, says: []string{"applies as service account team-a of the inventory namespace"},
		},
		{
			name: "every release refused at once",
			objs: []*unstructured.Unstructured{release("team-a", "web", "admin"), release("team-a", "ok", "team-a"), release("team-b", "api", "team-b")},
			as:   tenant, want: []string{"web", "api"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sources := map[object.ID]string{}
			for _, u := range tc.objs {
				sources[object.IDOf(u)] = u.GetName() + ".yaml"
			}
			lineOf := func(file string, id object.ID) int {
				if file != id.Name+".yaml" {
					t.Errorf("asked the line of %s in %s", id, file)
				}
				return 7
			}
			err := checkReleaseAccounts(tc.objs, sources, tc.as, tc.inConfig, lineOf)
			var refused []string
			for _, e := range joined(err) {
				var ae *accountError
				if !errors.As(e, &ae) {
					t.Fatalf("%T: %v", e, e)
				}
				refused = append(refused, ae.Release.Name)
			}
			if strings.Join(refused, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("refused %v, want %v: %v", refused, tc.want, err)
			}
			for i, fe := range build.FileErrors(err) {
				if fe.File != tc.want[i]+".yaml" || fe.Line != 7 {
					t.Errorf("annotated at %s:%d, want %s.yaml:7", fe.File, fe.Line, tc.want[i])
				}
			}
			if n := len(build.FileErrors(err)); n != len(tc.want) {
				t.Errorf("%d file error(s) for %d refusal(s)", n, len(tc.want))
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("the error does not say %q:\n%v", s, err)
				}
			}
		})
	}
}

// joined are the errors err joins (err itself when it joins none).
func joined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// accountUnit writes a unit holding a HelmRepository at url and, in the
// same file after a ConfigMap, a HelmRelease of the web chart naming
// account, all in namespace team-a; it returns the unit's directory.
func accountUnit(t *testing.T, url, account string) paths.Dir {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"kustomization.yaml": "resources: [repository.yaml, app.yaml]\n",
		"repository.yaml":    "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: team-a\nspec:\n  interval: 1h\n  url: " + url + "\n",
		"app.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team-a\n---\n" +
			"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: team-a\nspec:\n  interval: 5m\n  serviceAccountName: " + account +
			"\n  chart:\n    spec:\n      chart: web\n      version: \"1.0.0\"\n      sourceRef: {kind: HelmRepository, name: charts}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := paths.Resolve(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Rendering refuses a HelmRelease of another account than the unit's
// before its chart is fetched (the repository is never asked), naming
// its file and line; the unit's own account renders the chart; with
// helm-controller (no chart rendering) the HelmRelease is applied as it
// is, for the controller to install as its account.
func TestRenderRefusesAReleaseOfAnotherAccount(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	opts := DefaultOptions()
	opts.Dir = accountUnit(t, repo.URL, "team-a")
	opts.Charts = &helm.Options{Fetcher: &helm.Fetcher{}}
	opts.ServiceAccount, opts.ServiceAccountNamespace = "platform", "team-a"

	for name, render := range map[string]func(*testing.T, Options) (*Rendered, error){
		"Render":       func(t *testing.T, o Options) (*Rendered, error) { return Render(t.Context(), o) },
		"RenderSealed": func(t *testing.T, o Options) (*Rendered, error) { return RenderSealed(t.Context(), o) },
	} {
		_, err := render(t, opts)
		if err == nil || !strings.Contains(err.Error(), "HelmRelease team-a/web (app.yaml:7): spec.serviceAccountName team-a:") ||
			!strings.Contains(err.Error(), "this unit applies as system:serviceaccount:team-a:platform") {
			t.Errorf("%s of another account's release: %v", name, err)
		}
	}
	if n := repo.Requests("index.yaml"); n != 0 {
		t.Errorf("the chart repository was asked %d time(s) for a refused release", n)
	}

	opts.ServiceAccount = "team-a"
	r, err := Render(t.Context(), opts)
	if err != nil {
		t.Fatalf("the unit's own account: %v", err)
	}
	if len(r.Charts) != 1 || len(r.Charts[0].Objects) == 0 {
		t.Errorf("the unit's own account's release rendered %+v", r.Charts)
	}

	opts.ServiceAccount, opts.Charts = "platform", nil
	if r, err = Render(t.Context(), opts); err != nil || !hasKind(r.Objects, "HelmRelease") {
		t.Errorf("with helm-controller: %v", err)
	}
}

func hasKind(objs []*unstructured.Unstructured, kind string) bool {
	for _, u := range objs {
		if u.GetKind() == kind {
			return true
		}
	}
	return false
}

// An apply renders with the identity it applies as: the service account
// in the inventory namespace when the unit names no other (as connect
// impersonates it), so a release of that account is the unit's.
func TestRunRendersWithTheIdentityItAppliesAs(t *testing.T) {
	f := newFixture(t, nil, configMap("settings"))
	var seen []identity
	f.renderHook = func(o Options) { seen = append(seen, appliesAs(o)) }
	opts := DefaultOptions()
	opts.ServiceAccount = "deployer"
	if _, err := f.run(result.ModeDiff, opts); err != nil {
		t.Fatal(err)
	}
	opts.ServiceAccountNamespace = "team-a"
	if _, err := f.run(result.ModeDiff, opts); err != nil {
		t.Fatal(err)
	}
	want := []identity{{Namespace: "deploy", Name: "deployer"}, {Namespace: "team-a", Name: "deployer"}}
	if len(seen) != 2 || seen[0] != want[0] || seen[1] != want[1] {
		t.Errorf("rendered as %v, want %v", seen, want)
	}
}
