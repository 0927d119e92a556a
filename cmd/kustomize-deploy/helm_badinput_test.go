package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// closedPortURL is an http URL of a port of 127.0.0.1 that nothing
// listens on.
func closedPortURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/charts"
}

// A HelmRelease that cannot be rendered fails its unit with BuildFailed,
// naming the release, its file and the cause, and nothing of the unit is
// written: not the plain ConfigMap beside it, no object in an inventory.
func TestHelmReleaseBadInputWritesNothing(t *testing.T) {
	c := newCLI(t)
	charts := filepath.Join("..", "..", "testdata", "charts")
	repo := helmtest.NewRepository(t,
		helmtest.Chart{Dir: filepath.Join(charts, "web"), Version: "1.0.0", AppVersion: "1.0"},
		helmtest.Chart{Dir: filepath.Join(charts, "broken")})
	closed := closedPortURL(t)
	client := cluster.Client(t)
	release := "HelmRelease " + c.ns + "/web"
	for _, tc := range []struct {
		name, url, chart, version, extra string
		want                             []string
	}{
		{name: "unreachable repository", url: closed, chart: "web", version: "1.0.0",
			want: []string{"HelmRepository " + c.ns + "/charts (" + closed + ")", "connection refused"}},
		{name: "unknown version", url: repo.URL, chart: "web", version: "2.x",
			want: []string{"HelmRepository " + c.ns + "/charts (" + repo.URL + ")", `no version of chart web matching "2.x" (it has 1.0.0)`}},
		{name: "template error", url: repo.URL, chart: "broken", version: "0.1.0",
			want: []string{"chart broken 0.1.0 does not render", "templates/configmap.yaml", "nil pointer evaluating interface {}.greeting"}},
		{name: "values the schema refuses", url: repo.URL, chart: "web", version: "1.0.0", extra: "    port: eighty\n",
			want: []string{"chart web 1.0.0 does not render", "values don't meet the specifications of the schema", "port", "got string, want integer"}},
		{name: "valuesFrom Secret missing", url: repo.URL, chart: "web", version: "1.0.0",
			extra: "    greeting: hello\n  valuesFrom:\n  - {kind: Secret, name: web-values}\n",
			want:  []string{"spec.valuesFrom[0] Secret " + c.ns + "/web-values: not found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, unit := t.TempDir(), "bad-"+strings.ToLower(strings.ReplaceAll(tc.name, " ", "-"))
			writeFile(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+unit+"}\ndata: {a: b}\n")
			writeFile(t, filepath.Join(dir, "repository.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+c.ns+
				"\nspec:\n  interval: 1h\n  url: "+tc.url+"\n")
			writeFile(t, filepath.Join(dir, "release.yaml"), "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: "+c.ns+
				"\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: "+tc.chart+"\n      version: \""+tc.version+"\"\n      sourceRef: {kind: HelmRepository, name: charts}\n  values:\n    replicas: 1\n"+tc.extra)

			o, r := c.apply("--name", unit, "--path", dir, "-n", c.ns, "--chart-cache", t.TempDir())
			if o.code != exitFail || r.Reason != result.ReasonBuildFailed {
				t.Fatalf("exit %d, %s %s\n%s", o.code, r.Reason, r.Message, o.stderr)
			}
			contains(t, "the failure", r.Message, append([]string{release + " (release.yaml:1): "}, tc.want...)...)
			if len(r.FileErrors) != 1 || r.FileErrors[0].File != "release.yaml" || r.FileErrors[0].Line != 1 {
				t.Errorf("annotated at %+v, want the HelmRelease at release.yaml:1", r.FileErrors)
			}
			if _, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), unit, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the unit's ConfigMap was written although its HelmRelease failed: %v", err)
			}
			// The failed run records its attempt, and no object.
			inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, unit)
			if err != nil || len(inventoryEntries(inv)) != 0 || inv != nil && inv.Status.Ready.Reason != result.ReasonBuildFailed {
				t.Errorf("the unit's inventory: %v %+v", err, inv)
			}
		})
	}
}
