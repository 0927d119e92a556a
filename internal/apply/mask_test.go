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
	d := UnifiedDiff(id, before, after, nil)
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
	d := UnifiedDiff(object.IDOf(u), nil, u, nil)
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
	if !strings.Contains(UnifiedDiff(object.IDOf(cm), nil, cm, nil), "visible") || MaskSecret(cm) != cm {
		t.Error("ConfigMap data was masked")
	}
}

func enc(data string) string { return "ENC[AES256_GCM,data:" + data + ",iv:aXY=,tag:dGFn,type:str]" }

// Rendered without keys (the offline diff), SOPS values stay ciphertext:
// masked in any kind of object, a changed ciphertext shown as a changed
// value, never the ciphertext itself.
func TestUnifiedDiffMasksCiphertext(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after *unstructured.Unstructured
		want, absent  []string
	}{
		{
			name:   "ConfigMap, one value re-encrypted",
			before: configMap(map[string]any{"same": enc("c2FtZQ=="), "changed": enc("b2xk"), "plain": "visible"}),
			after:  configMap(map[string]any{"same": enc("c2FtZQ=="), "changed": enc("bmV3"), "plain": "visible"}),
			want:   []string{"   same: '***'", "-  changed: '*** (before)'", "+  changed: '*** (after)'", "   plain: visible"},
		},
		{
			name:   "nested and in lists, new object",
			after:  configMap(map[string]any{"nested": map[string]any{"list": []any{enc("YQ=="), "b"}}}),
			want:   []string{"+    - '***'", "+    - b"},
			absent: []string{"YQ=="},
		},
		{
			name:   "value removed and added",
			before: configMap(map[string]any{"gone": enc("Z29uZQ==")}),
			after:  configMap(map[string]any{"new": enc("bmV3")}),
			want:   []string{"-  gone: '***'", "+  new: '***'"},
		},
		{
			name:   "Secret, sealed",
			before: secret(map[string]any{"password": enc("b2xk")}, nil),
			after:  secret(map[string]any{"password": enc("bmV3")}, nil),
			want:   []string{"-  password: '*** (before)'", "+  password: '*** (after)'"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := UnifiedDiff(object.IDOf(tc.after), tc.before, tc.after, nil)
			for _, w := range tc.want {
				if !strings.Contains(d, w) {
					t.Errorf("diff lacks %q:\n%s", w, d)
				}
			}
			if strings.Contains(d, "ENC[") {
				t.Errorf("diff shows ciphertext:\n%s", d)
			}
			for _, a := range tc.absent {
				if strings.Contains(d, a) {
					t.Errorf("diff shows %q:\n%s", a, d)
				}
			}
		})
	}
}

func configMap(data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "ns"}, "data": data}}
}

// A field of any kind of object holding a secret value (substituted from
// a Secret, or decrypted) is masked in diffs, and so is its live value,
// an older secret no masker knows.
func TestUnifiedDiffMasksFieldsHoldingSecrets(t *testing.T) {
	const secretNow, secretBefore = "new-token-value-1", "old-token-value-0"
	for _, tc := range []struct {
		name          string
		before, after *unstructured.Unstructured
		secrets       []string
		want, leaks   []string
	}{{
		name:    "changed",
		before:  configMap(map[string]any{"url": "https://u:" + secretBefore + "@db", "plain": "kept"}),
		after:   configMap(map[string]any{"url": "https://u:" + secretNow + "@db", "plain": "changed"}),
		secrets: []string{secretNow},
		want:    []string{"-  url: '*** (before)'", "+  url: '*** (after)'", "-  plain: kept", "+  plain: changed"},
		leaks:   []string{secretNow, secretBefore},
	}, {
		name:    "unchanged, in a list",
		before:  &unstructured.Unstructured{Object: map[string]any{"kind": "Pod", "spec": map[string]any{"args": []any{"--token=" + secretNow, "-v"}}}},
		after:   &unstructured.Unstructured{Object: map[string]any{"kind": "Pod", "spec": map[string]any{"args": []any{"--token=" + secretNow, "-v=2"}}}},
		secrets: []string{secretNow},
		want:    []string{"  - '***'", "-  - -v", "+  - -v=2"},
		leaks:   []string{secretNow},
	}, {
		name:    "new object",
		after:   configMap(map[string]any{"token": secretNow}),
		secrets: []string{secretNow},
		want:    []string{"+  token: '***'"},
		leaks:   []string{secretNow},
	}, {
		name:    "short values mask nothing",
		before:  configMap(map[string]any{"flag": "yes"}),
		after:   configMap(map[string]any{"flag": "no"}),
		secrets: []string{"no", " "},
		want:    []string{"-  flag: \"yes\"", "+  flag: \"no\""},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := UnifiedDiff(object.IDOf(tc.after), tc.before, tc.after, tc.secrets)
			for _, w := range tc.want {
				if !strings.Contains(d, w) {
					t.Errorf("diff lacks %q:\n%s", w, d)
				}
			}
			for _, l := range tc.leaks {
				if strings.Contains(d, l) {
					t.Errorf("diff leaks %q:\n%s", l, d)
				}
			}
		})
	}
}

// What the live object has and the desired one lacks shows as removed:
// a secret there is masked too (found by FuzzUnifiedDiff). And a Secret's
// values are masked wherever else the Secret holds them, as kubectl's
// last-applied annotation does.
func TestUnifiedDiffMasksSecretsOnlyTheLiveObjectHolds(t *testing.T) {
	const value = "hunter22-value"
	withList := func(items ...any) *unstructured.Unstructured {
		u := configMap(nil)
		u.Object["list"] = items
		return u
	}
	lastApplied := func(label string) *unstructured.Unstructured {
		u := secret(nil, map[string]any{"password": value})
		u.SetLabels(map[string]string{"a": label})
		u.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"password":"` + value + `"}}`})
		return u
	}
	for _, tc := range []struct {
		name          string
		before, after *unstructured.Unstructured
		secrets       []string
	}{
		{"renamed key", configMap(map[string]any{"OLD": value}), configMap(map[string]any{"NEW": value}), []string{value}},
		{"shorter list", withList("a", value), withList(value), []string{value}},
		{"other type", configMap(map[string]any{"x": map[string]any{"y": value}}), configMap(map[string]any{"x": "plain"}), []string{value}},
		{"Secret taken over from kubectl", lastApplied("b"), lastApplied("c"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := UnifiedDiff(object.IDOf(tc.after), tc.before, tc.after, tc.secrets)
			if strings.Contains(d, value) || !strings.Contains(d, Mask) {
				t.Errorf("diff:\n%s", d)
			}
		})
	}
}
