package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// KMS-encrypted Secrets and secretGenerator files deploy through the
// wire-level KMS server; a key the CI identity may not use fails the unit
// with the key named and nothing applied.
func TestKMSEncryptedSecretsDeploy(t *testing.T) {
	c := newCLI(t)
	srv := kmstest.New(t)
	srv.AddUser("AKIAADMINEXAMPLE", "admin-secret-key")
	srv.AddUser("AKIACIEXAMPLE", "ci-secret-key")
	srv.Setenv(t)
	deployKey := srv.CreateKey("deploy")
	srv.Allow(deployKey, "AKIAADMINEXAMPLE")
	srv.Allow(deployKey, "AKIACIEXAMPLE")
	otherKey := srv.CreateKey("other-team")
	srv.Allow(otherKey, "AKIAADMINEXAMPLE")

	// The admin encrypts, as a developer would with `sops --encrypt --kms`.
	kmstest.SetCredentials(t, "AKIAADMINEXAMPLE", "admin-secret-key")
	encryptKMS := func(path, plain string, f formats.Format, regex, arn string) {
		t.Helper()
		out, err := sopstest.EncryptKMS([]sopstest.KMSKey{{ARN: arn}}, []byte(plain), f, regex)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, string(out))
	}
	dir := t.TempDir()
	encryptKMS(filepath.Join(dir, "db.enc.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: "+dbPassword+"\n", formats.Yaml, sopstest.K8sSecretRegex, deployKey)
	encryptKMS(filepath.Join(dir, "api.env"), "TOKEN="+apiToken+"\n", formats.Dotenv, "", deployKey)
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources:\n- db.enc.yaml\nsecretGenerator:\n- name: api\n  envs:\n  - api.env\ngeneratorOptions:\n  disableNameSuffixHash: true\n")

	denied := t.TempDir()
	encryptKMS(filepath.Join(denied, "other.enc.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: other\nstringData:\n  password: "+dbPassword+"\n", formats.Yaml, sopstest.K8sSecretRegex, otherKey)
	writeFile(t, filepath.Join(denied, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bystander\n")

	// CI deploys with its own credentials.
	kmstest.SetCredentials(t, "AKIACIEXAMPLE", "ci-secret-key")
	o := c.run("apply", "--name", "kms", "--path", dir, "--target-namespace", c.ns)
	if o.code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	client := cluster.Client(t)
	db, err := client.CoreV1().Secrets(c.ns).Get(t.Context(), "db", metav1.GetOptions{})
	if err != nil || string(db.Data["password"]) != dbPassword {
		t.Fatalf("db secret: %v", err)
	}
	api, err := client.CoreV1().Secrets(c.ns).Get(t.Context(), "api", metav1.GetOptions{})
	if err != nil || string(api.Data["TOKEN"]) != apiToken {
		t.Fatalf("generated api secret: %v", err)
	}
	if srv.Count("TrentService.Decrypt") == 0 {
		t.Error("the KMS server saw no Decrypt call")
	}

	o2, r := c.apply("--name", "denied", "--path", denied, "--target-namespace", c.ns)
	if o2.code != exitFail || r.Reason != "BuildFailed" {
		t.Fatalf("denied key: exit %d reason %s: %s", o2.code, r.Reason, r.Message)
	}
	contains(t, "message", r.Message, "other.enc.yaml", otherKey, "access denied")
	if _, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "bystander", metav1.GetOptions{}); err == nil {
		t.Error("a unit whose Secret could not be decrypted applied its ConfigMap")
	}
	noPlaintext(t, map[string]string{"apply": o.stdout + o.stderr, "denied": o2.stdout + o2.stderr}, dbPassword, apiToken, "ci-secret-key")
	if strings.Contains(o2.stdout+o2.stderr, "admin-secret-key") {
		t.Error("an AWS secret key reached the output")
	}
}
