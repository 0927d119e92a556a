package testcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

var cluster *Cluster

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	os.Exit(Main(m, &cluster))
}

func deployment(name string, replicas int32, podLabels map[string]string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	for k, v := range podLabels {
		labels[k] = v
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
			},
		},
	}
}

func TestDeploymentBecomesAvailable(t *testing.T) {
	ns := cluster.Namespace(t)
	client := cluster.Client(t)
	ctx := t.Context()
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, deployment("web", 3, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.ReadyReplicas == 3 && d.Status.AvailableReplicas == 3 && hasCondition(d.Status.Conditions, appsv1.DeploymentAvailable), nil
	})
	if err != nil {
		d, _ := client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		t.Fatalf("deployment never became available: %v; status %+v", err, d.Status)
	}
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 3 {
		t.Fatalf("want 3 pods, got %d", len(pods.Items))
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
			t.Errorf("pod %s: node %q phase %s ip %q; want scheduled, Running, with an IP", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.PodIP)
		}
	}
}

func hasCondition(conds []appsv1.DeploymentCondition, typ appsv1.DeploymentConditionType) bool {
	for _, c := range conds {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func TestFailReadinessLabelKeepsPodUnready(t *testing.T) {
	ns := cluster.Namespace(t)
	client := cluster.Client(t)
	ctx := t.Context()
	// The control goes through the same kwok stages and controllers without
	// the label: once it is Available, a working pod in "broken" would have
	// had the time to make its Deployment Available too, however slow the
	// controllers are today.
	for _, d := range []*appsv1.Deployment{
		deployment("broken", 1, map[string]string{FailReadinessLabel: FailReadinessValue}),
		deployment("control", 1, nil),
	} {
		if _, err := client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	broken, control := &appsv1.Deployment{}, &appsv1.Deployment{}
	var pod corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		c, err := client.AppsV1().Deployments(ns).Get(ctx, "control", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		b, err := client.AppsV1().Deployments(ns).Get(ctx, "broken", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		control, broken = c, b
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=broken"})
		if err != nil || len(pods.Items) != 1 {
			return false, err
		}
		pod = pods.Items[0]
		return hasCondition(control.Status.Conditions, appsv1.DeploymentAvailable) &&
			pod.Status.Phase == corev1.PodRunning && reportsOnPod(broken), nil
	})
	if err != nil {
		t.Fatalf("never settled: %v\ncontrol status %+v\nbroken status %+v\npod %s status %+v", err, control.Status, broken.Status, pod.Name, pod.Status)
	}
	ready := podCondition(&pod, corev1.PodReady)
	if ready == nil || ready.Status != corev1.ConditionFalse || ready.Message != FailReadinessMessage {
		t.Fatalf("pod %s Ready condition = %+v; want False with %q", pod.Name, ready, FailReadinessMessage)
	}
	available := deploymentCondition(broken.Status.Conditions, appsv1.DeploymentAvailable)
	if broken.Status.ReadyReplicas != 0 || broken.Status.UnavailableReplicas != 1 || available == nil || available.Status != corev1.ConditionFalse {
		t.Fatalf("deployment with an unready pod: readyReplicas %d, unavailableReplicas %d, Available %+v; want 0, 1, False",
			broken.Status.ReadyReplicas, broken.Status.UnavailableReplicas, available)
	}
}

// reportsOnPod reports whether the Deployment controller has caught up with
// d's spec and counted its one pod, so its status says something about it.
func reportsOnPod(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration == d.Generation && d.Status.Replicas == 1 && d.Status.UpdatedReplicas == 1 &&
		deploymentCondition(d.Status.Conditions, appsv1.DeploymentAvailable) != nil
}

func deploymentCondition(conds []appsv1.DeploymentCondition, typ appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func TestImpersonatedServiceAccountNeedsRBAC(t *testing.T) {
	ns := cluster.Namespace(t)
	admin := cluster.Client(t)
	ctx := t.Context()
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa, err := kubernetes.NewForConfig(cluster.ConfigAsServiceAccount(ns, "deployer"))
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	_, err = sa.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("service account without RBAC created a ConfigMap: err = %v, want Forbidden", err)
	}
	if !strings.Contains(err.Error(), "system:serviceaccount:"+ns+":deployer") {
		t.Errorf("refusal does not name the service account: %v", err)
	}

	// With a Role bound, the same call goes through: the refusal was RBAC's.
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "configmaps"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "configmaps"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := sa.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("service account still refused after the RoleBinding: %v", err)
	}
}

func TestKubeconfigFileWorks(t *testing.T) {
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != KubernetesVersion {
		t.Errorf("server reports %s, want %s", v.GitVersion, KubernetesVersion)
	}
	info, err := os.Stat(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v, want 0600 (it holds an admin token)", info.Mode().Perm())
	}
}

func TestAPIServerRestart(t *testing.T) {
	ns := cluster.Namespace(t)
	client := cluster.Client(t)
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}, Data: map[string]string{"k": "v"}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cluster.StopAPIServer()
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, err := client.CoreV1().ConfigMaps(ns).Get(short, "before", metav1.GetOptions{})
	cancel()
	if err == nil {
		t.Fatal("API server still answers after StopAPIServer")
	}

	if err := cluster.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "before", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if got.Data["k"] != "v" {
		t.Errorf("data lost across restart: %v", got.Data)
	}
	// The rest of the control plane reconnects: a new Deployment still rolls out.
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, deployment("after", 1, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := client.AppsV1().Deployments(ns).Get(ctx, "after", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 1, nil
	})
	if err != nil {
		t.Fatalf("deployment created after the restart never became ready: %v", err)
	}
}

// helperEnv makes the test binary, run again as a child, start a cluster and
// wait to be killed: TestKilledOwnerTakesClusterWithIt uses it.
const helperEnv = "TESTCLUSTER_HELPER_DIR"

func helperMain() int {
	dir := os.Getenv(helperEnv)
	c, err := Start(context.Background(), Options{Dir: dir, Nodes: 1, Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var lines []string
	for name, pid := range c.pids() {
		lines = append(lines, name+" "+strconv.Itoa(pid))
	}
	if err := os.WriteFile(filepath.Join(dir, "pids"), []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		return 1
	}
	select {} // until killed
}

func TestStopLeavesNothingBehind(t *testing.T) {
	c, err := Start(t.Context(), Options{Nodes: 1, BinDir: cluster.opts.BinDir})
	if err != nil {
		t.Fatal(err)
	}
	pids := c.pids()
	if len(pids) != 5 {
		t.Fatalf("want 5 components, got %v", pids)
	}
	port := strings.TrimPrefix(c.Config.Host, "https://")
	dir := c.Dir
	c.Stop()
	assertGone(t, pids)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temporary directory %s survives Stop", dir)
	}
	if l, err := net.Listen("tcp", port); err != nil {
		t.Errorf("API server port %s still taken after Stop: %v", port, err)
	} else {
		l.Close()
	}
	c.Stop() // a second Stop is harmless
}

func TestKilledOwnerTakesClusterWithIt(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pidFile := filepath.Join(dir, "pids")
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		_, err := os.Stat(pidFile)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("helper cluster never started: %v\n%s", err, out)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		name, pid, _ := strings.Cut(line, " ")
		pids[name], _ = strconv.Atoi(pid)
	}
	if len(pids) != 5 {
		t.Fatalf("helper reported %v", pids)
	}
	// SIGKILL: no deferred cleanup runs in the owner; Pdeathsig must do it.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	assertGone(t, pids)
}

func assertGone(t *testing.T, pids map[string]int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for name, pid := range pids {
		for {
			err := syscall.Kill(pid, 0)
			if errors.Is(err, syscall.ESRCH) {
				break
			}
			// A zombie of an exited child still answers kill(0); check its state.
			if state, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); strings.Contains(string(state), ") Z ") {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s (pid %d) still running", name, pid)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
