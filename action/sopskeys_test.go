package action

import (
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// encryptFor writes a Secret holding value at path, its stringData
// encrypted for the key groups through sops's key sources.
func (l *leakRepo) encryptFor(path, name, value string, svc sopstest.Services, groups ...sopstest.KeyGroup) {
	l.t.Helper()
	plain, err := yaml.Marshal(secretObject(name, "", map[string]any{"value": value}, nil))
	if err != nil {
		l.t.Fatal(err)
	}
	enc, err := sopstest.EncryptGroupsWith(svc, groups, 0, plain, formats.Yaml, sopstest.K8sSecretRegex)
	if err != nil {
		l.t.Fatal(err)
	}
	l.write(path, string(enc))
}

// A unit whose Secret is encrypted for a PGP key deploys with the
// sops-pgp-key input, and a configuration's unit with the key among the
// age identities of its decryption-secrets line: the key is registered
// with ::add-mask:: and, like the value, shows nowhere.
func TestLeakScanActionPGP(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall)
	key, err := sopstest.NewPGPKey("deploy")
	if err != nil {
		t.Fatal(err)
	}
	l.scan.Secret("PGP private key", key.Private)
	l.scan.Secret("SOPS value", leakSpecial)
	svc := sopstest.Services{PGP: []sopstest.PGPKey{key}}
	l.write("deploy/app/kustomization.yaml", "resources: [creds.enc.yaml]\n")
	l.encryptFor("deploy/app/creds.enc.yaml", "creds", leakSpecial, svc, sopstest.KeyGroup{PGP: []string{key.Fingerprint}})
	l.write("clusters/test/units.yaml", kustomization("app", ns, "deploy/app", "  decryption: {provider: sops, secretRef: {name: sops-keys}}\n"))
	head := l.commit("a Secret for PGP")

	unit := l.env("push", head, "", ns, false).input("kubeconfig", cluster.Kubeconfig).input("sops-pgp-key", key.Private)
	if res := l.run("push (sops-pgp-key)", unit, "PGP private key", "SOPS value"); res.code != exitOK {
		t.Fatalf("push: exit %d\n%s", res.code, res.stdout)
	}
	s, err := cluster.Client(t).CoreV1().Secrets(ns).Get(t.Context(), "creds", metav1.GetOptions{})
	if err != nil || string(s.Data["value"]) != leakSpecial {
		t.Fatalf("the Secret: %v", err)
	}

	config := l.env("push", head, "", ns, true).input("kubeconfig", cluster.Kubeconfig).input("decryption-secrets", "sops-keys=$UNITS_KEYS")
	config.vars["UNITS_KEYS"] = "# age\n" + l.key.Identity + "\n# PGP\n" + key.Private
	res := l.run("push (config, decryption-secrets)", config, "PGP private key", "SOPS value")
	if res.code != exitOK || !strings.Contains(res.stdout, "app") {
		t.Fatalf("config push: exit %d\n%s", res.code, res.stdout)
	}
}
