package object

import "testing"

func TestFieldPathString(t *testing.T) {
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
	if len(s.Fields) != 1 || s.Fields[0].String() != "data.token" || len(u.Fields) != 2 || len(u.Keys) != 1 || !none.Union(nil).Empty() {
		t.Errorf("recorded %v, union %v", s, u)
	}
}

// Two objects trading names keep their own values.
func TestRekeySwaps(t *testing.T) {
	a, b, c := ID{Kind: "ConfigMap", Name: "a"}, ID{Kind: "ConfigMap", Name: "b"}, ID{Kind: "ConfigMap", Name: "c"}
	m := map[ID]string{a: "from a", b: "from b", c: "from c"}
	Rekey(m, map[ID]ID{a: b, b: a})
	if m[a] != "from b" || m[b] != "from a" || m[c] != "from c" || len(m) != 3 {
		t.Errorf("rekeyed %v", m)
	}
	Rekey(m, map[ID]ID{c: {Kind: "ConfigMap", Name: "d"}})
	if _, ok := m[c]; ok || m[ID{Kind: "ConfigMap", Name: "d"}] != "from c" || len(m) != 3 {
		t.Errorf("rekeyed %v", m)
	}
}
