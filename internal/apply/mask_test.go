package apply

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

func secret(data map[string]any, stringData map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "ns"}}}
	if data != nil {
		u.Object["data"] = data
	}
	if stringData != nil {
		u.Object["stringData"] = stringData
	}
	return u
}

func TestUnifiedDiffMasksSecretValues(t *testing.T) {
	before := secret(map[string]any{"same": "c2FtZS12YWx1ZQ==", "changed": "b2xkLXZhbHVl", "dropped": "ZHJvcHBlZA=="}, nil)
	after := secret(map[string]any{"same": "c2FtZS12YWx1ZQ==", "changed": "bmV3LXZhbHVl", "added": "YWRkZWQtdmFsdWU="}, nil)
	id := object.IDOf(after)
	d := UnifiedDiff(id, before, after)
	for _, leak := range []string{"c2FtZS12YWx1ZQ==", "b2xkLXZhbHVl", "bmV3LXZhbHVl", "ZHJvcHBlZA==", "YWRkZWQtdmFsdWU="} {
		if strings.Contains(d, leak) {
			t.Errorf("diff leaks %q:\n%s", leak, d)
		}
	}
	for _, want := range []string{"-  changed: '*** (before)'", "+  changed: '*** (after)'", "   same: '***'", "+  added: '***'", "-  dropped: '***'"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	// The caller's objects are not modified.
	if after.Object["data"].(map[string]any)["changed"] != "bmV3LXZhbHVl" {
		t.Error("unified modified its input")
	}
}

func TestUnifiedDiffOfNewSecretAndStringData(t *testing.T) {
	u := secret(nil, map[string]any{"password": "plain-text-password"})
	d := UnifiedDiff(object.IDOf(u), nil, u)
	if strings.Contains(d, "plain-text-password") || !strings.Contains(d, "+  password: '***'") {
		t.Errorf("new secret diff:\n%s", d)
	}
	m := MaskSecret(u)
	if m.Object["stringData"].(map[string]any)["password"] != Mask || u.Object["stringData"].(map[string]any)["password"] != "plain-text-password" {
		t.Error("MaskSecret must mask a copy, not the original")
	}
}

func TestNonSecretsAreNotMasked(t *testing.T) {
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}, "data": map[string]any{"k": "visible"}}}
	if !strings.Contains(UnifiedDiff(object.IDOf(cm), nil, cm), "visible") || MaskSecret(cm) != cm {
		t.Error("ConfigMap data was masked")
	}
}
