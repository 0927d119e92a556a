package main

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A HelmRelease whose chartRef is an OCIRepository pinned by digest
// deploys that artifact from the registry: a newer tag pushed later, in
// the range the OCIRepository also names, does not change it; a digest
// the registry does not hold fails the unit naming it, and nothing of
// the unit is applied.
func TestHelmReleaseOCIRepositoryPinnedByDigest(t *testing.T) {
	c := newCLI(t)
	web := filepath.Join("..", "..", "testdata", "charts", "web")
	reg := helmtest.NewRegistry(t)
	pinned := reg.Push("charts", helmtest.Chart{Dir: web, Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	args := []string{"--name", "web", "--path", dir, "-n", c.ns, "--chart-cache", t.TempDir()}
	unit := func(digest, greeting string) {
		t.Helper()
		writeFile(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {greeting: "+greeting+"}\n")
		writeFile(t, filepath.Join(dir, "source.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: web\n  namespace: "+c.ns+
			"\nspec:\n  interval: 1h\n  insecure: true\n  url: oci://"+reg.Host+"/charts/web\n  ref:\n    semver: \">=1.0.0\"\n    digest: \""+digest+"\"\n")
		writeFile(t, filepath.Join(dir, "release.yaml"), "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: "+c.ns+
			"\nspec:\n  interval: 10m\n  chartRef: {kind: OCIRepository, name: web}\n")
	}
	client := cluster.Client(t)
	state := func() (image, greeting string) {
		t.Helper()
		dep, err := client.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the chart's Deployment: %v", err)
		}
		cm, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "plain", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the unit's ConfigMap: %v", err)
		}
		return dep.Spec.Template.Spec.Containers[0].Image, cm.Data["greeting"]
	}

	unit(pinned, "hello")
	o, r := c.apply(args...)
	if o.code != exitOK || r.Counts.Created != 4 {
		t.Fatalf("apply: exit %d, counts %+v: %s %s\n%s", o.code, r.Counts, r.Reason, r.Message, o.stderr)
	}
	if image, _ := state(); image != "registry.example/web:1.0" {
		t.Fatalf("the pinned chart's image %q", image)
	}
	contains(t, "apply's progress", o.stderr, "HelmRelease/"+c.ns+"/web: chart web 1.0.0")

	reg.Push("charts", helmtest.Chart{Dir: web, Version: "1.1.0", AppVersion: "1.1"})
	if o, r := c.apply(args...); o.code != exitOK || r.Changed() {
		t.Errorf("after a newer tag was pushed: exit %d, counts %+v\n%s", o.code, r.Counts, o.stderr)
	}
	if image, _ := state(); image != "registry.example/web:1.0" {
		t.Errorf("a newer tag moved the pinned release to %q", image)
	}

	sum := sha256.Sum256([]byte("no such manifest"))
	wrong := "sha256:" + hex.EncodeToString(sum[:])
	unit(wrong, "changed")
	o, r = c.apply(args...)
	if o.code != exitFail || r.Reason != result.ReasonBuildFailed {
		t.Fatalf("a wrong digest: exit %d, %s %s", o.code, r.Reason, r.Message)
	}
	contains(t, "a wrong digest's failure", r.Message, "HelmRelease "+c.ns+"/web (release.yaml:1)", "OCIRepository "+c.ns+"/web", wrong, "404 Not Found (MANIFEST_UNKNOWN)")
	if image, greeting := state(); image != "registry.example/web:1.0" || greeting != "hello" {
		t.Errorf("the unit was applied although its chart failed: image %q, greeting %q", image, greeting)
	}
}
