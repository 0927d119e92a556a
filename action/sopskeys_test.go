package action

import (
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
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

// A unit whose Secret is encrypted for a Vault transit key deploys with
// VAULT_TOKEN in the step's environment: the token is registered with
// ::add-mask:: and, like the value, shows nowhere; a token Vault refuses
// fails the run with the key and Vault's answer named.
func TestLeakScanActionVault(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall)
	v := kmstest.NewVault(t, "vault.example.test")
	uri := v.CreateKey("transit", "deploy")
	v.AddToken("admin", "hvs.admin-leak-token-01")
	v.Allow("admin", "transit", "deploy")
	v.AddToken("ci", "hvs.ci-leak-token-0123456")
	v.Allow("ci", "transit", "deploy")
	l.scan.Secret("Vault token", "hvs.ci-leak-token-0123456")
	l.scan.Secret("refused Vault token", "hvs.refused-leak-token-789")
	l.scan.Secret("SOPS value", leakSpecial)
	l.scan.Unmasked("SOPS value, never decrypted", leakData)
	l.write("deploy/app/kustomization.yaml", "resources: [creds.enc.yaml]\n")
	l.encryptFor("deploy/app/creds.enc.yaml", "creds", leakSpecial,
		sopstest.Services{VaultToken: "hvs.admin-leak-token-01", HTTPClient: kmstest.Client(v)}, sopstest.KeyGroup{Vault: []string{uri}})
	head := l.commit("a Secret for Vault")

	unit := l.env("push", head, "", ns, false).input("kubeconfig", cluster.Kubeconfig)
	unit.vars["VAULT_TOKEN"], unit.cloud = "hvs.ci-leak-token-0123456", kmstest.Client(v)
	if res := l.run("push (VAULT_TOKEN)", unit, "Vault token", "SOPS value"); res.code != exitOK {
		t.Fatalf("push: exit %d\n%s", res.code, res.stdout)
	}
	s, err := cluster.Client(t).CoreV1().Secrets(ns).Get(t.Context(), "creds", metav1.GetOptions{})
	if err != nil || string(s.Data["value"]) != leakSpecial {
		t.Fatalf("the Secret: %v", err)
	}

	// A new value, so that the build is not reused.
	l.encryptFor("deploy/app/creds.enc.yaml", "creds", leakData,
		sopstest.Services{VaultToken: "hvs.admin-leak-token-01", HTTPClient: kmstest.Client(v)}, sopstest.KeyGroup{Vault: []string{uri}})
	head = l.commit("another value")
	refused := l.env("push", head, "", ns, false).input("kubeconfig", cluster.Kubeconfig)
	refused.vars["VAULT_TOKEN"], refused.cloud = "hvs.refused-leak-token-789", kmstest.Client(v)
	res := l.run("push (refused token)", refused, "refused Vault token")
	if res.code != exitFail || !strings.Contains(res.stdout, "Vault transit key "+uri+": access denied") {
		t.Fatalf("push with a refused token: exit %d\n%s", res.code, res.stdout)
	}
}
