package diff

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(y map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: y} }

func cm(data map[string]any, extra ...map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "n", "resourceVersion": "1"}, "data": data}
	for _, e := range extra {
		for k, v := range e {
			o[k] = v
		}
	}
	return obj(o)
}

func TestFieldChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		before, after *unstructured.Unstructured
		secrets       []string
		want          []FieldChange
	}{
		{"equal", cm(map[string]any{"a": "1"}), cm(map[string]any{"a": "1"}), nil, nil},
		{"changed, added and removed keys, in path order",
			cm(map[string]any{"a": "1", "gone": "x"}), cm(map[string]any{"a": "2", "new": ""}), nil,
			[]FieldChange{{"data.a", "1", "2"}, {"data.gone", "x", ""}, {"data.new", "", `""`}}},
		{"a key that is not a plain name is quoted",
			cm(map[string]any{"app.conf": "a"}), cm(map[string]any{"app.conf": "b"}), nil,
			[]FieldChange{{`data["app.conf"]`, "a", "b"}}},
		{"list items compare by index, and a longer list adds items",
			cm(nil, map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}}),
			cm(nil, map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(8080)}, map[string]any{"port": int64(443)}}}}), nil,
			[]FieldChange{{"spec.ports[0].port", "80", "8080"}, {"spec.ports[1]", "", `{"port":443}`}}},
		{"server-managed noise is not a change",
			cm(map[string]any{"a": "1"}, map[string]any{"status": map[string]any{"x": "y"}}), cm(map[string]any{"a": "1"}), nil, nil},
		{"a live value holding a secret where Git says something else is masked; Git's text is shown",
			cm(map[string]any{"url": "postgres://u:old-secret@db"}), cm(map[string]any{"url": "postgres://u@db"}), []string{"old-secret"},
			[]FieldChange{{"data.url", Mask, "postgres://u@db"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := FieldChanges(tc.before, tc.after, Secrets{Values: tc.secrets})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("field changes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A Secret's values never show, changed or not, in any field.
func TestFieldChangesOfASecret(t *testing.T) {
	t.Parallel()
	secret := func(v string) *unstructured.Unstructured {
		return obj(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "n",
			"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"password":"` + v + `"}}`}},
			"stringData": map[string]any{"password": v}})
	}
	got := FieldChanges(secret("hunter2-live"), secret("hunter2-git"), Secrets{})
	if len(got) == 0 {
		t.Fatal("a changed Secret shows no change")
	}
	for _, c := range got {
		if strings.Contains(c.From+c.To, "hunter2") {
			t.Errorf("a Secret value shows: %+v", c)
		}
	}
}

// manager stands for the field manager of this tool's writes.
const manager = "kustomize-deploy"

func TestOwnedFieldsAndCovers(t *testing.T) {
	t.Parallel()
	u := obj(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "s",
		"labels": map[string]any{"app.kubernetes.io/name": "web"}},
		"spec": map[string]any{
			"ports":    []any{map[string]any{"port": int64(80), "protocol": "TCP", "name": "http"}, map[string]any{"port": int64(443), "protocol": "TCP"}},
			"finalist": []any{"a", "b"},
			"selector": map[string]any{"app": "web"},
		}})
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "someone", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:selector":{}}}`)}},
		{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:selector":{}}}`)}},
		{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(
			`{"f:metadata":{"f:labels":{"f:app.kubernetes.io/name":{}}},"f:spec":{"f:ports":{"k:{\"port\":443,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}},"f:finalist":{"v:\"b\"":{}}}}`)}},
	})
	owned := OwnedFields(u, manager)
	covers := map[string]bool{
		`metadata.labels["app.kubernetes.io/name"]`: true,  // a key with dots
		"spec.ports[1].port":                        true,  // found by its keys
		"spec.ports[1]":                             true,  // the item as such (".")
		"spec.ports[1].protocol":                    false, // "." owns the item, not its fields
		"spec.ports[0].port":                        false, // another item
		"spec.finalist[1]":                          true,  // found by its value
		"spec.finalist[0]":                          false,
		"spec.selector.app":                         false, // owned by an update, or by another manager
	}
	gotCovers := map[string]bool{}
	for path := range covers {
		gotCovers[path] = Covers(owned, path)
	}
	if diff := cmp.Diff(covers, gotCovers); diff != "" {
		t.Errorf("Covers mismatch (-want +got), owned %v:\n%s", owned, diff)
	}
	at := map[string]string{
		`metadata.labels["app.kubernetes.io/name"]`: "web",
		"spec.ports[1].port":                        "443",
		"spec.ports[0]":                             `{"name":"http","port":80,"protocol":"TCP"}`,
		"spec.ports[2]":                             "",
		"spec.nothing.here":                         "",
	}
	gotAt := map[string]string{}
	for path := range at {
		gotAt[path] = FieldAt(u, path, Secrets{})
	}
	if diff := cmp.Diff(at, gotAt); diff != "" {
		t.Errorf("FieldAt mismatch (-want +got):\n%s", diff)
	}
	leaves := Leaves(u)
	for _, path := range []string{"spec.ports[0].name", "spec.finalist[1]", `metadata.labels["app.kubernetes.io/name"]`} {
		if !leaves[path] {
			t.Errorf("Leaves lacks %s: %v", path, leaves)
		}
	}
	if leaves["metadata.managedFields"] || leaves["spec.ports[0]"] {
		t.Errorf("Leaves holds noise or a parent: %v", leaves)
	}
}

// A field whose value came from a secret shows masked on both sides, with
// hashes that tell a change.
func TestFieldChangesOfASecretField(t *testing.T) {
	t.Parallel()
	before, after := cm(map[string]any{"url": "postgres://u:old-secret@db"}), cm(map[string]any{"url": "postgres://u:new-secret@db"})
	got := FieldChanges(before, after, Secrets{Fields: fields("data.url")})
	if len(got) != 1 || got[0].Field != "data.url" || !strings.HasPrefix(got[0].From, "*** (sha256:") || !strings.HasPrefix(got[0].To, "*** (changed, sha256:") {
		t.Errorf("got %q", got)
	}
	if strings.Contains(fmt.Sprint(got), "secret") {
		t.Errorf("a secret shows: %q", got)
	}
}
