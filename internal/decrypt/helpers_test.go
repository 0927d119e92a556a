package decrypt

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"filippo.io/age"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The plaintext secrets in testdata. Failure tests assert none of them
// appears in an error message.
var plaintexts = []string{
	"s3cr3t-db-password",
	"czNjcjN0LWRiLXBhc3N3b3Jk",
	"admin-plaintext-user",
	"tok-plaintext-9f8e7d",
	"yaml-plaintext-hunter2",
}

// k8sRegex is what Flux's docs recommend: encrypt only data and stringData,
// so kustomize can still read and change the metadata.
const k8sRegex = "^(data|stringData)$"

type testKey struct {
	identity  string // AGE-SECRET-KEY-1…
	recipient string // age1…
}

func newTestKey(t *testing.T) testKey {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return testKey{identity: id.String(), recipient: id.Recipient().String()}
}

func newTestDecryptor(t *testing.T, keys ...testKey) *Decryptor {
	t.Helper()
	var ids []string
	for _, k := range keys {
		ids = append(ids, k.identity)
	}
	d, err := New(Options{Keys: ids})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// encrypt encrypts plain (in format f) for recipient, as
// `sops --encrypt --age recipient [--encrypted-regex regex]` would.
func encrypt(t *testing.T, recipient string, plain []byte, f formats.Format, regex string) []byte {
	t.Helper()
	out, err := sopstest.Encrypt(recipient, plain, f, regex)
	if err != nil {
		t.Fatalf("encrypting %s: %v", formatNames[f], err)
	}
	return out
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeTree writes files (path → content) below dir.
func writeTree(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fromYAML parses one YAML manifest.
func fromYAML(t *testing.T, b []byte) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

// kustomizeMu serializes the tests' kustomize runs, which race on
// kustomize's package state as the build step's would (see build.Build).
var kustomizeMu sync.Mutex

// build runs kustomize on dir, as the build step will.
func build(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	kustomizeMu.Lock()
	defer kustomizeMu.Unlock()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

// assertNoPlaintext fails if err's message contains any test secret.
func assertNoPlaintext(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, p := range plaintexts {
		if strings.Contains(err.Error(), p) {
			t.Errorf("error leaks plaintext %q: %v", p, err)
		}
	}
}

func assertContains(t *testing.T, err error, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}
