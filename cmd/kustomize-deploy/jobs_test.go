package main

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// twoClusterConfig writes a configuration of two units: first on the
// default cluster, second on the staging cluster after first, each a
// ConfigMap holding version.
func twoClusterConfig(t *testing.T, repo, ns, version string) {
	t.Helper()
	writeFile(t, filepath.Join(repo, "clusters/fleet/units.yaml"), `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: first
  namespace: `+ns+`
spec:
  interval: 10m
  path: ./first
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: second
  namespace: `+ns+`
spec:
  interval: 10m
  dependsOn:
  - name: first
  path: ./second
  prune: true
  kubeConfig:
    secretRef:
      name: staging
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
`)
	for _, name := range []string{"first", "second"} {
		writeFile(t, filepath.Join(repo, name, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+name+"\n  namespace: "+ns+"\ndata:\n  version: \""+version+"\"\n")
	}
}

// Two jobs of a matrix (plan --by cluster), one per cluster, started
// together: the job of the dependent unit waits (--wait-for-dependencies)
// until its dependency, which the other job applies on the other cluster,
// is Ready at the new revision, not just Ready at the old one; without
// the other job it gives up, naming the revision it waited for.
func TestJobsKeepTheOrderAcrossClusters(t *testing.T) {
	c := newCLI(t)
	second, err := testcluster.Start(t.Context(), testcluster.Options{Nodes: 1})
	if err != nil {
		t.Fatalf("a second cluster did not start: %v", err)
	}
	t.Cleanup(second.Stop)
	k2, err := kubernetes.NewForConfig(second.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k2.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	twoClusterConfig(t, repo, c.ns, "1")
	gitInit(t, repo)
	cfg := filepath.Join(repo, "clusters/fleet")
	staging := []string{"--kubeconfig-secret", "staging=" + second.Kubeconfig}

	p := c.runAsIs("plan", "--config", cfg, "--by", "cluster", "-o", "json")
	contains(t, "plan by cluster", p.stdout, `{"name":"default","units":"first"}`, `{"name":"staging","units":"second","cluster":"staging"}`)

	// Revision 1, in order.
	if o := c.run("apply", "--config", cfg, "--name", "first"); o.code != exitOK {
		t.Fatalf("first at revision 1: exit %d\n%s", o.code, o.stderr)
	}
	if o := c.run(append([]string{"apply", "--config", cfg, "--name", "second"}, staging...)...); o.code != exitOK {
		t.Fatalf("second at revision 1: exit %d\n%s", o.code, o.stderr)
	}

	// Revision 2: both jobs at once.
	twoClusterConfig(t, repo, c.ns, "2")
	gitOut(t, repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qam", "version 2")
	rev2 := strings.TrimSpace(gitOut(t, repo, "rev-parse", "HEAD"))

	// Alone, the dependent job gives up, naming what it waited for.
	o, s := c.runConfig(append([]string{"apply", "--config", cfg, "--name", "second", "--wait-for-dependencies", "3s"}, staging...)...)
	if o.code != exitFail || len(s.Units) != 1 || s.Units[0].Reason != result.ReasonDependencyNotReady {
		t.Fatalf("second without first's job: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	contains(t, "second's failure", s.Units[0].Message, "dependency 'first' is ready at revision", "not yet at "+rev2)

	var wg sync.WaitGroup
	var dependent outcome
	var dependentSet *result.Set
	wg.Add(1)
	go func() {
		defer wg.Done()
		dependent, dependentSet = c.runConfig(append([]string{"apply", "--config", cfg, "--name", "second", "--wait-for-dependencies", "2m"}, staging...)...)
	}()
	o = c.run("apply", "--config", cfg, "--name", "first")
	wg.Wait()
	if o.code != exitOK {
		t.Fatalf("first at revision 2: exit %d\n%s", o.code, o.stderr)
	}
	if dependent.code != exitOK || !dependentSet.Ready {
		t.Fatalf("second at revision 2: exit %d\n%s\n%s", dependent.code, dependent.stdout, dependent.stderr)
	}
	cm, err := k2.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "second", metav1.GetOptions{})
	if err != nil || cm.Data["version"] != "2" {
		t.Errorf("second on the staging cluster: %v %v", err, cm)
	}
}
