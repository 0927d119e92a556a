package object

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFieldPathString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    FieldPath
		want string
	}{
		{FieldPath{"spec", "containers", "0", "env", "12", "value"}, "spec.containers[0].env[12].value"},
		{FieldPath{"metadata", "labels", "app.kubernetes.io/name"}, `metadata.labels["app.kubernetes.io/name"]`},
		{FieldPath{"data", "DB_PASSWORD"}, "data.DB_PASSWORD"},
		{FieldPath{"data", "-1"}, `data["-1"]`},
		{nil, ""},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%q: %q, want %q", []string(tc.p), got, tc.want)
		}
	}
}

func TestFieldPathGet(t *testing.T) {
	t.Parallel()
	obj := map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}}
	if v, ok := (FieldPath{"spec", "ports", "0", "port"}).Get(obj); !ok || v != int64(80) {
		t.Errorf("got %v %v", v, ok)
	}
	for _, p := range []FieldPath{{"spec", "ports", "1"}, {"spec", "ports", "x"}, {"spec", "missing"}, {"spec", "ports", "0", "port", "deeper"}} {
		if _, ok := p.Get(obj); ok {
			t.Errorf("%s found", p)
		}
	}
}

func TestSecretFieldsRecordEachPathOnce(t *testing.T) {
	t.Parallel()
	var none *SecretFields
	if !none.Empty() || !(&SecretFields{}).Empty() {
		t.Error("nothing recorded is empty")
	}
	s := &SecretFields{}
	p := FieldPath{"data", "token"}
	s.AddField(p)
	s.AddField(FieldPath{"data", "token"})
	p[1] = "changed" // what was recorded is a copy
	s.AddKey(FieldPath{"data", "k"})
	u := s.Union(&SecretFields{Fields: []FieldPath{{"data", "token"}, {"data", "url"}}})
	if diff := cmp.Diff(&SecretFields{Fields: []FieldPath{{"data", "token"}}, Keys: []FieldPath{{"data", "k"}}}, s); diff != "" {
		t.Errorf("recorded mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&SecretFields{Fields: []FieldPath{{"data", "token"}, {"data", "url"}}, Keys: []FieldPath{{"data", "k"}}}, u); diff != "" {
		t.Errorf("union mismatch (-want +got):\n%s", diff)
	}
	if !none.Union(nil).Empty() {
		t.Error("the union of nothing is not empty")
	}
}

// Two objects trading names keep their own values.
func TestRekeySwaps(t *testing.T) {
	t.Parallel()
	a, b, c := ID{Kind: "ConfigMap", Name: "a"}, ID{Kind: "ConfigMap", Name: "b"}, ID{Kind: "ConfigMap", Name: "c"}
	m := map[ID]string{a: "from a", b: "from b", c: "from c"}
	Rekey(m, map[ID]ID{a: b, b: a})
	if diff := cmp.Diff(map[ID]string{a: "from b", b: "from a", c: "from c"}, m); diff != "" {
		t.Errorf("swap mismatch (-want +got):\n%s", diff)
	}
	d := ID{Kind: "ConfigMap", Name: "d"}
	Rekey(m, map[ID]ID{c: d})
	if diff := cmp.Diff(map[ID]string{a: "from b", b: "from a", d: "from c"}, m); diff != "" {
		t.Errorf("rename mismatch (-want +got):\n%s", diff)
	}
}
