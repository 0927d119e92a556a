package main

import (
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// remediationUnit writes, in the git repository dir, a HelmRelease of the
// web chart at version with spec extra (indented by two) and values, and
// commits it; it returns the commit.
func remediationUnit(t *testing.T, dir, ns, repoURL, version, extra, values string) string {
	t.Helper()
	chartUnit(t, dir, ns, repoURL, version, values)
	release := filepath.Join(dir, "release.yaml")
	writeFile(t, release, strings.Replace(readFile(t, release), "  values:\n", extra+"  values:\n", 1))
	gitCommit(t, dir, "web "+version)
	return strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
}

// A chart upgrade whose pods never get ready is rolled back, within the
// run, to the release of the revision last applied; with retries, the
// upgrade is tried again after each rollback and every attempt counted;
// with strategy uninstall the release is removed, and the next run
// installs it; a failing test (spec.test.enable) fails the release, with
// its pod's exit code and log.
func TestHelmRemediation(t *testing.T) {
	c := newCLI(t)
	repo := helmtest.NewRepository(t,
		helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"},
		helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.1.0", AppVersion: "1.1"})
	dir := t.TempDir()
	args := []string{"--name", "web", "--path", dir, "--chart-cache", t.TempDir(), "--timeout", "6s"}
	client := cluster.Client(t)
	image := func() string {
		t.Helper()
		d, err := client.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the chart's Deployment: %v", err)
		}
		return d.Spec.Template.Spec.Containers[0].Image
	}
	unready := "    podLabels: {" + testcluster.FailReadinessLabel + ": " + testcluster.FailReadinessValue + "}\n"

	first := remediationUnit(t, dir, c.ns, repo.URL, "1.0.0", "", "    greeting: hello\n")
	if o, r := c.apply(args...); o.code != exitOK {
		t.Fatalf("install: exit %d: %s %s", o.code, r.Reason, r.Message)
	}

	// Rollback, one retry: two attempts, each rolled back.
	remediationUnit(t, dir, c.ns, repo.URL, "1.1.0", "  upgrade:\n    remediation: {retries: 1}\n", unready)
	o, r := c.apply(args...)
	if o.code != exitFail || r.Reason != result.ReasonHealthCheckFailed {
		t.Fatalf("a failing upgrade: exit %d, %s %s", o.code, r.Reason, r.Message)
	}
	if len(r.Remediations) != 2 {
		t.Fatalf("remediations = %+v, want two rollbacks (a retry, then the last failure)", r.Remediations)
	}
	for i, rem := range r.Remediations {
		if rem.Strategy != "rollback" || rem.Action != "upgrade" || rem.Attempt != i+1 || rem.Revision != first || rem.Chart != "web 1.0.0" || rem.Error != "" || rem.Retried != (i == 0) {
			t.Errorf("remediation %d = %+v", i, rem)
		}
	}
	if got := image(); got != "registry.example/web:1.0" {
		t.Errorf("after the rollback the Deployment runs %s, want the release of %s", got, first[:7])
	}
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "web")
	if err != nil || len(inv.Status.Releases) != 1 || inv.Status.LastAppliedRevision != first {
		t.Fatalf("after the rollback the inventory records %+v (%v), want the release of %s", inv.Status, err, first[:7])
	}

	// Uninstall: the release's objects go, and so does its record.
	remediationUnit(t, dir, c.ns, repo.URL, "1.1.0", "  upgrade:\n    remediation: {strategy: uninstall, remediateLastFailure: true}\n", unready)
	o, r = c.apply(args...)
	if o.code != exitFail || len(r.Remediations) != 1 || r.Remediations[0].Strategy != "uninstall" || r.Remediations[0].Deleted == 0 {
		t.Fatalf("strategy uninstall: exit %d, remediations %+v\n%s", o.code, r.Remediations, o.stderr)
	}
	if _, err := client.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Deployment after an uninstall: %v", err)
	}
	inv, err = inventory.Load(t.Context(), runtimeClient(t), c.ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Status.Releases) != 0 {
		t.Errorf("the uninstalled release is still recorded: %+v", inv.Status.Releases)
	}

	// Tests: the install goes through, its test pod fails.
	cluster.ServeLogs(t, c.ns, testcluster.ContainerLog{Container: "wget", Lines: []string{"Connecting to web:80", "wget: server returned error: HTTP/1.1 503"}})
	remediationUnit(t, dir, c.ns, repo.URL, "1.1.0", "  test: {enable: true}\n", "    testPodLabels: {"+testcluster.CrashLabel+": \"1\"}\n")
	o, r = c.apply(args...)
	if o.code != exitFail || r.Reason != result.ReasonTestFailed {
		t.Fatalf("a failing test: exit %d, %s %s", o.code, r.Reason, r.Message)
	}
	contains(t, "the failing test", r.Message, "test hook Pod/"+c.ns+"/web-test", "container wget: terminated Error, exit code 1")
	if len(r.Diagnostics) != 1 || len(r.Diagnostics[0].Logs) != 1 || !strings.Contains(strings.Join(r.Diagnostics[0].Logs[0].Lines, "\n"), "HTTP/1.1 503") {
		t.Errorf("diagnostics = %+v, want the test pod's log", r.Diagnostics)
	}
	if len(r.Remediations) != 0 {
		t.Errorf("an install without remediation was remediated: %+v", r.Remediations)
	}
}

// A release installed as its own service account is rolled back as that
// account, as helm-controller rolls it back: its objects are back at the
// last release and the inventory still records them as the account's.
func TestHelmRollbackAsTheReleaseAccount(t *testing.T) {
	c := newCLI(t)
	k := cluster.Client(t)
	namespaceAdmin(t, k, c.ns, "deployer")
	repo := helmtest.NewRepository(t,
		helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"},
		helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.1.0", AppVersion: "1.1"})
	dir := t.TempDir()
	args := []string{"--name", "web", "--path", dir, "--chart-cache", t.TempDir(), "--timeout", "6s"}
	account := "  serviceAccountName: deployer\n"
	first := remediationUnit(t, dir, c.ns, repo.URL, "1.0.0", account, "    greeting: hello\n")
	if o, r := c.apply(args...); o.code != exitOK {
		t.Fatalf("install: exit %d: %s %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	unready := "    podLabels: {" + testcluster.FailReadinessLabel + ": " + testcluster.FailReadinessValue + "}\n"
	remediationUnit(t, dir, c.ns, repo.URL, "1.1.0", account+"  upgrade:\n    remediation: {remediateLastFailure: true}\n", unready)
	o, r := c.apply(args...)
	if o.code != exitFail || len(r.Remediations) != 1 {
		t.Fatalf("a failing upgrade: exit %d, %s %s, remediations %+v\n%s", o.code, r.Reason, r.Message, r.Remediations, o.stderr)
	}
	if rem := r.Remediations[0]; rem.Strategy != "rollback" || rem.Revision != first || rem.Error != "" || rem.Applied == 0 {
		t.Fatalf("remediation = %+v, want a rollback to %s", rem, first[:7])
	}
	d, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || d.Spec.Template.Spec.Containers[0].Image != "registry.example/web:1.0" {
		t.Fatalf("after the rollback: %v %v", err, d)
	}
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range inv.Entries {
		if e.Kind == "Deployment" {
			n++
			if e.Account != c.ns+"/deployer" {
				t.Errorf("the rolled-back Deployment is recorded as %q's, want %s/deployer's", e.Account, c.ns)
			}
		}
	}
	if n != 1 {
		t.Errorf("the inventory records %d Deployment(s), want 1", n)
	}
}
