package decrypt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSecretValues(t *testing.T) {
	t.Parallel()
	secret := func(data, stringData map[string]interface{}) *unstructured.Unstructured {
		obj := map[string]interface{}{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]interface{}{"name": "s"}}
		if data != nil {
			obj["data"] = data
		}
		if stringData != nil {
			obj["stringData"] = stringData
		}
		return &unstructured.Unstructured{Object: obj}
	}
	tests := []struct {
		name string
		objs []*unstructured.Unstructured
		want []string
	}{
		{name: "nothing", want: []string{}},
		{
			name: "data base64 and decoded, stringData",
			objs: []*unstructured.Unstructured{secret(
				map[string]interface{}{"password": "aHVudGVyMg=="}, // hunter2
				map[string]interface{}{"user": "admin"},
			)},
			want: []string{"aHVudGVyMg==", "hunter2", "admin"},
		},
		{
			name: "empty values skipped, duplicates removed, across objects",
			objs: []*unstructured.Unstructured{
				secret(map[string]interface{}{"a": "", "b": "eA=="}, map[string]interface{}{"c": ""}),
				secret(nil, map[string]interface{}{"d": "x", "e": "eA=="}),
			},
			want: []string{"eA==", "x"},
		},
		{
			name: "not base64: kept as written only",
			objs: []*unstructured.Unstructured{secret(map[string]interface{}{"a": "not base64!"}, nil)},
			want: []string{"not base64!"},
		},
		{
			name: "longest first then lexicographic",
			objs: []*unstructured.Unstructured{secret(nil, map[string]interface{}{"a": "bb", "b": "a", "c": "ccc", "d": "aa"})},
			want: []string{"ccc", "aa", "bb", "a"},
		},
		{
			name: "other kinds ignored",
			objs: []*unstructured.Unstructured{
				{Object: map[string]interface{}{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]interface{}{"a": "public"}}},
				{Object: map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Secret", "data": map[string]interface{}{"a": "custom"}}},
				nil,
			},
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := SecretValues(tt.objs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SecretValues mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
