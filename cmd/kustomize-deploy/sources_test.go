package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// entryIDs lists the objects of every unit of s, by unit, but those of
// the stages left out (e.g. hooks, which run once).
func entryIDs(s *result.Set, leftOut ...result.Stage) map[string][]string {
	out := map[string][]string{}
	for _, r := range s.Units {
		for _, e := range r.Entries {
			if slices.Contains(leftOut, e.Stage) {
				continue
			}
			out[r.Unit] = append(out[r.Unit], e.Object.String())
		}
		slices.Sort(out[r.Unit])
	}
	return out
}

// artifactExample copies testdata/artifact-example into a git repository
// of its own, its charts served by an OCI registry (the cert-manager-like
// chart) and an HTTPS-like chart repository (the app's), and returns its
// path.
func artifactExample(t *testing.T, ns string) string {
	t.Helper()
	charts := filepath.Join("..", "..", "testdata", "charts")
	reg := helmtest.NewRegistry(t)
	reg.Push("charts", helmtest.Chart{Dir: filepath.Join(charts, "certs")})
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join(charts, "web"), Version: "1.0.0", AppVersion: "1.0"})
	return gitFixture(t, "artifact-example", "NAMESPACE", ns, "REGISTRY", reg.Host, "REPO_URL", repo.URL)
}

// The canonical example's two layouts, before Flux 2.7 (Kustomizations of
// the GitRepository) and since (an ArtifactGenerator splitting the
// repository into ExternalArtifacts, paths inside them), deploy the same
// objects from a cluster with no Flux CRDs or controllers, as does Flux
// 2.9's (an ArtifactGenerator's pathPattern making one artifact per
// directory): the charts
// rendered here, the CRD a chart ships before the custom resource of it
// the next unit holds, the app's production values. Applying one layout
// after the other changes nothing.
func TestConfigArtifactGeneratorLayoutDeploysTheSameObjects(t *testing.T) {
	c := newCLI(t)
	repo := artifactExample(t, c.ns)
	dyn := dynamic.NewForConfigOrDie(cluster.Config)
	issuers := schema.GroupVersionResource{Group: "certs.helm-example.test", Version: "v1", Resource: "clusterissuers"}
	t.Cleanup(func() {
		_ = dyn.Resource(issuers).Delete(context.Background(), c.ns+"-letsencrypt", metav1.DeleteOptions{})
	})
	cache := []string{"--chart-cache", t.TempDir()}
	o, before := c.runConfig(append([]string{"apply", "--config", filepath.Join(repo, "clusters/pre-2.7")}, cache...)...)
	if o.code != exitOK || !before.Ready {
		t.Fatalf("pre-2.7 layout: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	o, after := c.runConfig(append([]string{"apply", "--config", filepath.Join(repo, "clusters/2.7")}, cache...)...)
	if o.code != exitOK || !after.Ready {
		t.Fatalf("2.7 layout: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	for _, r := range after.Units {
		if r.Changed() {
			t.Errorf("2.7 layout: %s changed what the pre-2.7 layout deployed: %+v", r.Unit, r.Counts)
		}
	}
	// Flux 2.9's pathPattern: one artifact per infrastructure/ directory.
	o, patterned := c.runConfig(append([]string{"apply", "--config", filepath.Join(repo, "clusters/2.9")}, cache...)...)
	if o.code != exitOK || !patterned.Ready {
		t.Fatalf("2.9 layout: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	for _, r := range patterned.Units {
		if r.Changed() {
			t.Errorf("2.9 layout: %s changed what the 2.7 layout deployed: %+v", r.Unit, r.Counts)
		}
	}
	crd := "CustomResourceDefinition/clusterissuers.certs.helm-example.test"
	want := map[string][]string{
		"infra-controllers": {crd, "Deployment/" + c.ns + "/cert-manager"},
		"infra-configs":     {"ClusterIssuer/" + c.ns + "-letsencrypt"},
		"apps":              {"ConfigMap/" + c.ns + "/podinfo-settings", "Deployment/" + c.ns + "/podinfo", "Service/" + c.ns + "/podinfo"},
	}
	// The chart's CRD, installed by the first layout and left by the
	// upgrades (helm-controller's crds: Skip), is out of the 2.9 layout's
	// inventory: the 2.7 one kept it only as a prune it skipped.
	got29 := entryIDs(patterned, result.StageHooks, result.StagePrune)
	if !slices.Equal(got29["infra-controllers"], want["infra-controllers"][1:]) || !slices.Equal(got29["infra-configs"], want["infra-configs"]) || !slices.Equal(got29["apps"], want["apps"]) {
		t.Errorf("2.9 layout: objects %q", got29)
	}
	for name, layout := range map[string]*result.Set{"pre-2.7": before, "2.7": after, "2.9": patterned} {
		got := entryIDs(layout, result.StageHooks)
		for unit, ids := range want {
			if name != "2.9" && !slices.Equal(got[unit], ids) {
				t.Errorf("%s layout, unit %s: objects %q, want %q", name, unit, got[unit], ids)
			}
		}
		releases := map[string]string{}
		for _, r := range layout.Units {
			for _, rel := range r.Releases {
				releases[r.Unit] += rel.Chart + " " + rel.Version
			}
		}
		if diff := cmp.Diff(map[string]string{"infra-controllers": "certs 1.15.0", "apps": "web 1.0.0"}, releases); diff != "" {
			t.Errorf("%s layout: releases rendered (-want +got):\n%s", name, diff)
		}
	}
	pre := unitsByName(before)
	if pre["infra-controllers"].StartedAt.After(pre["infra-configs"].StartedAt) || pre["infra-configs"].StartedAt.After(pre["apps"].StartedAt) {
		t.Error("pre-2.7 layout: the units did not run in dependency order")
	}
	head := strings.TrimSpace(gitOut(t, repo, "rev-parse", "HEAD"))
	for _, r := range slices.Concat(after.Units, patterned.Units) {
		if r.Revision != head {
			t.Errorf("2.7 and 2.9 layouts: unit %s revision %q, want the commit the artifact was made from (originRevision) %s", r.Unit, r.Revision, head)
		}
	}
	k := cluster.Client(t)
	podinfo, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), "podinfo", metav1.GetOptions{})
	if err != nil || *podinfo.Spec.Replicas != 3 {
		t.Errorf("production/ (beside base/ in the apps artifact) patched the podinfo release's values: %v %v", err, podinfo)
	}
	certManager, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), "cert-manager", metav1.GetOptions{})
	if err != nil || *certManager.Spec.Replicas != 2 {
		t.Errorf("the cert-manager release (an OCIRepository's chart, by chartRef): %v %v", err, certManager)
	}
	issuer, err := dyn.Resource(issuers).Get(t.Context(), c.ns+"-letsencrypt", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("infra-configs' ClusterIssuer, of the CRD the cert-manager chart ships: %v", err)
	}
	if server, _, _ := unstructured.NestedString(issuer.Object, "spec", "acme", "server"); !strings.Contains(server, "acme-v02") {
		t.Errorf("infra-configs' spec.patches: server %q", server)
	}

	// A PR's three-way diff of the 2.7 layout: what the PR changes is the
	// app's value, nothing else (the artifacts are made at the base too).
	values := filepath.Join(repo, "apps", "production", "podinfo-values.yaml")
	writeFile(t, values, strings.Replace(readFile(t, values), "replicas: 3", "replicas: 4", 1))
	o, diff := c.runConfig(append([]string{"diff", "--config", filepath.Join(repo, "clusters/2.7"), "--base", "HEAD"}, cache...)...)
	if o.code != exitOK {
		t.Fatalf("three-way diff of the 2.7 layout: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	changed := map[string]string{}
	for _, r := range diff.Units {
		if r.Unit == "apps" && r.Base != head {
			t.Errorf("three-way diff, unit %s: base %q, want %s", r.Unit, r.Base, head)
		}
		for _, e := range r.Entries {
			if e.Change != "" {
				changed[e.Object.String()] = e.Change
			}
		}
	}
	if d := changed["Deployment/"+c.ns+"/podinfo"]; len(changed) != 1 || !strings.Contains(d, "-  replicas: 3\n+  replicas: 4") {
		t.Errorf("three-way diff of the 2.7 layout: the PR changes %q", changed)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// A Kustomization whose GitRepository is another repository, not fetched,
// fails, named with its source and how to map it, and nothing of this checkout's
// ./deploy is applied under its name; the other units go on. Mapped with
// --source to a checkout of that repository, it deploys from there, with
// that checkout's revision.
func TestConfigOtherRepositoryIsNeverBuiltFromTheCheckout(t *testing.T) {
	c := newCLI(t)
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "deploy/wrong-tree.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wrong-tree\n  namespace: "+c.ns+"\n")
	writeFile(t, filepath.Join(repo, "local/local.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n  namespace: "+c.ns+"\n")
	writeFile(t, filepath.Join(repo, "clusters/local/units.yaml"), `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: podinfo
  namespace: `+c.ns+`
spec:
  interval: 5m
  url: https://github.com/acme/podinfo
  ref:
    branch: main
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: podinfo
  namespace: `+c.ns+`
spec:
  interval: 10m
  sourceRef:
    kind: GitRepository
    name: podinfo
  path: ./deploy
  prune: true
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: local
  namespace: `+c.ns+`
spec:
  interval: 10m
  sourceRef:
    kind: GitRepository
    name: flux-system
  path: ./local
  prune: true
`)
	initRepo(t, repo, "git@github.com:acme/fleet.git")
	config := filepath.Join(repo, "clusters/local")

	// Not fetched (the test reaches no network): as any source that
	// cannot be had.
	o, s := c.runConfig("apply", "--config", config, "--fetch-sources=false")
	if o.code != exitFail || s.Ready {
		t.Fatalf("unmapped: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	if r := got["local"]; r == nil || r.Reason != result.ReasonApplySucceed {
		t.Errorf("the unit of this repository: %+v", r)
	}
	r := got["podinfo"]
	if r == nil || r.Reason != result.ReasonArtifactFailed || len(r.Entries) != 0 {
		t.Fatalf("the unit of another repository: %+v", r)
	}
	contains(t, "its message", r.Message, "Kustomization "+c.ns+"/podinfo (clusters/local/units.yaml:", "GitRepository "+c.ns+"/podinfo (clusters/local/units.yaml:1)",
		"https://github.com/acme/podinfo at branch main", "check out GitRepository/"+c.ns+"/podinfo and map it to a directory")
	k := cluster.Client(t)
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "wrong-tree", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("this checkout's ./deploy was applied under podinfo's name: %v", err)
	}
	if inv, _ := inventory.Load(t.Context(), runtimeClient(t), c.ns, "podinfo"); inv != nil {
		t.Errorf("an inventory was written for the unit that built nothing: %+v", inv)
	}

	other := t.TempDir()
	writeFile(t, filepath.Join(other, "deploy/right-tree.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: right-tree\n  namespace: "+c.ns+"\n")
	initRepo(t, other, "https://github.com/acme/podinfo")
	head := strings.TrimSpace(gitOut(t, other, "rev-parse", "HEAD"))
	o, s = c.runConfig("apply", "--config", config, "--source", "GitRepository/"+c.ns+"/podinfo="+other)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("mapped: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if r := unitsByName(s)["podinfo"]; r.Revision != head || !slices.Equal(entryIDs(s)["podinfo"], []string{"ConfigMap/" + c.ns + "/right-tree"}) {
		t.Errorf("mapped: revision %q (want the mapped checkout's %s), objects %q", r.Revision, head, entryIDs(s)["podinfo"])
	}
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "wrong-tree", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("this checkout's ./deploy was applied: %v", err)
	}

	// test, without a cluster, maps sources as the Action's mode test
	// does with its sources input, and fails as apply does without.
	o = c.runAsIs("test", "--config", config, "--fetch-sources=false")
	if o.code != exitFail || !strings.Contains(o.stdout, "FAIL    podinfo") {
		t.Errorf("test, unmapped: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if o = c.runAsIs("test", "--config", config, "--source", "GitRepository/"+c.ns+"/podinfo="+other); o.code != exitOK || !strings.Contains(o.stdout, "2 of 2 unit(s) passed") || !strings.Contains(o.stderr, "(--verbose lists them)") {
		t.Errorf("test, mapped: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if o = c.runAsIs("test", "--config", config, "--source", "GitRepository/"+c.ns+"/podinfo="+other, "--verbose"); !strings.Contains(o.stderr, "note: ") || strings.Contains(o.stderr, "(--verbose lists them)") {
		t.Errorf("test --verbose does not list the notes:\n%s", o.stderr)
	}

	o = c.run("apply", "--config", config, "--source", "GitRepository/"+c.ns+"/podinfo="+filepath.Join(other, "missing"))
	if o.code != exitUsage || !strings.Contains(o.stderr, "is not a directory") {
		t.Errorf("a mapping to no directory: exit %d\n%s", o.code, o.stderr)
	}
}

// initRepo makes dir a git repository with one commit and remote origin.
func initRepo(t *testing.T, dir, origin string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", origin}, {"add", "-A"},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// The fork-safe PR diff (offline, no cluster) of the canonical example's
// two layouts is green and the same: a change to an app's value shows as
// the rendered Deployment's change and nothing else, and the ClusterIssuer
// is validated against the CRD the cert-manager chart ships. The 2.7
// layout's artifacts are made at the base revision too, from the
// checkout's files there, so its units compare with themselves rather
// than show everything created.
func TestDiffOfflineOfTheArtifactGeneratorLayout(t *testing.T) {
	c := newCLI(t)
	repo := artifactExample(t, c.ns)
	values := filepath.Join(repo, "apps", "production", "podinfo-values.yaml")
	writeFile(t, values, strings.Replace(readFile(t, values), "replicas: 3", "replicas: 4", 1)) // the PR's change
	for _, layout := range []string{"pre-2.7", "2.7"} {
		o := c.runAsIs("diff", "--config", filepath.Join(repo, "clusters", layout), "--base", "HEAD", "--offline", "-o", "json",
			"--chart-cache", t.TempDir(), "--kubeconfig", filepath.Join(t.TempDir(), "none"))
		set := decodeSet(t, o)
		if o.code != exitOK || !set.Ready {
			t.Fatalf("%s layout: exit %d\n%s\n%s", layout, o.code, o.stdout, o.stderr)
		}
		changes := map[string]string{}
		for _, r := range set.Units {
			if r.Reason != result.ReasonOfflineDiffSucceed {
				t.Errorf("%s layout, unit %s: %s %s", layout, r.Unit, r.Reason, r.Message)
			}
			for _, e := range r.Entries {
				if e.Reason != "" {
					t.Errorf("%s layout, %s: %s", layout, e.Object, e.Reason)
				}
				if e.Action != result.Unchanged {
					changes[e.Object.String()] = string(e.Action)
				}
			}
		}
		if diff := cmp.Diff(map[string]string{"Deployment/" + c.ns + "/podinfo": string(result.Configured)}, changes); diff != "" {
			t.Errorf("%s layout: changes (-want +got):\n%s", layout, diff)
		}
		if d := unitsByName(set)["apps"]; d == nil || len(d.Entries) == 0 || !strings.Contains(strings.Join(diffsOf(d), "\n"), "-  replicas: 3\n+  replicas: 4") {
			t.Errorf("%s layout: the apps unit's diff: %+v", layout, d)
		}
	}
}

func diffsOf(r *result.Result) []string {
	var out []string
	for _, e := range r.Entries {
		out = append(out, e.Diff)
	}
	return out
}
