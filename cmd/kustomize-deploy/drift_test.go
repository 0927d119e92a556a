package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

func (c *cli) drift(args ...string) (outcome, *result.Result) {
	c.t.Helper()
	o := c.run(append([]string{"drift", "--output", "json", "--timeout", "60s"}, args...)...)
	var r result.Result
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		c.t.Fatalf("drift printed no JSON (exit %d): %v\n%s\n%s", o.code, err, o.stdout, o.stderr)
	}
	return o, &r
}

// Replicas an HPA sets are not drift (Git does not set them); an edit of
// a field Git sets is, reported without a change, then corrected with
// --correct, the HPA's replicas left alone.
func TestDriftLeavesOtherManagersFieldsAlone(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	// As Flux recommends with an HPA, Git leaves replicas out.
	writeFile(t, filepath.Join(dir, "deployment.yaml"), `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: registry.example/web:1.0}]
`)
	writeFile(t, filepath.Join(dir, "configmap.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {greeting: hello}\n")
	args := []string{"--name", "drifty", "--path", dir, "--target-namespace", c.ns}
	if o, r := c.apply(args...); o.code != exitOK {
		t.Fatalf("apply: %s %s", r.Reason, r.Message)
	}
	deployments := cluster.Client(t).AppsV1().Deployments(c.ns)
	// The HPA scales through the scale subresource, as its own manager.
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: c.ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	if _, err := deployments.UpdateScale(t.Context(), "web", scale, metav1.UpdateOptions{FieldManager: "horizontal-pod-autoscaler"}); err != nil {
		t.Fatal(err)
	}
	o, r := c.drift(args...)
	if o.code != exitOK || r.Drifted || r.Mode != result.ModeDrift {
		t.Fatalf("replicas set by an HPA were taken for drift: exit %d drifted %v %q", o.code, r.Drifted, r.Message)
	}

	// An edit of a field Git sets is drift; one of a field Git leaves out
	// (a key kubectl added) is not.
	cms := cluster.Client(t).CoreV1().ConfigMaps(c.ns)
	cm, err := cms.Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["greeting"] = "edited by hand"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	o, r = c.drift(append(args, "--fail-on-drift")...)
	if o.code != exitFail || !r.Drifted {
		t.Fatalf("an edit by hand: exit %d drifted %v %q", o.code, r.Drifted, r.Message)
	}
	wantActions(t, r, map[string]result.Action{"ConfigMap/" + c.ns + "/settings": result.Configured})
	cm, _ = cms.Get(t.Context(), "settings", metav1.GetOptions{})
	if cm.Data["greeting"] != "edited by hand" {
		t.Errorf("a drift report changed the cluster: %v", cm.Data)
	}

	o, r = c.drift(append(args, "--correct")...)
	if o.code != exitOK || !r.Drifted || !r.Ready {
		t.Fatalf("--correct: exit %d %s %q", o.code, r.Reason, r.Message)
	}
	cm, _ = cms.Get(t.Context(), "settings", metav1.GetOptions{})
	if cm.Data["greeting"] != "hello" {
		t.Errorf("--correct left the edit: %v", cm.Data)
	}
	d, _ := deployments.Get(t.Context(), "web", metav1.GetOptions{})
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("--correct reverted the HPA's replicas: %v", d.Spec.Replicas)
	}
}
