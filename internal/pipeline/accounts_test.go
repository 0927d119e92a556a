package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Where, and as whom, a release's objects are applied, as helm-controller
// installs it: its spec.serviceAccountName, impersonated in the
// HelmRelease's namespace (not its targetNamespace), on spec.kubeConfig's
// cluster when given; without an account, as the unit (the identity
// that applied the HelmRelease, never more) on the unit's cluster, and
// as the kubeconfig's own credentials on another. A release of the
// unit's own identity and cluster is the unit's.
func TestReleaseTarget(t *testing.T) {
	tenant := identity{Namespace: "team-a", Name: "team-a"}
	spoke := &helm.KubeConfig{SecretName: "spoke", Key: "value"}
	for _, tc := range []struct {
		name      string
		namespace string
		account   string
		kc        *helm.KubeConfig
		unit      identity
		want      target
	}{
		{name: "no account, unit as the caller", namespace: "team-a"},
		{name: "no account, unit as an account", namespace: "team-a", unit: identity{Namespace: "flux-system", Name: "platform"}},
		{name: "the unit's own account", namespace: "team-a", account: "team-a", unit: tenant},
		{name: "the unit's account, its namespace not known yet", namespace: "team-a", account: "team-a", unit: identity{Name: "team-a"}},
		{name: "an account, unit as the caller", namespace: "team-a", account: "dev-team",
			want: target{Account: identity{Namespace: "team-a", Name: "dev-team"}}},
		{name: "same name, another namespace", namespace: "team-a", account: "team-a", unit: identity{Namespace: "flux-system", Name: "team-a"},
			want: target{Account: tenant}},
		{name: "another name, same namespace", namespace: "team-a", account: "admin", unit: tenant,
			want: target{Account: identity{Namespace: "team-a", Name: "admin"}}},
		{name: "another cluster, its kubeconfig's credentials", namespace: "apps", kc: spoke, unit: tenant,
			want: target{Cluster: "spoke"}},
		{name: "another cluster, as an account there", namespace: "apps", account: "flux-cluster-admin", kc: spoke, unit: identity{Namespace: "apps", Name: "flux-cluster-admin"},
			want: target{Cluster: "spoke", Account: identity{Namespace: "apps", Name: "flux-cluster-admin"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := releaseTarget(tc.namespace, tc.account, tc.kc, tc.unit)
			if got != tc.want {
				t.Errorf("target %+v, want %+v", got, tc.want)
			}
			if e := onTarget(inventory.Entry{}, got); entryTarget(e) != got {
				t.Errorf("recorded as %+v, read back as %+v", e, entryTarget(e))
			}
		})
	}
}

// What becomes of a release of another account: an account that exists
// is dry-run as itself, or as the unit when the unit holds RBAC objects
// (its rights may come with them); one the unit creates is dry-run as
// the unit and applied as itself after the unit's own objects; one that
// does not exist and that the unit does not create (on this cluster) is
// an error naming it.
func TestAccountRule(t *testing.T) {
	devTeam := identity{Namespace: "dev-team", Name: "dev-team"}
	account := func(ns, name string) *unstructured.Unstructured { return obj("v1", "ServiceAccount", ns, name) }
	binding := obj("rbac.authorization.k8s.io/v1", "RoleBinding", "dev-team", "dev-team-admin")
	for _, tc := range []struct {
		name        string
		t           target
		exists      bool
		own         []*unstructured.Unstructured
		wantStandIn bool
		wantErr     string
	}{
		{name: "no account", t: target{Cluster: "spoke"}},
		{name: "an account that exists", t: target{Account: devTeam}, exists: true, own: []*unstructured.Unstructured{configMap("settings")}},
		{name: "an account that exists, the unit gives rights", t: target{Account: devTeam}, exists: true, own: []*unstructured.Unstructured{binding}, wantStandIn: true},
		{name: "an account the unit creates", t: target{Account: devTeam}, own: []*unstructured.Unstructured{account("dev-team", "dev-team"), binding}, wantStandIn: true},
		{name: "an account nobody creates", t: target{Account: devTeam}, own: []*unstructured.Unstructured{account("dev-team", "other"), binding},
			wantErr: "spec.serviceAccountName: ServiceAccount dev-team/dev-team does not exist, and this unit does not create it: helm-controller installs the release as system:serviceaccount:dev-team:dev-team"},
		{name: "an account of the same name elsewhere", t: target{Account: devTeam}, own: []*unstructured.Unstructured{account("flux-system", "dev-team")},
			wantErr: "ServiceAccount dev-team/dev-team does not exist"},
		{name: "an account on another cluster", t: target{Cluster: "spoke", Account: devTeam}, own: []*unstructured.Unstructured{account("dev-team", "dev-team")},
			wantErr: "ServiceAccount dev-team/dev-team does not exist on the cluster of kubeConfig Secret spoke, and this unit does not create it"},
		{name: "an account on another cluster, rights given here", t: target{Cluster: "spoke", Account: devTeam}, exists: true, own: []*unstructured.Unstructured{binding}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			standIn, err := accountRule(tc.t, tc.exists, tc.own, "spec.serviceAccountName")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || standIn != tc.wantStandIn {
				t.Errorf("stand-in %v, %v; want %v", standIn, err, tc.wantStandIn)
			}
		})
	}
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

// Rendering a HelmRelease of another account than the unit's renders
// its chart (it is applied as that account, see route), with no cluster
// to connect to: Render and RenderSealed alike; with helm-controller (no
// chart rendering) the HelmRelease is applied as it is, for the
// controller to install as its account.
func TestRenderRendersAReleaseOfAnotherAccount(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	opts := DefaultOptions()
	opts.Dir = accountUnit(t, repo.URL, "team-a")
	opts.Charts = &helm.Options{Fetcher: &helm.Fetcher{}}
	opts.ServiceAccount, opts.ServiceAccountNamespace = "platform", "team-a"

	for name, render := range map[string]func(*testing.T, Options) (*Rendered, error){
		"Render":       func(t *testing.T, o Options) (*Rendered, error) { return Render(t.Context(), o) },
		"RenderSealed": func(t *testing.T, o Options) (*Rendered, error) { return RenderSealed(t.Context(), o) },
	} {
		r, err := render(t, opts)
		if err != nil || len(r.Charts) != 1 || len(r.Charts[0].Objects) == 0 || r.Charts[0].ServiceAccountName != "team-a" {
			t.Errorf("%s of another account's release: %v", name, err)
		}
	}

	opts.Charts = nil
	if r, err := Render(t.Context(), opts); err != nil || !hasKind(r.Objects, "HelmRelease") {
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
	f.renderHook = func(o Options) {
		seen = append(seen, identity{Namespace: o.ServiceAccountNamespace, Name: o.ServiceAccount})
	}
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
