package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

const (
	dbPassword = "pa55-plaintext-db-9c1f"
	apiToken   = "tok-plaintext-api-77e2"
)

func encryptFile(t *testing.T, key sopstest.Key, path string, plain string, f formats.Format, regex string) {
	t.Helper()
	out, err := sopstest.Encrypt(key.Recipient, []byte(plain), f, regex)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(out))
}

func newKey(t *testing.T) sopstest.Key {
	t.Helper()
	k, err := sopstest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// noPlaintext fails if any secret, or its base64 form, appears in outputs.
func noPlaintext(t *testing.T, outputs map[string]string, secrets ...string) {
	t.Helper()
	for name, out := range outputs {
		for _, s := range secrets {
			for _, form := range []string{s, base64.StdEncoding.EncodeToString([]byte(s))} {
				if strings.Contains(out, form) {
					t.Errorf("%s leaks a secret value %q", name, form)
				}
			}
		}
	}
}

func TestAgeEncryptedSecret(t *testing.T) {
	c := newCLI(t)
	key := newKey(t)
	dir := t.TempDir()
	encryptFile(t, key, filepath.Join(dir, "db.enc.yaml"), `apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: `+dbPassword+`
`, formats.Yaml, sopstest.K8sSecretRegex)
	writeFile(t, filepath.Join(dir, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  a: b\n")
	c.env["SOPS_AGE_KEY"] = key.Identity

	build := c.run("build", "--path", dir, "--target-namespace", c.ns)
	buildJSON := c.run("build", "--path", dir, "--target-namespace", c.ns, "-o", "json")
	diff := c.run("diff", "--name", "sec", "--path", dir, "--target-namespace", c.ns)
	text := c.run("apply", "--name", "sec", "--path", dir, "--target-namespace", c.ns)
	if build.code != exitOK || diff.code != exitOK || text.code != exitOK {
		t.Fatalf("exit codes build %d diff %d apply %d\n%s%s%s", build.code, diff.code, text.code, build.stderr, diff.stderr, text.stderr)
	}
	contains(t, "build output", build.stdout, "kind: Secret", "password: '***'")
	contains(t, "build -o json output", buildJSON.stdout, `"kind": "List"`, `"kind": "Secret"`, `"password": "***"`)
	contains(t, "diff output", diff.stdout, "Secret/"+c.ns+"/db", "***")
	s, err := cluster.Client(t).CoreV1().Secrets(c.ns).Get(t.Context(), "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Data["password"]) != dbPassword {
		t.Errorf("secret in the cluster holds %q, want the decrypted value", s.Data["password"])
	}
	if _, ok := s.Annotations["sops"]; ok {
		t.Error("sops metadata reached the cluster")
	}

	// Change the value: the diff says it changed without printing either.
	encryptFile(t, key, filepath.Join(dir, "db.enc.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: "+apiToken+"\n", formats.Yaml, sopstest.K8sSecretRegex)
	diff2 := c.run("diff", "--name", "sec", "--path", dir, "--target-namespace", c.ns)
	contains(t, "diff of a changed secret", diff2.stdout, "password: '*** (sha256:", "password: '*** (changed, sha256:")
	_, jsonRes := c.apply("--name", "sec", "--path", dir, "--target-namespace", c.ns)

	noPlaintext(t, map[string]string{
		"build": build.stdout + build.stderr, "build -o json": buildJSON.stdout + buildJSON.stderr, "diff": diff.stdout + diff.stderr, "apply": text.stdout + text.stderr,
		"diff after change": diff2.stdout + diff2.stderr, "json result": jsonString(t, jsonRes),
	}, dbPassword, apiToken)
}

func TestWrongAgeKeyAppliesNothing(t *testing.T) {
	c := newCLI(t)
	key, other := newKey(t), newKey(t)
	dir := t.TempDir()
	encryptFile(t, key, filepath.Join(dir, "db.enc.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: "+dbPassword+"\n", formats.Yaml, sopstest.K8sSecretRegex)
	writeFile(t, filepath.Join(dir, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n")
	keyFile := filepath.Join(t.TempDir(), "keys.txt")
	writeFile(t, keyFile, "# not the right key\n"+other.Identity+"\n")
	o, r := c.apply("--name", "wrong", "--path", dir, "--target-namespace", c.ns, "--sops-age-key-file", keyFile)
	if o.code != exitFail || r.Reason != "BuildFailed" {
		t.Fatalf("exit %d reason %s: %s", o.code, r.Reason, r.Message)
	}
	contains(t, "message", r.Message, "db.enc.yaml", key.Recipient)
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "plain", metav1.GetOptions{}); err == nil {
		t.Error("a unit that failed decryption applied its ConfigMap")
	}
	noPlaintext(t, map[string]string{"apply": o.stdout + o.stderr}, dbPassword, other.Identity)
}

func TestSecretGeneratorWithEncryptedEnvFile(t *testing.T) {
	c := newCLI(t)
	key := newKey(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), `secretGenerator:
- name: api
  envs:
  - api.env
generatorOptions:
  disableNameSuffixHash: true
`)
	encryptFile(t, key, filepath.Join(dir, "api.env"), "TOKEN="+apiToken+"\nUSER=svc\n", formats.Dotenv, "")
	before, err := os.ReadFile(filepath.Join(dir, "api.env"))
	if err != nil {
		t.Fatal(err)
	}
	c.env["SOPS_AGE_KEY"] = key.Identity
	o := c.run("apply", "--name", "gen", "--path", dir, "--target-namespace", c.ns)
	if o.code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	s, err := cluster.Client(t).CoreV1().Secrets(c.ns).Get(t.Context(), "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Data["TOKEN"]) != apiToken || string(s.Data["USER"]) != "svc" {
		t.Errorf("generated secret data %v", stringMap(s))
	}
	after, _ := os.ReadFile(filepath.Join(dir, "api.env"))
	if string(after) != string(before) {
		t.Error("the encrypted file in the checkout was rewritten")
	}
	noPlaintext(t, map[string]string{"apply": o.stdout + o.stderr}, apiToken)
}

func stringMap(s *corev1.Secret) map[string]string {
	m := map[string]string{}
	for k, v := range s.Data {
		m[k] = string(v)
	}
	return m
}

// Masking goes by where a value came from: a ConfigMap's user and port,
// written in Git, are shown by build and diff (text and JSON) though a
// Secret of the unit holds the same words; the Secret's values, and a
// field a SOPS-encrypted ConfigMap holds, are masked however short.
func TestPlainWordsEqualToSecretsAreShown(t *testing.T) {
	c := newCLI(t)
	key := newKey(t)
	dir := t.TempDir()
	encryptFile(t, key, filepath.Join(dir, "db.enc.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  user: postgres\n  port: \"5432\"\n", formats.Yaml, sopstest.K8sSecretRegex)
	encryptFile(t, key, filepath.Join(dir, "pin.enc.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pin\ndata:\n  pin: \"42\"\n  note: visible\n", formats.Yaml, "^pin$")
	writeFile(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  user: postgres\n  port: \"5432\"\n")
	c.env["SOPS_AGE_KEY"] = key.Identity
	unit := []string{"--name", "words", "--path", dir, "--target-namespace", c.ns}

	build := c.run("build", "--path", dir, "--target-namespace", c.ns)
	diff := c.run(append([]string{"diff"}, unit...)...)
	diffJSON := c.run(append([]string{"diff", "-o", "json"}, unit...)...)
	if build.code != exitOK || diff.code != exitOK || diffJSON.code != exitOK {
		t.Fatalf("exit codes build %d diff %d diff -o json %d\n%s%s", build.code, diff.code, diffJSON.code, build.stderr, diff.stderr)
	}
	contains(t, "build", build.stdout, "  user: postgres", `  port: "5432"`, "  user: '***'", "  port: '***'", "  pin: '***'", "  note: visible")
	contains(t, "diff", diff.stdout, "+  user: postgres", `+  port: "5432"`, "+  user: '***'", "+  pin: '***'")
	contains(t, "diff -o json", diffJSON.stdout, `+  user: postgres\n`, `+  user: '***'\n`)
	for name, out := range map[string]string{"build": build.stdout, "diff": diff.stdout} {
		if strings.Contains(out, "pin: \"42\"") || strings.Contains(out, "pin: 42") {
			t.Errorf("%s shows the decrypted pin:\n%s", name, out)
		}
	}
}

// A Secret encrypted for a PGP key builds with --sops-pgp-key-file; with
// another key the error names the fingerprint the file wants, and no
// command prints key material or the value.
func TestPGPEncryptedSecret(t *testing.T) {
	c := newCLI(t)
	key, err := sopstest.NewPGPKey("deploy")
	if err != nil {
		t.Fatal(err)
	}
	other, err := sopstest.NewPGPKey("other")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	enc, err := sopstest.EncryptGroupsWith(sopstest.Services{PGP: []sopstest.PGPKey{key}}, []sopstest.KeyGroup{{PGP: []string{key.Fingerprint}}}, 0,
		[]byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: "+dbPassword+"\n"), formats.Yaml, sopstest.K8sSecretRegex)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "db.enc.yaml"), string(enc))
	keys := t.TempDir()
	writeFile(t, filepath.Join(keys, "deploy.asc"), key.Private)
	writeFile(t, filepath.Join(keys, "other.asc"), other.Private)

	build := c.run("build", "--path", dir, "--sops-pgp-key-file", filepath.Join(keys, "deploy.asc"))
	if build.code != exitOK {
		t.Fatalf("exit %d\n%s", build.code, build.stderr)
	}
	contains(t, "build output", build.stdout, "kind: Secret", "password: '***'")
	wrong := c.run("build", "--path", dir, "--sops-pgp-key-file", filepath.Join(keys, "other.asc"))
	if wrong.code != exitFail {
		t.Fatalf("exit %d with the wrong key\n%s", wrong.code, wrong.stderr)
	}
	contains(t, "the wrong key's error", wrong.stderr, "PGP key "+key.Fingerprint+": no matching PGP private key")
	var lines []string
	for _, k := range []string{key.Private, other.Private} {
		for l := range strings.Lines(k) {
			if l = strings.TrimSpace(l); len(l) > 20 && !strings.HasPrefix(l, "-----") {
				lines = append(lines, l)
			}
		}
	}
	noPlaintext(t, map[string]string{"build": build.stdout + build.stderr, "wrong key": wrong.stdout + wrong.stderr}, append(lines, dbPassword)...)
}
