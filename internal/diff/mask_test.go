package diff

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestMain fixes the key of the hashes in masks, so that golden diffs
// are stable; in a run the key is random.
func TestMain(m *testing.M) {
	mask.SetHashKey([]byte("kustomize-deploy apply tests"))
	os.Exit(m.Run())
}

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

func configMap(data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "ns"}, "data": data}}
}

// fields records the paths given, written with dots, as from secrets.
func fields(paths ...string) *object.SecretFields {
	f := &object.SecretFields{}
	for _, p := range paths {
		f.AddField(strings.Split(p, "."))
	}
	return f
}

func contains(t *testing.T, d string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(d, w) {
			t.Errorf("diff lacks %q:\n%s", w, d)
		}
	}
}

func lacks(t *testing.T, d string, leaks ...string) {
	t.Helper()
	for _, l := range leaks {
		if strings.Contains(d, l) {
			t.Errorf("diff shows %q:\n%s", l, d)
		}
	}
}

// A Secret's values are masked key by key; a changed one shows the hashes
// of its old and new values (data decoded, so that data and stringData
// of one value hash alike), an unchanged, new or removed one a plain mask.
func TestUnifiedDiffMasksSecretValues(t *testing.T) {
	t.Parallel()
	before := secret(map[string]any{"same": "c2FtZS12YWx1ZQ==", "changed": "b2xkLXZhbHVl", "dropped": "ZHJvcHBlZA=="}, nil)
	after := secret(map[string]any{"same": "c2FtZS12YWx1ZQ==", "changed": "bmV3LXZhbHVl", "added": "YWRkZWQtdmFsdWU="}, nil)
	d := Unified(object.IDOf(after), before, after, Secrets{})
	lacks(t, d, "c2FtZS12YWx1ZQ==", "b2xkLXZhbHVl", "bmV3LXZhbHVl", "ZHJvcHBlZA==", "YWRkZWQtdmFsdWU=", "old-value", "new-value")
	contains(t, d, "-  changed: '"+MaskHashed("old-value")+"'", "+  changed: '"+MaskChanged("new-value")+"'",
		"   same: '***'", "+  added: '***'", "-  dropped: '***'")
	if MaskHashed("old-value") == MaskHashed("new-value") || !strings.HasPrefix(MaskChanged("new-value"), "*** (changed, sha256:") {
		t.Errorf("masks %q %q", MaskHashed("old-value"), MaskChanged("new-value"))
	}
	// The caller's objects are not modified.
	if after.Object["data"].(map[string]any)["changed"] != "bmV3LXZhbHVl" {
		t.Error("Unified modified its input")
	}
}

func TestUnifiedDiffOfNewSecretAndStringData(t *testing.T) {
	t.Parallel()
	u := secret(nil, map[string]any{"password": "plain-text-password"})
	d := Unified(object.IDOf(u), nil, u, Secrets{})
	if strings.Contains(d, "plain-text-password") || !strings.Contains(d, "+  password: '***'") {
		t.Errorf("new secret diff:\n%s", d)
	}
	m := Masked(u, nil)
	if m.Object["stringData"].(map[string]any)["password"] != Mask || u.Object["stringData"].(map[string]any)["password"] != "plain-text-password" {
		t.Error("Masked must mask a copy, not the original")
	}
}

func TestNonSecretsAreNotMasked(t *testing.T) {
	t.Parallel()
	cm := configMap(map[string]any{"k": "visible"})
	if !strings.Contains(Unified(object.IDOf(cm), nil, cm, Secrets{Values: []string{"visible"}}), "visible") || Masked(cm, nil) != cm {
		t.Error("ConfigMap data was masked")
	}
}

func enc(data string) string { return "ENC[AES256_GCM,data:" + data + ",iv:aXY=,tag:dGFn,type:str]" }

// Rendered without keys (the offline diff), SOPS values stay ciphertext:
// masked in any kind of object, a changed ciphertext shown as a changed
// value (no hash: ciphertext changes whenever it is re-encrypted), never
// the ciphertext itself.
func TestUnifiedDiffMasksCiphertext(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
			d := Unified(object.IDOf(tc.after), tc.before, tc.after, Secrets{})
			contains(t, d, tc.want...)
			lacks(t, d, append(tc.absent, "ENC[")...)
		})
	}
}

// A field of any kind of object whose value came from a secret is masked
// in diffs whatever its value, and so is its live value, an older secret
// no masker knows: a change shows the hashes of both.
func TestUnifiedDiffMasksFieldsFromSecrets(t *testing.T) {
	t.Parallel()
	const secretNow, secretBefore = "new-token-value-1", "old-token-value-0"
	pod := func(args ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": map[string]any{"args": args}}}
	}
	for _, tc := range []struct {
		name          string
		before, after *unstructured.Unstructured
		fields        *object.SecretFields
		want, leaks   []string
	}{{
		name:   "changed",
		before: configMap(map[string]any{"url": "https://u:" + secretBefore + "@db", "plain": "kept"}),
		after:  configMap(map[string]any{"url": "https://u:" + secretNow + "@db", "plain": "changed"}),
		fields: fields("data.url"),
		want: []string{"-  url: '" + MaskHashed("https://u:"+secretBefore+"@db") + "'", "+  url: '" + MaskChanged("https://u:"+secretNow+"@db") + "'",
			"-  plain: kept", "+  plain: changed"},
		leaks: []string{secretNow, secretBefore},
	}, {
		name:   "unchanged, in a list",
		before: pod("--token="+secretNow, "-v"),
		after:  pod("--token="+secretNow, "-v=2"),
		fields: fields("spec.args.0"),
		want:   []string{"  - '***'", "-  - -v", "+  - -v=2"},
		leaks:  []string{secretNow},
	}, {
		name:   "new object",
		after:  configMap(map[string]any{"token": secretNow}),
		fields: fields("data.token"),
		want:   []string{"+  token: '***'"},
		leaks:  []string{secretNow},
	}, {
		name:   "a 1-character value and a 3-digit number",
		before: configMap(map[string]any{"pin": "7", "port": int64(543)}),
		after:  configMap(map[string]any{"pin": "8", "port": int64(543)}),
		fields: fields("data.pin", "data.port"),
		want:   []string{"-  pin: '" + MaskHashed("7") + "'", "+  pin: '" + MaskChanged("8") + "'", "   port: '***'"},
		leaks:  []string{"543"},
	}, {
		name: "a map key and the name",
		before: func() *unstructured.Unstructured {
			u := configMap(map[string]any{"key-" + secretNow: "v"})
			u.SetName("app-" + secretNow)
			return u
		}(),
		after: func() *unstructured.Unstructured {
			u := configMap(map[string]any{"key-" + secretNow: "w"})
			u.SetName("app-" + secretNow)
			return u
		}(),
		fields: &object.SecretFields{Fields: []object.FieldPath{{"metadata", "name"}}, Keys: []object.FieldPath{{"data", "key-" + secretNow}}},
		want: []string{"--- ConfigMap/ns/*** (live)", "+++ ConfigMap/ns/*** (desired)", "   name: '***'",
			"-  '" + MaskHashed("key-"+secretNow) + "': v", "+  '" + MaskHashed("key-"+secretNow) + "': w"},
		leaks: []string{secretNow},
	}, {
		name:   "a Secret's key",
		before: secret(nil, map[string]any{"user-" + secretNow: "a"}),
		after:  secret(nil, map[string]any{"user-" + secretNow: "b"}),
		fields: &object.SecretFields{Keys: []object.FieldPath{{"stringData", "user-" + secretNow}}},
		want:   []string{"-  '" + MaskHashed("user-"+secretNow) + "': '" + MaskHashed("a") + "'", "+  '" + MaskHashed("user-"+secretNow) + "': '" + MaskChanged("b") + "'"},
		leaks:  []string{secretNow},
	}, {
		name:   "a value substituted as YAML: a list",
		before: configMap(map[string]any{"hosts": []any{"a", "b"}}),
		after:  configMap(map[string]any{"hosts": []any{"a", "c"}}),
		fields: fields("data.hosts"),
		want:   []string{"-  hosts: '" + MaskHashed([]any{"a", "b"}) + "'", "+  hosts: '" + MaskChanged([]any{"a", "c"}) + "'"},
		leaks:  []string{"- a", "- c"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Unified(object.IDOf(tc.after), tc.before, tc.after, Secrets{Fields: tc.fields})
			contains(t, d, tc.want...)
			lacks(t, d, tc.leaks...)
		})
	}
}

// Masking goes by where a value came from: a word written in Git is shown
// even when a Secret holds the same word, which the field that took it
// from the Secret hides.
func TestUnifiedDiffShowsPlainTextEqualToASecret(t *testing.T) {
	t.Parallel()
	before := configMap(map[string]any{"user": "postgres", "port": "5432", "password": "postgres", "level": "debug"})
	after := configMap(map[string]any{"user": "postgres", "port": "5432", "password": "postgres", "level": "info"})
	d := Unified(object.IDOf(after), before, after, Secrets{Fields: fields("data.password"), Values: []string{"postgres", "5432"}})
	contains(t, d, "   user: postgres", `   port: "5432"`, "   password: '***'", "-  level: debug", "+  level: info")
	lacks(t, d, "password: postgres")
	if m := Masked(after, fields("data.password")); m.Object["data"].(map[string]any)["user"] != "postgres" || m.Object["data"].(map[string]any)["password"] != Mask {
		t.Errorf("rendered %v", m.Object["data"])
	}
}

// What the live object holds and Git does not say (the desired object
// lacks the field, or sets it otherwise) shows as removed or changed: a
// value the run knows is masked there (found by FuzzUnifiedDiff). And a
// Secret's values are masked wherever else the Secret holds them, as
// kubectl's last-applied annotation does.
func TestUnifiedDiffMasksSecretsOnlyTheLiveObjectHolds(t *testing.T) {
	t.Parallel()
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
		{"renamed key", configMap(map[string]any{"OLD": value}), configMap(map[string]any{"NEW": "plain"}), []string{value}},
		{"a key made of the value", configMap(map[string]any{"x-" + value: "a"}), configMap(map[string]any{"y": "b"}), []string{value}},
		{"shorter list", withList("a", value), withList("b"), []string{value}},
		{"other type", configMap(map[string]any{"x": map[string]any{"y": value}}), configMap(map[string]any{"x": "plain"}), []string{value}},
		{"changed in Git", configMap(map[string]any{"x": value}), configMap(map[string]any{"x": "plain"}), []string{value}},
		{"Secret taken over from kubectl", lastApplied("b"), lastApplied("c"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Unified(object.IDOf(tc.after), tc.before, tc.after, Secrets{Values: tc.secrets})
			if strings.Contains(d, value) || !strings.Contains(d, Mask) {
				t.Errorf("diff:\n%s", d)
			}
		})
	}
}

// The API server merges a Deployment's env with what other managers
// added: a field recorded on the desired object is found again in the
// dry-run's object by the list item's name, not its index.
func TestFieldsOnFindsListItemsByName(t *testing.T) {
	t.Parallel()
	env := func(items ...string) *unstructured.Unstructured {
		var list []any
		for _, n := range items {
			list = append(list, map[string]any{"name": n, "value": n + "-value"})
		}
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "app", "env": list},
		}}}}
	}
	desired := env("LEVEL", "TOKEN")
	merged := env("ADDED_BY_HAND", "LEVEL", "TOKEN")
	got := FieldsOn(fields("spec.containers.0.env.1.value"), desired, merged)
	if diff := cmp.Diff(fields("spec.containers.0.env.2.value"), got); diff != "" {
		t.Errorf("fields on the merged object mismatch (-want +got):\n%s", diff)
	}
	d := Unified(object.ID{Kind: "Deployment", Name: "web"}, env("ADDED_BY_HAND", "LEVEL", "TOKEN"), merged, Secrets{Fields: got})
	lacks(t, d, "TOKEN-value")
}

// The golden diff of a Deployment and a Secret as a pull request's
// comment shows them: a database password substituted into the env
// changed, a token in an annotation did not, the Secret's key rotated,
// and the words Git writes are shown even where a secret has the same.
func TestUnifiedDiffGolden(t *testing.T) {
	t.Parallel()
	read := func(name string) *unstructured.Unstructured {
		data, err := os.ReadFile(filepath.Join("testdata", "provenance", name))
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	deployment := &object.SecretFields{}
	deployment.AddField(object.FieldPath{"metadata", "annotations", "example.com/token"})
	deployment.AddField(object.FieldPath{"spec", "template", "spec", "containers", "0", "env", "1", "value"})
	deployment.AddField(object.FieldPath{"spec", "template", "spec", "containers", "0", "env", "2", "value"})
	known := []string{"postgres", "s3cr3t-old", "s3cr3t-new"}
	var out strings.Builder
	for _, name := range []string{"deployment", "secret"} {
		var f *object.SecretFields
		if name == "deployment" {
			f = deployment
		}
		after := read(name + "-desired.yaml")
		out.WriteString(Unified(object.IDOf(after), read(name+"-live.yaml"), after, Secrets{Fields: f, Values: known}))
	}
	for _, s := range []string{"s3cr3t-old", "s3cr3t-new", "tok-9f8e"} {
		if strings.Contains(out.String(), s) {
			t.Errorf("the diff shows %q", s)
		}
	}
	path := filepath.Join("testdata", "provenance", "diff.golden")
	if *update {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("diff:\n%s\nwant (go test -update rewrites it):\n%s", out.String(), want)
	}
}
