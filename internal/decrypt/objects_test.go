package decrypt

import (
	"context"
	"encoding/base64"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

func TestDecryptObjectsWholeManifest(t *testing.T) {
	t.Parallel()
	key := newTestKey(t)
	enc := encrypt(t, key.recipient, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex)
	u := fromYAML(t, enc)
	before := u

	if err := newTestDecryptor(t, key).DecryptObjects(context.Background(), []*unstructured.Unstructured{u}, nil); err != nil {
		t.Fatal(err)
	}
	if u != before {
		t.Fatal("object pointer replaced")
	}
	if _, ok := u.Object["sops"]; ok {
		t.Error("sops field still present")
	}
	if got, _, _ := unstructured.NestedString(u.Object, "data", "password"); got != "czNjcjN0LWRiLXBhc3N3b3Jk" {
		t.Errorf("data.password = %q", got)
	}
	if got, _, _ := unstructured.NestedString(u.Object, "stringData", "username"); got != "admin-plaintext-user" {
		t.Errorf("stringData.username = %q", got)
	}
	if got := u.GetLabels()["app"]; got != "db" {
		t.Errorf("label app = %q, want db", got)
	}
}

// Any kind with a top-level sops field is decrypted, and value types survive
// the JSON round trip (integers stay int64, as unstructured expects).
func TestDecryptObjectsAnyKindKeepsTypes(t *testing.T) {
	t.Parallel()
	key := newTestKey(t)
	plain := []byte(`apiVersion: example.com/v1
kind: Database
metadata:
  name: orders
spec:
  replicas: 3
  ratio: 0.5
  enabled: true
  token: tok-plaintext-9f8e7d
`)
	u := fromYAML(t, encrypt(t, key.recipient, plain, formats.Yaml, "^(token|replicas)$"))
	if got, _, _ := unstructured.NestedString(u.Object, "spec", "replicas"); !strings.HasPrefix(got, "ENC[") {
		t.Fatalf("spec.replicas not encrypted: %v", u.Object["spec"])
	}
	if err := newTestDecryptor(t, key).DecryptObjects(context.Background(), []*unstructured.Unstructured{u}, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromYAML(t, plain).Object, u.Object); diff != "" {
		t.Errorf("decrypted object mismatch (-want +got):\n%s", diff)
	}
	if r, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); !ok || r != 3 {
		t.Errorf("spec.replicas = %#v", u.Object["spec"])
	}
}

// The encrypted Secret goes through a kustomize build that changes its
// metadata after encryption: the MAC no longer matches, decryption must
// still work and keep what kustomize added.
func TestDecryptObjectsAfterKustomizeBuild(t *testing.T) {
	t.Parallel()
	key := newTestKey(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{
		"secret.enc.yaml": encrypt(t, key.recipient, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex),
		"kustomization.yaml": []byte(`namespace: prod
namePrefix: app-
commonLabels:
  team: payments
commonAnnotations:
  owner: platform
resources:
  - secret.enc.yaml
`),
	})
	objs := build(t, dir)
	if len(objs) != 1 {
		t.Fatalf("build produced %d objects", len(objs))
	}
	u := objs[0]
	if _, ok := u.Object["sops"]; !ok {
		t.Fatal("kustomize dropped the sops field; the test premise is wrong")
	}
	// The built object no longer verifies: this is why the MAC is skipped.
	if _, err := newTestDecryptor(t, key).decryptManifestStrict(u.Object); !errors.Is(err, ErrMACMismatch) {
		t.Fatalf("strict decryption of built object: err = %v, want ErrMACMismatch", err)
	}

	id := object.IDOf(u)
	if id.String() != "Secret/prod/app-db" {
		t.Fatalf("ID = %s", id)
	}
	err := newTestDecryptor(t, key).DecryptObjects(context.Background(), objs, map[object.ID]string{id: "secret.enc.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(u.Object, "data", "password"); got != "czNjcjN0LWRiLXBhc3N3b3Jk" {
		t.Errorf("data.password = %q", got)
	}
	if got, _, _ := unstructured.NestedString(u.Object, "stringData", "username"); got != "admin-plaintext-user" {
		t.Errorf("stringData.username = %q", got)
	}
	if u.GetNamespace() != "prod" || u.GetName() != "app-db" {
		t.Errorf("namespace/name = %s/%s, want prod/app-db", u.GetNamespace(), u.GetName())
	}
	if got := u.GetLabels(); got["team"] != "payments" || got["app"] != "db" {
		t.Errorf("labels = %v", got)
	}
	if got := u.GetAnnotations()["owner"]; got != "platform" {
		t.Errorf("annotation owner = %q", got)
	}
	if _, ok := u.Object["sops"]; ok {
		t.Error("sops field still present")
	}
}

// decryptManifestStrict is decryptManifest with the MAC check, only to show
// in tests why it cannot be used on built objects.
func (d *Decryptor) decryptManifestStrict(obj map[string]interface{}) ([]byte, error) {
	u := unstructured.Unstructured{Object: obj}
	in, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return d.decryptData(context.Background(), in, formats.Json, true)
}

// A Secret data entry holding a whole encrypted file (a secretGenerator in
// a remote base) is decrypted in its own format, as Flux does.
func TestDecryptObjectsEncryptedDataEntry(t *testing.T) {
	t.Parallel()
	key := newTestKey(t)
	env := encrypt(t, key.recipient, readTestdata(t, "generator/app.env"), formats.Dotenv, "")
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]interface{}{"name": "app", "namespace": "prod"},
		"data": map[string]interface{}{
			"app.env": base64.StdEncoding.EncodeToString(env),
			"plain":   base64.StdEncoding.EncodeToString([]byte("x")),
		},
	}}
	original := u.Object
	if err := newTestDecryptor(t, key).DecryptObjects(context.Background(), []*unstructured.Unstructured{u}, nil); err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedString(u.Object, "data", "app.env")
	raw, _ := base64.StdEncoding.DecodeString(got)
	if !strings.Contains(string(raw), "API_TOKEN=tok-plaintext-9f8e7d") || strings.Contains(string(raw), "sops") {
		t.Errorf("data.app.env = %q", raw)
	}
	if s, _, _ := unstructured.NestedString(original, "data", "app.env"); s == got {
		t.Error("the input map was modified in place instead of replaced")
	}
}

func TestDecryptObjectsFailures(t *testing.T) {
	t.Parallel()
	key, other := newTestKey(t), newTestKey(t)
	enc := encrypt(t, key.recipient, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex)

	tests := []struct {
		name    string
		obj     func(t *testing.T) *unstructured.Unstructured
		keys    []testKey
		wantErr error
		errHas  []string
	}{
		{
			name:    "wrong key",
			obj:     func(t *testing.T) *unstructured.Unstructured { return fromYAML(t, enc) },
			keys:    []testKey{other},
			wantErr: ErrNoMatchingIdentity,
			errHas:  []string{"Secret/db", "src/secret.enc.yaml", key.recipient},
		},
		{
			name:    "no identities configured",
			obj:     func(t *testing.T) *unstructured.Unstructured { return fromYAML(t, enc) },
			wantErr: ErrNoMatchingIdentity,
			errHas:  []string{"no age identities configured", key.recipient},
		},
		{
			name: "tampered ciphertext",
			obj: func(t *testing.T) *unstructured.Unstructured {
				u := fromYAML(t, enc)
				s, _, _ := unstructured.NestedString(u.Object, "stringData", "username")
				i := strings.Index(s, "data:") + len("data:")
				flipped := s[:i] + string(rune(s[i]^1)) + s[i+1:]
				_ = unstructured.SetNestedField(u.Object, flipped, "stringData", "username")
				return u
			},
			keys:    []testKey{key},
			wantErr: ErrMalformed,
		},
		{
			name: "ciphertext moved to another key",
			obj: func(t *testing.T) *unstructured.Unstructured {
				u := fromYAML(t, enc)
				s, _, _ := unstructured.NestedString(u.Object, "data", "password")
				_ = unstructured.SetNestedField(u.Object, s, "data", "token")
				return u
			},
			keys:    []testKey{key},
			wantErr: ErrMalformed,
		},
		{
			name: "plaintext merged into encrypted data",
			obj: func(t *testing.T) *unstructured.Unstructured {
				u := fromYAML(t, enc)
				_ = unstructured.SetNestedField(u.Object, "tok-plaintext-9f8e7d", "data", "extra")
				return u
			},
			keys:    []testKey{key},
			wantErr: ErrMalformed,
		},
		{
			name: "malformed sops field",
			obj: func(t *testing.T) *unstructured.Unstructured {
				u := fromYAML(t, enc)
				u.Object["sops"] = "garbage"
				return u
			},
			keys:    []testKey{key},
			wantErr: ErrMalformed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := tt.obj(t)
			before := u.DeepCopy()
			err := newTestDecryptor(t, tt.keys...).DecryptObjects(context.Background(),
				[]*unstructured.Unstructured{u}, map[object.ID]string{object.IDOf(u): "src/secret.enc.yaml"})
			t.Log(err)
			var de *Error
			if !errors.As(err, &de) || !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want *Error wrapping %v", err, tt.wantErr)
			}
			assertContains(t, err, append([]string{"decryption failed for 'Secret/db' (src/secret.enc.yaml)"}, tt.errHas...)...)
			assertNoPlaintext(t, err)
			if diff := cmp.Diff(before.Object, u.Object); diff != "" {
				t.Errorf("a failed object was modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestDecryptObjectsStillEncrypted(t *testing.T) {
	t.Parallel()
	const leftover = "ENC[AES256_GCM,data:Zm9v,iv:YmFy,tag:YmF6,type:str]"
	tests := []struct {
		name  string
		data  map[string]interface{}
		sdata map[string]interface{}
		field string
	}{
		{name: "ENC value in data", data: map[string]interface{}{"ok": "YQ==", "password": leftover}, field: "data.password"},
		{name: "base64 of ENC value in data", data: map[string]interface{}{"token": base64.StdEncoding.EncodeToString([]byte("token: " + leftover))}, field: "data.token"},
		{name: "ENC value in stringData", sdata: map[string]interface{}{"username": leftover}, field: "stringData.username"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := map[string]interface{}{
				"apiVersion": "v1", "kind": "Secret",
				"metadata": map[string]interface{}{"name": "db", "namespace": "prod"},
			}
			if tt.data != nil {
				obj["data"] = tt.data
			}
			if tt.sdata != nil {
				obj["stringData"] = tt.sdata
			}
			u := &unstructured.Unstructured{Object: obj}
			err := newTestDecryptor(t).DecryptObjects(context.Background(), []*unstructured.Unstructured{u},
				map[object.ID]string{object.IDOf(u): "apps/db.yaml"})
			var se *StillEncryptedError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *StillEncryptedError", err)
			}
			if se.Object != "Secret/prod/db" || se.Source != "apps/db.yaml" || se.Field != tt.field {
				t.Errorf("got %+v, want Secret/prod/db, apps/db.yaml, %s", se, tt.field)
			}
			assertContains(t, err, "Secret/prod/db", "apps/db.yaml", tt.field)
			if strings.Contains(err.Error(), "ENC[") {
				t.Errorf("error quotes the value: %v", err)
			}
		})
	}
}

// One bad object does not hide the others, and the good ones are decrypted.
func TestDecryptObjectsJoinsErrors(t *testing.T) {
	t.Parallel()
	key, other := newTestKey(t), newTestKey(t)
	good := fromYAML(t, encrypt(t, key.recipient, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex))
	bad := fromYAML(t, encrypt(t, other.recipient, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex))
	bad.SetName("other")
	plain := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]interface{}{"name": "cm"},
	}}
	err := newTestDecryptor(t, key).DecryptObjects(context.Background(), []*unstructured.Unstructured{bad, good, plain}, nil)
	if !errors.Is(err, ErrNoMatchingIdentity) {
		t.Fatalf("err = %v", err)
	}
	assertContains(t, err, "Secret/other", other.recipient)
	if _, ok := good.Object["sops"]; ok {
		t.Error("good object was not decrypted")
	}
	if _, ok := bad.Object["sops"]; !ok {
		t.Error("bad object lost its sops field")
	}
}

func TestDecryptObjectsIgnoresEnvironment(t *testing.T) {
	key := newTestKey(t)
	home := t.TempDir()
	writeTree(t, home, map[string][]byte{
		filepath.Join(".config", "sops", "age", "keys.txt"): []byte(key.identity + "\n"),
		"keys.txt": []byte(key.identity + "\n"),
	})
	t.Setenv("SOPS_AGE_KEY", key.identity)
	t.Setenv("SOPS_AGE_KEY_FILE", filepath.Join(home, "keys.txt"))
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))

	u := fromYAML(t, encrypt(t, key.recipient, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex))
	err := newTestDecryptor(t, newTestKey(t)).DecryptObjects(context.Background(), []*unstructured.Unstructured{u}, nil)
	if !errors.Is(err, ErrNoMatchingIdentity) {
		t.Fatalf("with an unrelated key: err = %v, want ErrNoMatchingIdentity", err)
	}
	err = newTestDecryptor(t).DecryptObjects(context.Background(), []*unstructured.Unstructured{u}, nil)
	if !errors.Is(err, ErrNoMatchingIdentity) {
		t.Fatalf("with no key: err = %v, want ErrNoMatchingIdentity", err)
	}
}

// Every value decrypted is revealed for masking, in any kind of object and
// any format; values that were not encrypted are not.
func TestRevealDecryptedValues(t *testing.T) {
	t.Parallel()
	key := newTestKey(t)
	var revealed []string
	d, err := New(Options{Keys: []string{key.identity}, Reveal: func(v []string) { revealed = append(revealed, v...) }})
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  token: tok-plaintext-9f8e7d
  public: visible-value
  nested: |
    line one
    line two
`)
	u := fromYAML(t, encrypt(t, key.recipient, plain, formats.Yaml, "^(token|nested)$"))
	if err := d.DecryptObjects(context.Background(), []*unstructured.Unstructured{u}, nil); err != nil {
		t.Fatal(err)
	}
	env := encrypt(t, key.recipient, []byte("API_KEY=env-plaintext-42\n"), formats.Dotenv, "")
	if _, err := d.decryptData(context.Background(), env, formats.Dotenv, true); err != nil {
		t.Fatal(err)
	}
	want := []string{"tok-plaintext-9f8e7d", "line one\nline two\n", "env-plaintext-42"}
	for _, w := range want {
		if !slices.Contains(revealed, w) {
			t.Errorf("%q not revealed: %q", w, revealed)
		}
	}
	if slices.Contains(revealed, "visible-value") || slices.Contains(revealed, "settings") {
		t.Errorf("a value that was not encrypted was revealed: %q", revealed)
	}
}

// EncryptedFields, taken before decryption, names the fields that then
// hold plaintext (of any type) and none that were in clear: in any kind,
// in lists, whatever sops's regex chose.
func TestEncryptedFieldsNameWhatDecryptionReveals(t *testing.T) {
	t.Parallel()
	key := newTestKey(t)
	plain := []byte(`apiVersion: example.com/v1
kind: Database
metadata:
  name: orders
  annotations:
    example.com/token: tok-annotation-1
spec:
  replicas: 3
  user: postgres
  token: tok-plaintext-9f8e7d
  users:
  - name: app
    token: t
`)
	u := fromYAML(t, encrypt(t, key.recipient, plain, formats.Yaml, "^(token|example.com/token)$"))
	fields := EncryptedFields(u)
	var got []string
	for _, p := range fields {
		got = append(got, p.String())
	}
	want := []string{`metadata.annotations["example.com/token"]`, "spec.token", "spec.users[0].token"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("encrypted fields mismatch (-want +got):\n%s", diff)
	}
	if err := newTestDecryptor(t, key).DecryptObjects(context.Background(), []*unstructured.Unstructured{u}, nil); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(u.Object, "spec", "token"); v != "tok-plaintext-9f8e7d" {
		t.Errorf("spec.token = %q after decryption", v)
	}
	if EncryptedFields(u) != nil || EncryptedFields(fromYAML(t, plain)) != nil {
		t.Error("an object without sops metadata has no encrypted fields")
	}
}
