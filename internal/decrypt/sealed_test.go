package decrypt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// The schema check sees values of the types sops recorded, never the
// ciphertext, and the original object is untouched.
func TestWithPlaceholders(t *testing.T) {
	t.Parallel()
	enc := func(typ string) string { return "ENC[AES256_GCM,data:eHh4,iv:aXY=,tag:dGFn,type:" + typ + "]" }
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db"},
		"data": map[string]any{"password": enc("str")},
		"spec": map[string]any{"replicas": enc("int"), "ratio": enc("float"), "on": enc("bool"), "list": []any{enc("str"), "plain"}},
	}}
	got := WithPlaceholders(u)
	if got.Object["data"].(map[string]any)["password"] != placeholderString {
		t.Errorf("str: %v", got.Object["data"])
	}
	spec := got.Object["spec"].(map[string]any)
	if spec["replicas"] != int64(0) || spec["ratio"] != float64(0) || spec["on"] != false || spec["list"].([]any)[0] != placeholderString || spec["list"].([]any)[1] != "plain" {
		t.Errorf("spec: %v", spec)
	}
	if u.Object["data"].(map[string]any)["password"] != enc("str") {
		t.Error("the original object was changed")
	}
}

// Without keys, secretGenerator files stay encrypted; env files lose
// their sops_* entries, which would otherwise become Secret keys.
func TestSealFiles(t *testing.T) {
	t.Parallel()
	key := newTestKey(t)
	dir := t.TempDir()
	env := encrypt(t, key.recipient, []byte("API_TOKEN=tok-plaintext-9f8e7d\nLOG_LEVEL=debug\n"), formats.Dotenv, "")
	yml := encrypt(t, key.recipient, []byte("password: yaml-plaintext-hunter2\n"), formats.Yaml, "")
	writeTree(t, dir, map[string][]byte{
		"app/kustomization.yaml": []byte("secretGenerator:\n- name: app\n  envs: [app.env]\n  files: [config.yaml=config.enc.yaml]\n"),
		"app/app.env":            env,
		"app/config.enc.yaml":    yml,
	})
	d := newTestDecryptor(t) // no keys at all
	sealed, err := d.SealFiles(context.Background(), dir, "app")
	if err != nil {
		t.Fatal(err)
	}
	if sealed != (Sealed{Rewritten: 1, Encrypted: 2}) { // the env file rewritten; the YAML one left as it is
		t.Errorf("sealed %+v, want 1 file rewritten of 2 encrypted", sealed)
	}
	sealedEnv, _ := os.ReadFile(filepath.Join(dir, "app/app.env"))
	if strings.Contains(string(sealedEnv), "sops_") || strings.Count(string(sealedEnv), "=ENC[AES256_GCM") != 2 {
		t.Errorf("sealed env file:\n%s", sealedEnv)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "app/config.enc.yaml")); string(got) != string(yml) {
		t.Error("an encrypted YAML file was changed")
	}
	for _, p := range plaintexts {
		if strings.Contains(string(sealedEnv), p) {
			t.Errorf("plaintext %q after sealing", p)
		}
	}
	objs := build(t, filepath.Join(dir, "app"))
	data := objs[0].Object["data"].(map[string]any)
	if len(data) != 3 { // API_TOKEN, LOG_LEVEL, config.yaml
		t.Errorf("generated Secret keys %v", data)
	}
}

func TestStripMetadata(t *testing.T) {
	t.Parallel()
	key := newTestKey(t)
	u := fromYAML(t, encrypt(t, key.recipient, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex))
	StripMetadata([]*unstructured.Unstructured{u, nil})
	if _, ok := u.Object["sops"]; ok {
		t.Error("sops metadata left")
	}
	if pw, _ := u.Object["data"].(map[string]any)["password"].(string); !object.IsEncrypted(pw) {
		t.Errorf("the value is no longer the ciphertext: %q", pw)
	}
}
