package action

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
)

// A GitRepository with provider github whose spec.secretRef is a GitHub
// App's credentials, SOPS-encrypted in the configuration's files: the
// run mints an installation token from the App's API (GitHub Enterprise
// Server's, in-process) and clones with it; neither the App's private
// key nor the token shows in any stream, and both are registered with
// the masker.
func TestLeakScanActionGitHubApp(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall)
	const appToken = "ghs_appLeak-Tk7+/=&0123456789"
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	l.scan.Secret("GitHub App private key", keyPEM)
	l.scan.Secret("GitHub App installation token", appToken)
	ghes := gittest.NewServer(t)
	var minted atomic.Int32
	ghes.Handle("/api/v3/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v3/app/installations/7/access_tokens" || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ey") {
			http.Error(w, `{"message":"no"}`, http.StatusUnauthorized)
			return
		}
		minted.Add(1)
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"token": "` + strings.ReplaceAll(appToken, "&", `\u0026`) + `"}`))
	}))
	ghes.Repo("apps").Commit("one", map[string]string{"deploy/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-the-app\ndata:\n  a: \"1\"\n"})
	ghes.RequireAuth("apps", "x-access-token", appToken)

	l.write("clusters/test/units.yaml", `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: apps
  namespace: `+ns+`
spec:
  interval: 1m
  url: `+ghes.URL+`/apps
  ref: {branch: master}
  provider: github
  secretRef: {name: app-creds}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
  namespace: `+ns+`
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: apps}
  path: ./deploy
  targetNamespace: `+ns+`
  prune: true
`)
	l.write("clusters/test/flux-system/gotk-sync.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n")
	l.encryptYAML("clusters/test/app-creds.enc.yaml", secretObject("app-creds", ns, map[string]any{
		"githubAppID": "42", "githubAppInstallationID": "7", "githubAppPrivateKey": keyPEM, "githubAppBaseURL": ghes.URL + "/api/v3"}, nil))
	head := l.commit("a unit from a GitHub App's repository")
	l.git("checkout", "-q", head)
	res := l.run("config push (GitHub App)", l.env("push", head, "", ns, true).input("kubeconfig", cluster.Kubeconfig).input("sops-age-key", l.key.Identity), "kubeconfig bearer token", "GitHub App private key", "GitHub App installation token")
	if res.code != exitOK {
		t.Fatalf("push: exit %d\n%s", res.code, res.stdout)
	}
	if n := minted.Load(); n != 1 {
		t.Errorf("%d installation token(s) minted, want 1", n)
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "from-the-app", metav1.GetOptions{}); err != nil {
		t.Errorf("the App's repository was not deployed: %v", err)
	}
}
