package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// ownCluster starts a cluster of the test's own, for tests that break its
// API server, with a namespace ns in it.
func ownCluster(t *testing.T, ns string) (*testcluster.Cluster, kubernetes.Interface) {
	t.Helper()
	c, err := testcluster.Start(t.Context(), testcluster.Options{Nodes: 1})
	if err != nil {
		t.Fatalf("the test's own cluster did not start: %v", err)
	}
	t.Cleanup(c.Stop)
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return c, client
}

// watchedBuffer is a buffer safe for concurrent use that calls on the
// first time its contents contain a string.
type watchedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	watch string
	on    func()
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.on != nil && strings.Contains(w.buf.String(), w.watch) {
		on := w.on
		w.on = nil
		go on()
	}
	return n, err
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// configMaps writes n ConfigMaps, one file each, into a new directory.
func configMaps(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("cm-%04d.yaml", i)),
			fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%04d\ndata:\n  index: %q\n", i, fmt.Sprint(i)))
	}
	return dir
}

// runBounded runs a command line, giving up (a hang) after limit.
func runBounded(t *testing.T, ctx context.Context, limit time.Duration, stderr *watchedBuffer, args ...string) (outcome, bool) {
	t.Helper()
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: stderr, getenv: func(string) string { return "" }, masker: mask.New()}
	done := make(chan int, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { done <- runWith(ctx, args, e) }()
	select {
	case code := <-done:
		return outcome{code: code, stdout: out.String(), stderr: stderr.String()}, true
	case <-time.After(limit):
		cancel()
		<-done
		return outcome{code: -1, stderr: stderr.String()}, false
	}
}

// A frozen API server (connections accepted, nothing answered) ends the
// run with an error naming the request it waited for, instead of hanging
// until the job's limit; once it answers again, the next run converges
// and the inventory holds every object.
func TestFrozenAPIServerEndsTheRun(t *testing.T) {
	const ns, n = "frozen", 1000
	c, client := ownCluster(t, ns)
	dir := configMaps(t, n)
	args := []string{"apply", "--kubeconfig", c.Kubeconfig, "--inventory-namespace", ns, "-n", ns, "--name", "frozen",
		"--path", dir, "--request-timeout", "2s", "--timeout", "60s"}

	stderr := &watchedBuffer{watch: "applying", on: c.FreezeAPIServer}
	o, finished := runBounded(t, t.Context(), 3*time.Minute, stderr, args...)
	c.ThawAPIServer()
	if !finished {
		t.Fatalf("the run hung on a frozen API server:\n%s", o.stderr)
	}
	if o.code == exitOK || !strings.Contains(o.stderr+o.stdout, "did not answer within 2s") || !strings.Contains(o.stderr, "hint: raise --request-timeout (now 2s)") {
		t.Fatalf("exit %d, want a failure naming the timeout and the flag that allows more\nstdout:\n%s\nstderr:\n%s", o.code, o.stdout, o.stderr)
	}
	// The frozen run could not give its lock back; the lease would expire
	// in 60 s (the lock package tests that), the test does not wait.
	if err := client.CoordinationV1().Leases(ns).Delete(t.Context(), "kustomize-deploy.frozen", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("the frozen run's lease: %v", err)
	}

	// The next run converges.
	o, finished = runBounded(t, t.Context(), 3*time.Minute, &watchedBuffer{}, args...)
	if !finished || o.code != exitOK {
		t.Fatalf("the run after the freeze: exit %d\n%s", o.code, o.stderr)
	}
	cms, err := client.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "kustomize-deploy.dev/name=frozen"})
	if err != nil || len(cms.Items) != n {
		t.Fatalf("%d labelled ConfigMaps, want %d: %v", len(cms.Items), n, err)
	}
	kc, err := kube.New(c.Config, ns, kube.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load(t.Context(), kc.Client, ns, "frozen")
	if err != nil || inv == nil || len(inv.Entries) < n {
		t.Fatalf("inventory after the freeze: %v %v", err, inv)
	}
}

// command is the command line as a process of its own (the test binary,
// run as main), its output going to out.
func command(ctx context.Context, out io.Writer, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCommand+"=1")
	cmd.Stdout, cmd.Stderr = out, out
	return cmd
}

// SIGINT during an apply stops it: the process exits non-zero, the lock
// is released, the inventory holds every object the run may have
// written, and the next run converges. A second signal exits at once.
func TestSignalStopsTheRun(t *testing.T) {
	c := newCLI(t)
	dir := configMaps(t, 1000)
	args := append([]string{"apply", "--name", "signalled", "--path", dir, "-n", c.ns, "--timeout", "60s"}, c.clusterFlags()...)

	out := &watchedBuffer{watch: "applying"}
	cmd := command(t.Context(), out, args...)
	out.on = func() { _ = cmd.Process.Signal(os.Interrupt) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == exitOK {
		t.Fatalf("after SIGINT: %v\n%s", err, out)
	}
	contains(t, "the interrupted run", out.String(), "interrupt: stopping", "stopped by interrupt")
	client := cluster.Client(t)
	if _, err := client.CoordinationV1().Leases(c.ns).Get(t.Context(), "kustomize-deploy.signalled", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the lock was not released: %v", err)
	}
	kc, err := kube.New(cluster.Config, c.ns, kube.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load(t.Context(), kc.Client, c.ns, "signalled")
	if err != nil || inv == nil {
		t.Fatalf("inventory after the signal: %v %v", err, inv)
	}
	cms, err := client.CoreV1().ConfigMaps(c.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "kustomize-deploy.dev/name=signalled"})
	if err != nil {
		t.Fatal(err)
	}
	owned := map[string]bool{}
	for _, e := range inv.Entries {
		owned[e.Name] = true
	}
	for _, cm := range cms.Items {
		if !owned[cm.Name] {
			t.Errorf("ConfigMap %s is labelled as the unit's but not in its inventory", cm.Name)
		}
	}
	if o := c.run(args...); o.code != exitOK {
		t.Fatalf("the run after the signal: exit %d\n%s", o.code, o.stderr)
	}

	// Two signals: the second exits at once.
	writeFile(t, filepath.Join(dir, "cm-0000.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-0000\ndata:\n  index: changed\n")
	out = &watchedBuffer{watch: "building"}
	cmd = command(t.Context(), out, append(args, "--recheck")...)
	out.on = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Process.Signal(os.Interrupt)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if !errors.As(err, &exit) || exit.ExitCode() != exitSignalled {
		t.Errorf("after two signals: %v\n%s", err, out)
	}
	contains(t, "two signals", out.String(), "again: exiting now")
}

// The first signal cancels the run; a second, or the grace period
// passing, exits at once; a run that ends first exits on its own. A run
// that has written nothing (no lock taken either) exits at once, with no
// grace to wait out, unless a write began meanwhile.
func TestOnSignals(t *testing.T) {
	var wrote atomic.Bool
	for _, tc := range []struct {
		name    string
		signals int
		grace   time.Duration
		idle    func() bool
		exits   bool
		says    string
	}{
		{name: "one signal, the run stops in time", signals: 1, grace: time.Minute, says: "what was done is being recorded"},
		{name: "two signals", signals: 2, grace: time.Minute, exits: true, says: "again: exiting now"},
		{name: "one signal, the run does not stop", signals: 1, grace: 10 * time.Millisecond, exits: true, says: "did not stop within"},
		{name: "one signal, nothing written", signals: 1, grace: time.Hour, idle: func() bool { return true }, exits: true, says: "exiting now: nothing was written"},
		{name: "one signal, written", signals: 1, grace: time.Minute, idle: func() bool { return false }, says: "what was done is being recorded"},
		{name: "one signal, a write begins", signals: 1, grace: time.Minute, idle: func() bool { return !wrote.Swap(true) }, says: "nothing was written, nothing to record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sigs := make(chan os.Signal, 2)
			exited := make(chan int, 1)
			var out watchedBuffer
			ctx, done := onSignals(t.Context(), sigs, &out, func(code int) { exited <- code }, tc.grace, tc.idle)
			sigs <- os.Interrupt
			<-ctx.Done()
			if cause := context.Cause(ctx); cause == nil || !strings.Contains(cause.Error(), "stopped by interrupt") {
				t.Errorf("cause %v", cause)
			}
			if tc.signals == 2 {
				sigs <- syscall.SIGTERM
			}
			if !tc.exits {
				select {
				case code := <-exited:
					t.Errorf("exited %d though the run had not stopped yet", code)
				case <-time.After(2 * idleGrace):
				}
				done()
				contains(t, "output", out.String(), tc.says)
				return
			}
			select {
			case code := <-exited:
				if code != exitSignalled {
					t.Errorf("exit %d", code)
				}
			case <-time.After(time.Minute):
				t.Fatal("no exit within the grace the test allows")
			}
			done()
			contains(t, "output", out.String(), tc.says)
		})
	}
}

// SIGINT while a large unit builds stops the run at once, not when the
// build (which kustomize does not stop halfway) or the grace would end:
// an apply, holding the unit's lock, releases it and records nothing (the
// unit never applied anything); a diff, which wrote nothing and holds no
// lock, exits saying there is nothing to record.
func TestSignalDuringABuildStopsAtOnce(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%05d\ndata:\n  key: value-%05d\n", i, i)
	}
	writeFile(t, filepath.Join(dir, "configmaps.yaml"), b.String())
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources:\n- configmaps.yaml\n")
	for _, tc := range []struct{ mode, says string }{
		{"apply", "interrupt: stopping: no new writes"},
		{"diff", "interrupt: stopping: nothing was written, nothing to record"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			args := append([]string{tc.mode, "--name", "building", "--path", dir, "-n", c.ns, "--timeout", "60s"}, c.clusterFlags()...)
			out := &watchedBuffer{watch: "building"}
			cmd := command(t.Context(), out, args...)
			out.on = func() { _ = cmd.Process.Signal(os.Interrupt) }
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == exitOK {
				t.Fatalf("after SIGINT: %v\n%s", err, out)
			}
			contains(t, "the interrupted run", out.String(), tc.says)
			if strings.Contains(out.String(), "did not stop within") || strings.Contains(out.String(), "validating") {
				t.Errorf("the run waited out its grace, or went on past the build:\n%s", out)
			}
			if invs, _ := inventory.List(t.Context(), runtimeClient(t), c.ns); len(invs) != 0 {
				t.Errorf("%d inventories written", len(invs))
			}
			if _, err := cluster.Client(t).CoordinationV1().Leases(c.ns).Get(t.Context(), "kustomize-deploy.building", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the lock is held: %v", err)
			}
		})
	}
}

// SIGKILL mid-apply (no chance to clean up), then a run with half the
// objects gone from Git: it converges, and nothing is orphaned on the way.
func TestKilledRunThenHalfGoneConverges(t *testing.T) {
	const unit, n = "killed", 400
	c := newCLI(t)
	kc, err := kube.New(cluster.Config, c.ns, kube.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	f := newFaultEnv(t, cluster.Client(t), kc, c.ns, unit)
	dir := configMaps(t, n)
	args := append([]string{"apply", "--name", unit, "--path", dir, "-n", c.ns, "--timeout", "60s"}, c.clusterFlags()...)

	out := &watchedBuffer{watch: "applying"}
	cmd := command(t.Context(), out, args...)
	out.on = func() { _ = cmd.Process.Kill() }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("the run was not killed: %v\n%s", err, out)
	}
	f.check("after SIGKILL")
	if len(f.inventory()) != n {
		t.Errorf("after SIGKILL mid-apply the inventory holds %d objects, want the %d the run was writing", len(f.inventory()), n)
	}
	// Its lease would expire in 60 s (the lock package tests that).
	if !f.releaseLeftLock() {
		t.Error("the killed run left no lease: it was not killed while writing")
	}

	var want []string
	for i := range n {
		name := fmt.Sprintf("cm-%04d", i)
		if i%2 == 1 {
			if err := os.Remove(filepath.Join(dir, name+".yaml")); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want = append(want, name)
	}
	if o := c.run(args...); o.code != exitOK {
		t.Fatalf("the run after SIGKILL: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	f.converged("after SIGKILL and half gone", want)
}
