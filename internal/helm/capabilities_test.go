package helm_test

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

const capsChart = "  chart:\n    spec:\n      chart: caps\n      version: \"0.1.0\"\n      sourceRef: {kind: HelmRepository, name: charts}\n"

const widgetsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.charts.example.com}
spec:
  group: charts.example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true}
  - {name: v1alpha1, served: false, storage: false}
`

// Without a cluster, templates see the kube-version setting and, besides
// Helm's default API versions, those of the configuration's CRDs: a chart
// branching on .Capabilities renders as it will on the cluster. Without
// either, it sees Helm's defaults, as `helm template` gives.
func TestOfflineCapabilities(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("caps"), Version: "0.1.0"})
	crd, _ := objs(t, widgetsCRD)
	for _, tc := range []struct {
		name        string
		kubeVersion string
		crds        []*unstructured.Unstructured
		want        map[string]string
	}{
		{name: "Helm's defaults", want: map[string]string{"widgets": "false", "widgetKind": "false", "clusterIssuers": "false"}},
		{name: "an old Kubernetes", kubeVersion: "1.29", want: map[string]string{"kubeVersion": "v1.29", "api": "legacy", "widgets": "false", "widgetKind": "false", "clusterIssuers": "false"}},
		{name: "a new one and the configuration's CRDs", kubeVersion: "v1.37.2", crds: crd,
			want: map[string]string{"kubeVersion": "v1.37.2", "api": "modern", "widgets": "true", "widgetKind": "true", "clusterIssuers": "false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, sources := objs(t, repository(repo.URL, ""), release(capsChart))
			caps := helm.OfflineCapabilities(tc.kubeVersion, tc.crds)
			out, err := helm.Expand(t.Context(), in, sources, helm.Options{Fetcher: &helm.Fetcher{CacheDir: t.TempDir()}, Capabilities: caps})
			if err != nil {
				t.Fatal(err)
			}
			data, _, _ := unstructured.NestedStringMap(byKind(out.Objects, "ConfigMap").Object, "data")
			if tc.want["kubeVersion"] == "" {
				// Helm's, which depends on the build (v1.20 in tests).
				delete(data, "kubeVersion")
				delete(data, "api")
			}
			if diff := cmp.Diff(tc.want, data); diff != "" {
				t.Errorf("the ConfigMap's data (-want +got):\n%s", diff)
			}
		})
	}
	if got := helm.OfflineCapabilities("", crd).APIVersions; !cmp.Equal(got, []string{"charts.example.com/v1", "charts.example.com/v1/Widget"}) {
		t.Errorf("API versions of a CRD with an unserved version: %q", got)
	}
	for v, ok := range map[string]bool{"": true, "v1.37.2": true, "1.30": true, "v1.33.4-gke.1245000": true, "latest": false, "1": false} {
		if err := helm.ValidateKubeVersion(v); (err == nil) != ok {
			t.Errorf("ValidateKubeVersion(%q): %v", v, err)
		}
	}
}

// Templates' lookup reads through Options.LookupObject: a ConfigMap's
// value lands in the rendered object, and a Secret's value is known as
// secret and its field recorded, as values from Secrets are. Without a
// cluster to read (no LookupObject), lookup finds nothing, as in `helm
// template`.
func TestExpandLookup(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("caps"), Version: "0.1.0"})
	var asked []string
	cluster := func(_ context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
		asked = append(asked, strings.Join([]string{apiVersion, kind, namespace, name}, " "))
		switch kind + "/" + name {
		case "ConfigMap/colours":
			return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"colour": "blue"}}, nil
		case "Secret/token":
			return map[string]any{"apiVersion": "v1", "kind": "Secret", "data": map[string]any{"token": base64.StdEncoding.EncodeToString([]byte("tok-from-lookup-91"))}}, nil
		}
		return map[string]any{}, nil
	}
	values := "  values:\n    lookupConfigMap: colours\n    lookupSecret: token\n"
	for _, tc := range []struct {
		name   string
		lookup helm.ObjectLookup
		want   map[string]string
		secret bool
	}{
		{name: "a cluster", lookup: cluster, want: map[string]string{"looked-up": "blue", "token": "tok-from-lookup-91"}, secret: true},
		{name: "no cluster", want: map[string]string{"looked-up": "none", "token": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, sources := objs(t, repository(repo.URL, ""), release(capsChart+values))
			out, err := helm.Expand(t.Context(), in, sources, helm.Options{Fetcher: &helm.Fetcher{CacheDir: t.TempDir()}, LookupObject: tc.lookup})
			if err != nil {
				t.Fatal(err)
			}
			cm := byKind(out.Objects, "ConfigMap")
			data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
			for k, v := range tc.want {
				if data[k] != v {
					t.Errorf("data.%s = %q, want %q", k, data[k], v)
				}
			}
			if out.Charts[0].LookedUp != (tc.lookup != nil) {
				t.Errorf("LookedUp %v: a release that read the cluster must not be taken for unchanged", out.Charts[0].LookedUp)
			}
			f := out.SecretFields[object.IDOf(cm)]
			recorded := f != nil && slices.ContainsFunc(f.Fields, func(p object.FieldPath) bool { return strings.Join(p, ".") == "data.token" })
			if recorded != tc.secret || slices.Contains(out.Secrets, "tok-from-lookup-91") != tc.secret {
				t.Errorf("the looked-up Secret's value: field recorded %v, secret %v; want %v", recorded, out.Secrets, tc.secret)
			}
		})
	}
	if want := []string{"v1 ConfigMap apps colours", "v1 Secret apps token"}; !cmp.Equal(asked, want) {
		t.Errorf("lookups %q, want %q", asked, want)
	}
}

// A lookup that fails fails the release, naming it.
func TestExpandLookupFails(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("caps"), Version: "0.1.0"})
	in, sources := objs(t, repository(repo.URL, ""), release(capsChart+"  values:\n    lookupConfigMap: colours\n"))
	_, err := helm.Expand(t.Context(), in, sources, helm.Options{Fetcher: &helm.Fetcher{CacheDir: t.TempDir()},
		LookupObject: func(context.Context, string, string, string, string) (map[string]any, error) {
			return map[string]any{}, errors.New("configmaps \"colours\" is forbidden")
		}})
	if err == nil || !strings.Contains(err.Error(), "HelmRelease apps/web") || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("a failed lookup: %v", err)
	}
}

// A release installed to another cluster, or as another identity, sees
// what Options.Cluster gives for it: that cluster's capabilities and a
// lookup as that identity, not the unit's; a release for which it gives
// none sees the unit's. Failing to give one fails the release.
func TestExpandReleaseView(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("caps"), Version: "0.1.0"})
	unitLookup := func(context.Context, string, string, string, string) (map[string]any, error) {
		return map[string]any{"data": map[string]any{"colour": "the unit's"}}, nil
	}
	spokeLookup := func(context.Context, string, string, string, string) (map[string]any, error) {
		return map[string]any{"data": map[string]any{"colour": "the spoke's"}}, nil
	}
	var asked []string
	view := func(_ context.Context, rel *helm.Release) (*helm.View, error) {
		asked = append(asked, rel.Namespace+"/"+rel.Name)
		if rel.KubeConfig == nil {
			return nil, nil
		}
		if rel.KubeConfig.SecretName != "spoke" || rel.ServiceAccountName != "deployer" {
			return nil, errors.New("no cluster for kubeConfig Secret " + rel.KubeConfig.SecretName)
		}
		return &helm.View{Capabilities: helm.OfflineCapabilities("1.29", nil), LookupObject: spokeLookup}, nil
	}
	values := "  values:\n    lookupConfigMap: colours\n"
	for _, tc := range []struct {
		name, spec    string
		want, wantErr string
		api           string
	}{
		{name: "the unit's cluster", spec: capsChart + values, want: "the unit's", api: "modern"},
		{name: "a spoke, as its account", spec: capsChart + values + "  serviceAccountName: deployer\n  kubeConfig: {secretRef: {name: spoke}}\n", want: "the spoke's", api: "legacy"},
		{name: "a cluster not given", spec: capsChart + "  kubeConfig: {secretRef: {name: elsewhere}}\n", wantErr: "HelmRelease apps/web (apps/web/release.yaml): no cluster for kubeConfig Secret elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, sources := objs(t, repository(repo.URL, ""), release(tc.spec))
			out, err := helm.Expand(t.Context(), in, sources, helm.Options{Fetcher: &helm.Fetcher{CacheDir: t.TempDir()},
				Capabilities: helm.OfflineCapabilities("1.37", nil), LookupObject: unitLookup, Cluster: view})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, _, _ := unstructured.NestedStringMap(byKind(out.Objects, "ConfigMap").Object, "data")
			if data["looked-up"] != tc.want || data["api"] != tc.api {
				t.Errorf("looked up %q on a %q API, want %q on %q", data["looked-up"], data["api"], tc.want, tc.api)
			}
		})
	}
	if len(asked) != 3 {
		t.Errorf("Cluster asked for %q, want once per release", asked)
	}
}
