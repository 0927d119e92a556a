package hooks

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func decode(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// A hook is judged as Helm judges it: a Job by its conditions, a Pod by
// its phase, anything else done once it exists.
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      state
		why       string
	}{
		{"a Job without conditions runs", "apiVersion: batch/v1\nkind: Job\n", running, ""},
		{"a complete Job is done", "apiVersion: batch/v1\nkind: Job\nstatus: {conditions: [{type: SuccessCriteriaMet, status: 'True'}, {type: Complete, status: 'True'}]}", done, ""},
		{"a Job failing is not failed until the condition is true", "apiVersion: batch/v1\nkind: Job\nstatus: {conditions: [{type: Failed, status: 'False'}]}", running, ""},
		{"a failed Job says why", "apiVersion: batch/v1\nkind: Job\nstatus: {conditions: [{type: Failed, status: 'True', reason: BackoffLimitExceeded, message: Job has reached the specified backoff limit}]}",
			failed, "the Job failed: BackoffLimitExceeded: Job has reached the specified backoff limit"},
		{"a running Pod runs", "apiVersion: v1\nkind: Pod\nstatus: {phase: Running}", running, ""},
		{"a succeeded Pod is done", "apiVersion: v1\nkind: Pod\nstatus: {phase: Succeeded}", done, ""},
		{"a failed Pod says why", "apiVersion: v1\nkind: Pod\nstatus: {phase: Failed, reason: Evicted, message: low on memory}", failed, "the Pod failed: Evicted: low on memory"},
		{"a ConfigMap is done", "apiVersion: v1\nkind: ConfigMap\n", done, ""},
		{"a Job of another group is done", "apiVersion: example.com/v1\nkind: Job\n", done, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := completion(decode(t, tc.doc))
			if got != tc.want || why != tc.why {
				t.Errorf("got %v %q, want %v %q", got, why, tc.want, tc.why)
			}
		})
	}
}

// Only a hook can be replaced: an object of the hook's name is deleted
// first when it carries every owner label of the unit or Helm's hook
// annotation, never otherwise.
func TestProvablyHook(t *testing.T) {
	owner := map[string]string{"kustomize-deploy.dev/name": "web", "kustomize-deploy.dev/namespace": "deploy"}
	for _, tc := range []struct {
		name, meta string
		want       bool
	}{
		{"the unit's labels", "labels: {kustomize-deploy.dev/name: web, kustomize-deploy.dev/namespace: deploy}", true},
		{"Helm's annotation", "annotations: {helm.sh/hook: pre-install}", true},
		{"another unit's labels", "labels: {kustomize-deploy.dev/name: db, kustomize-deploy.dev/namespace: deploy}", false},
		{"half the labels", "labels: {kustomize-deploy.dev/name: web}", false},
		{"neither", "labels: {app: web}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := decode(t, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, "+tc.meta+"}\n")
			if got := provablyHook(u, owner); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if provablyHook(decode(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"), nil) {
		t.Error("with no owner labels to match, an unmarked object counts as a hook")
	}
}
