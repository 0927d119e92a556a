package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// faultIterations is how many seeded iterations a fault test runs:
// KUSTOMIZE_DEPLOY_FAULT_ITERATIONS (make stress), else def.
func faultIterations(t *testing.T, def int) int {
	if v := os.Getenv("KUSTOMIZE_DEPLOY_FAULT_ITERATIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("KUSTOMIZE_DEPLOY_FAULT_ITERATIONS=%q", v)
		}
		return n
	}
	return def
}

// faultSeed is the first iteration's seed: KUSTOMIZE_DEPLOY_FAULT_SEED to
// replay a failure, else 1.
func faultSeed(t *testing.T) uint64 {
	if v := os.Getenv("KUSTOMIZE_DEPLOY_FAULT_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("KUSTOMIZE_DEPLOY_FAULT_SEED=%q", v)
		}
		return n
	}
	return 1
}

// gitState is a unit's desired ConfigMaps, changed at random between
// runs: some appear, some leave Git (to be pruned), some change.
type gitState struct {
	dir     string
	size    int
	present map[int]int // index → revision
}

func newGitState(t *testing.T, size int) *gitState {
	return &gitState{dir: t.TempDir(), size: size, present: map[int]int{}}
}

func (g *gitState) shuffle(t *testing.T, rng *rand.Rand) {
	t.Helper()
	for i := range g.size {
		switch r := rng.IntN(10); {
		case r < 2:
			delete(g.present, i)
		case r < 4:
			g.present[i]++
		case r < 9:
			if _, ok := g.present[i]; !ok {
				g.present[i] = 0
			}
		}
	}
	if err := os.RemoveAll(g.dir); err != nil {
		t.Fatal(err)
	}
	for i, rev := range g.present {
		writeFile(t, filepath.Join(g.dir, fmt.Sprintf("cm-%03d.yaml", i)),
			fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%03d\ndata:\n  revision: %q\n", i, fmt.Sprint(rev)))
	}
	if len(g.present) == 0 { // an empty unit is refused: keep one
		g.present[0] = 0
		g.shuffle(t, rng)
	}
}

func (g *gitState) names() []string {
	var out []string
	for i := range g.present {
		out = append(out, fmt.Sprintf("cm-%03d", i))
	}
	sort.Strings(out)
	return out
}

// faultEnv checks a unit's invariants on a cluster: nothing outside its
// inventory carries its labels, foreign objects survive, and after a
// clean run the cluster is exactly Git.
type faultEnv struct {
	t       *testing.T
	ns      string
	unit    string
	client  kubernetes.Interface
	kc      *kube.Clients
	foreign []string
}

func newFaultEnv(t *testing.T, client kubernetes.Interface, kc *kube.Clients, ns, unit string) *faultEnv {
	f := &faultEnv{t: t, ns: ns, unit: unit, client: client, kc: kc}
	// Foreign objects: one unlabelled, one labelled as another unit's.
	for name, labels := range map[string]map[string]string{
		"foreign-plain": nil,
		"foreign-other": {"kustomize-deploy.dev/name": "other", "kustomize-deploy.dev/namespace": ns},
	} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		f.foreign = append(f.foreign, name)
	}
	return f
}

// labelled are the ConfigMaps carrying the unit's labels.
func (f *faultEnv) labelled() []string {
	f.t.Helper()
	list, err := f.client.CoreV1().ConfigMaps(f.ns).List(f.t.Context(), metav1.ListOptions{LabelSelector: "kustomize-deploy.dev/name=" + f.unit})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, cm := range list.Items {
		out = append(out, cm.Name)
	}
	sort.Strings(out)
	return out
}

func (f *faultEnv) inventory() map[string]bool {
	f.t.Helper()
	inv, err := inventory.Load(f.t.Context(), f.kc.Client, f.ns, f.unit)
	if err != nil {
		f.t.Fatalf("the inventory cannot be read: %v", err)
	}
	out := map[string]bool{}
	if inv != nil {
		for _, e := range inv.Entries {
			out[e.Name] = true
		}
	}
	return out
}

// check asserts what must hold after any run, interrupted or not.
func (f *faultEnv) check(when string) {
	f.t.Helper()
	inv := f.inventory()
	for _, name := range f.labelled() {
		if !inv[name] {
			f.t.Errorf("%s: ConfigMap %s carries the unit's labels but is not in its inventory (an orphan)", when, name)
		}
	}
	for _, name := range f.foreign {
		if _, err := f.client.CoreV1().ConfigMaps(f.ns).Get(f.t.Context(), name, metav1.GetOptions{}); err != nil {
			f.t.Errorf("%s: foreign ConfigMap %s: %v", when, name, err)
		}
	}
}

// converged asserts the cluster is exactly Git after a clean run.
func (f *faultEnv) converged(when string, want []string) {
	f.t.Helper()
	f.check(when)
	if got := f.labelled(); strings.Join(got, ",") != strings.Join(want, ",") {
		f.t.Errorf("%s: the unit's ConfigMaps are %v, Git has %v", when, got, want)
	}
	inv := f.inventory()
	if len(inv) != len(want) {
		f.t.Errorf("%s: the inventory holds %d objects, Git %d", when, len(inv), len(want))
	}
}

// releaseLeftLock deletes the lease a run could not give back (its API
// server was down): it would expire in 60 s (the lock package tests
// that); the test does not wait. It reports whether there was one.
func (f *faultEnv) releaseLeftLock() bool {
	err := f.client.CoordinationV1().Leases(f.ns).Delete(context.WithoutCancel(f.t.Context()), "kustomize-deploy."+f.unit, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		f.t.Fatalf("the lease: %v", err)
	}
	return err == nil
}

// The API server is killed and restarted at random points of seeded
// applies (creates, updates and prunes): every interrupted run ends
// (successfully, its requests retried, or with an error), nothing the
// unit's labels mark is ever outside its inventory, nothing foreign is
// deleted, and the next run converges to Git.
func TestAPIServerCrashesConverge(t *testing.T) {
	const ns, unit = "crashes", "crashing"
	iterations := faultIterations(t, 20)
	c, client := ownCluster(t, ns)
	kc, err := kube.New(c.Config, ns, kube.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	f := newFaultEnv(t, client, kc, ns, unit)
	git := newGitState(t, 150)
	args := []string{"apply", "--kubeconfig", c.Kubeconfig, "--inventory-namespace", ns, "-n", ns, "--name", unit,
		"--path", git.dir, "--request-timeout", "3s", "--timeout", "30s", "--lock-timeout", "10s"}

	var interrupted, failed, leftLocks int
	seed := faultSeed(t)
	for i := range iterations {
		s := seed + uint64(i)
		rng := rand.New(rand.NewPCG(s, 0))
		git.shuffle(t, rng)
		killAfter := time.Duration(rng.IntN(1500)) * time.Millisecond
		down := time.Duration(rng.IntN(2000)) * time.Millisecond

		crashed := make(chan struct{})
		go func() {
			defer close(crashed)
			time.Sleep(killAfter)
			c.KillAPIServer()
			time.Sleep(down)
			if err := c.StartAPIServer(t.Context()); err != nil {
				t.Errorf("seed %d: the API server did not come back: %v", s, err)
			}
		}()
		o, finished := runBounded(t, t.Context(), 2*time.Minute, &watchedBuffer{}, args...)
		<-crashed
		if !finished {
			t.Fatalf("seed %d: the run hung (API server killed after %s, down %s):\n%s", s, killAfter, down, o.stderr)
		}
		if o.code != exitOK {
			failed++
			if strings.TrimSpace(o.stderr+o.stdout) == "" {
				t.Errorf("seed %d: the run failed (exit %d) without saying why", s, o.code)
			}
			t.Logf("seed %d: API server killed after %s, down %s: %s", s, killAfter, down, lastLine(o.stdout+o.stderr))
		}
		if strings.Contains(o.stderr, "applying") {
			interrupted++
		}
		f.check(fmt.Sprintf("seed %d, after the crash", s))
		if f.releaseLeftLock() {
			leftLocks++
		}

		o, _ = runBounded(t, t.Context(), 2*time.Minute, &watchedBuffer{}, args...)
		if o.code != exitOK {
			t.Fatalf("seed %d: the run after the crash did not converge: exit %d\n%s%s", s, o.code, o.stdout, o.stderr)
		}
		f.converged(fmt.Sprintf("seed %d, converged", s), git.names())
		if t.Failed() {
			t.Fatalf("replay with KUSTOMIZE_DEPLOY_FAULT_SEED=%d", s)
		}
	}
	t.Logf("%d iterations (seeds %d..%d): %d runs failed, %d reached their writes, %d left a lock to expire; all converged, no orphan, nothing foreign deleted",
		iterations, seed, seed+uint64(iterations)-1, failed, interrupted, leftLocks)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
