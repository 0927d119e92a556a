package health

import (
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

func clients(t *testing.T, cfg *rest.Config, ns string) *kube.Clients {
	t.Helper()
	c, err := kube.New(cfg, ns, kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func crashDeployment(name string, podLabels map[string]string, nodeSelector map[string]string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	for k, v := range podLabels {
		labels[k] = v
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: nodeSelector,
					Containers:   []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
				},
			},
		},
	}
}

// waitFails waits for d (created in ns) and returns the verdict, which
// must be a NotReadyError, and the progress written meanwhile.
func waitFails(t *testing.T, c *kube.Clients, ns string, d *appsv1.Deployment) (*NotReadyError, string) {
	t.Helper()
	if _, err := cluster.Client(t).AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var progress syncBuffer
	id := object.ID{Group: "apps", Kind: "Deployment", Namespace: ns, Name: d.Name}
	_, err := Wait(t.Context(), c, []object.ID{id}, Options{Timeout: 12 * time.Second, Progress: &progress, EventsEvery: 500 * time.Millisecond})
	var nr *NotReadyError
	if !errors.As(err, &nr) {
		t.Fatalf("Wait = %v, want a NotReadyError", err)
	}
	return nr, progress.String()
}

func findEvent(diags []result.Diagnostic, reason string) (result.Event, bool) {
	for _, d := range diags {
		for _, e := range d.Events {
			if e.Reason == reason {
				return e, true
			}
		}
	}
	return result.Event{}, false
}

// Pods that no node can take stay Pending: the verdict names the
// scheduler's FailedScheduling and its message, and progress said it as
// it happened, once.
func TestDiagnoseUnschedulable(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	c := clients(t, cluster.Config, ns)
	nr, progress := waitFails(t, c, ns, crashDeployment("web", nil, map[string]string{"disktype": "nowhere"}))
	t.Logf("verdict:\n%s\nprogress:\n%s", nr, progress)

	e, ok := findEvent(nr.Diagnostics, "FailedScheduling")
	if !ok {
		t.Fatalf("no FailedScheduling in the diagnostics: %+v\n%s", nr.Diagnostics, nr)
	}
	if e.Type != corev1.EventTypeWarning || !strings.Contains(e.Message, "didn't match Pod's node affinity/selector") || len(e.Objects) != 2 || e.Count < 2 {
		t.Errorf("FailedScheduling = %+v; want the scheduler's message on both pods", e)
	}
	msg := nr.Error()
	if !strings.Contains(msg, "Warning FailedScheduling") || !strings.Contains(msg, "node affinity/selector") {
		t.Errorf("the verdict does not name the scheduler's reason:\n%s", msg)
	}
	if n := strings.Count(progress, "FailedScheduling"); n != 1 {
		t.Errorf("progress says FailedScheduling %d times, want once:\n%s", n, progress)
	}
	if !strings.Contains(progress, "warning: Deployment/"+ns+"/web: FailedScheduling on Pod/web-") {
		t.Errorf("progress does not name the Deployment and its pod:\n%s", progress)
	}
}

// A crash-looping container: its state, exit code and restarts, the
// kubelet's BackOff event, and the previous instance's last lines of log.
func TestDiagnoseCrashLoop(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	c := clients(t, cluster.Config, ns)
	var previous []string
	for i := range 30 {
		previous = append(previous, "line "+strings.Repeat("x", i))
	}
	previous = append(previous, "panic: cannot reach the database")
	cluster.ServeLogs(t, ns, testcluster.ContainerLog{Container: "app", Lines: []string{"starting again"}, Previous: previous})
	nr, _ := waitFails(t, c, ns, crashDeployment("api", map[string]string{testcluster.CrashLabel: "3"}, nil))
	t.Logf("verdict:\n%s\nlogs: %+v", nr, nr.Diagnostics)

	if len(nr.Diagnostics) != 1 {
		t.Fatalf("diagnostics = %+v, want one for the Deployment", nr.Diagnostics)
	}
	d := nr.Diagnostics[0]
	if len(d.Containers) == 0 {
		t.Fatalf("no container states: %+v", d)
	}
	cs := d.Containers[0]
	if cs.Reason != "CrashLoopBackOff" || cs.LastExitCode == nil || *cs.LastExitCode != 3 || cs.Restarts != testcluster.CrashRestarts {
		t.Errorf("container state = %s; want CrashLoopBackOff after exit code 3, %d restarts", cs, testcluster.CrashRestarts)
	}
	if _, ok := findEvent(nr.Diagnostics, "BackOff"); !ok {
		t.Errorf("no BackOff event: %+v", d.Events)
	}
	if len(d.Logs) != 2 {
		t.Fatalf("logs = %+v, want the previous instance's of both pods", d.Logs)
	}
	l := d.Logs[0]
	if !l.Previous || l.Container != "app" || len(l.Lines) != LogLines || l.Lines[LogLines-1] != "panic: cannot reach the database" {
		t.Errorf("log = %+v; want the last %d lines of the previous instance", l, LogLines)
	}
	if msg := nr.Error(); !strings.Contains(msg, "waiting CrashLoopBackOff") || !strings.Contains(msg, "exit code 3") {
		t.Errorf("the verdict does not say how the container failed:\n%s", msg)
	}
}

// An identity that may read the workload but not events nor logs gets a
// note for each, and the verdict as before.
func TestDiagnoseWithoutRights(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	admin := cluster.Client(t)
	ctx := t.Context()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: ns}},
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cluster.ServeLogs(t, ns, testcluster.ContainerLog{Container: "app", Previous: []string{"boom"}})
	c := clients(t, cluster.ConfigAsServiceAccount(ns, "reader"), ns)
	nr, progress := waitFails(t, c, ns, crashDeployment("api", map[string]string{testcluster.CrashLabel: "1"}, nil))

	if len(nr.Diagnostics) != 1 {
		t.Fatalf("diagnostics = %+v", nr.Diagnostics)
	}
	d := nr.Diagnostics[0]
	if len(d.Events)+len(d.Logs) != 0 || len(d.Containers) == 0 {
		t.Errorf("diagnostic = %+v; want container states only", d)
	}
	notes := strings.Join(d.Notes, "\n")
	for _, want := range []string{"RBAC: list events", "RBAC: get pods/log"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q do not say %q", d.Notes, want)
		}
	}
	if n := strings.Count(progress, "RBAC: list events"); n != 1 {
		t.Errorf("progress says the events are forbidden %d times, want once:\n%s", n, progress)
	}
}

// A ReplicaSet a ResourceQuota refuses pods: the Deployment's diagnosis
// names the controller's FailedCreate on its ReplicaSet, with the quota's
// message, though no pod exists to look at.
func TestDiagnoseQuota(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}},
	}
	if _, err := cluster.Client(t).CoreV1().ResourceQuotas(ns).Create(t.Context(), quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := clients(t, cluster.Config, ns)
	nr, _ := waitFails(t, c, ns, crashDeployment("web", nil, nil))
	e, ok := findEvent(nr.Diagnostics, "FailedCreate")
	if !ok || !strings.Contains(e.Message, "exceeded quota: no-pods") || !strings.HasPrefix(e.Objects[0], "ReplicaSet/web-") {
		t.Errorf("FailedCreate = %+v (%v), want the ReplicaSet's quota refusal\n%s", e, ok, nr)
	}
}
