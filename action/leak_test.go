package action

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/sethvargo/go-githubactions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/leaktest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// The values of the leak scan, each of a shape that encodes its own way:
// characters that URL-, JSON-, Go- and YAML-escaping change, a multi-line
// PEM-like value, values that change between commits.
const (
	leakSpecial  = `ak-special-Q7w+/=&"\ %é中'end`
	leakData     = "ak-data-R8v+9/Zr==&tail"
	leakPEM      = "-----BEGIN LEAKTEST PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjakpem1\nakpem2+Vb9/cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2wX3y\nZ4a5B6c7D8e9F0g1H2i3J4k5L6m7N8o9akpem3==\n-----END LEAKTEST PRIVATE KEY-----\n"
	leakEnv      = "ak-env-Hh3+k/9=zQ"
	leakRotOld   = "ak-rot-old-Xw4+/=p&q"
	leakRotNew   = "ak-rot-new-Yv5+/=r&s"
	leakLive     = "ak-live-edit-Mn6+/=t&u"
	leakSubstOld = `ak-sub-old-Z2+/=&"\ %ü'end`
	leakSubstNew = `ak-sub-new-W3+/=&"\ %ß'end`
	leakToken    = "ghs_leakScanToken+/=&0123456789abcdef"
)

// leakRepo is a repository whose runs are scanned: everything an action
// run writes or sends goes to the scanner.
type leakRepo struct {
	*gitRepo
	t    *testing.T
	gh   *fakeGitHub
	scan *leaktest.Scanner
	key  sopstest.Key
	// sent counts the requests to GitHub already scanned.
	sent int
	// certKubeconfig is a kubeconfig's contents: the test cluster, with a
	// client certificate and key.
	certKubeconfig string
	// lastStdout is the last run's log as written (run returns it
	// redacted), for checks of what it registered once more is known.
	lastStdout string
}

func newLeakRepo(t *testing.T) *leakRepo {
	key, err := sopstest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	l := &leakRepo{gitRepo: newGitRepo(t), t: t, gh: newFakeGitHub(t), scan: &leaktest.Scanner{}, key: key}
	kc, cert, keyPEM := certKubeconfig(t, true)
	l.certKubeconfig = kc
	l.scan.Secret("age identity", key.Identity)
	l.scan.Secret("GitHub token", leakToken)
	l.scan.Secret("kubeconfig bearer token", cluster.Config.BearerToken)
	l.scan.Secret("kubeconfig client key", string(keyPEM))
	// A certificate is public, and not masked; it is scanned all the same.
	l.scan.Unmasked("kubeconfig client certificate", string(cert))
	t.Cleanup(func() { l.scan.Check(t) })
	return l
}

// certKubeconfig is the contents of a kubeconfig for the test cluster with
// a client certificate (group system:masters) signed by its CA, and the
// certificate and key in it (PEM). Unless trusted, a CA of its own signs
// the certificate: the cluster refuses it.
func certKubeconfig(t *testing.T, trusted bool) (string, []byte, []byte) {
	t.Helper()
	read := func(name string) *pem.Block {
		data, err := os.ReadFile(filepath.Join(cluster.Dir, "pki", name))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := pem.Decode(data)
		if b == nil {
			t.Fatalf("%s holds no PEM", name)
		}
		return b
	}
	ca, err := x509.ParseCertificate(read("ca.crt").Bytes)
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := x509.ParseECPrivateKey(read("ca.key").Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !trusted {
		if caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			t.Fatal(err)
		}
		ca.PublicKey = &caKey.PublicKey
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "leak-scan", Organization: []string{"system:masters"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cluster.Config.Host, CertificateAuthorityData: cluster.Config.CAData}
	kc.AuthInfos["leak-scan"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: keyPEM}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "leak-scan"}
	kc.CurrentContext = "test"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), base64.StdEncoding.EncodeToString(keyPEM)) {
		t.Fatal("the kubeconfig does not hold the key as base64")
	}
	return string(data), cert, keyPEM
}

// run runs e, captures all it wrote and sent under mode, and checks the
// run registered the secrets named with ::add-mask::. It returns the
// run's result redacted.
func (l *leakRepo) run(mode string, e *runEnv, registered ...string) runResult {
	l.t.Helper()
	e.vars["INPUT_GITHUB-TOKEN"], e.vars["GITHUB_TOKEN"] = leakToken, leakToken
	res := e.run()
	l.scan.Capture(mode, "log", res.stdout)
	l.scan.Capture(mode, "job summary", res.summary)
	l.scan.Capture(mode, "diff file", res.diff)
	l.scan.Capture(mode, "report file", res.report)
	for name, v := range res.outputs {
		l.scan.Capture(mode, "output "+name, v)
	}
	if raw, err := os.ReadFile(e.vars["GITHUB_OUTPUT"]); err == nil {
		l.scan.Capture(mode, "GITHUB_OUTPUT file", string(raw))
	}
	sent, n := l.gh.sentFrom(l.sent)
	l.sent = n
	captureRequests(l.scan, mode, sent)
	l.scan.CheckRegistered(l.t, mode, res.stdout, append([]string{"GitHub token", "age identity"}, registered...)...)
	if !slices.ContainsFunc(sent, func(r string) bool { return strings.HasPrefix(r, "POST /repos/acme/deployments/statuses/") }) {
		l.t.Errorf("%s: no commit status was sent", mode)
	}
	l.lastStdout = res.stdout
	// What the test may print of it, should it fail, shows no value.
	res.stdout, res.summary, res.diff, res.report = l.scan.Redact(res.stdout), l.scan.Redact(res.summary), l.scan.Redact(res.diff), l.scan.Redact(res.report)
	for name, v := range res.outputs {
		res.outputs[name] = l.scan.Redact(v)
	}
	return res
}

// captureRequests captures requests to GitHub as sent, and the strings
// of their JSON bodies as GitHub reads them (a comment's markdown, a
// status's description).
func captureRequests(scan *leaktest.Scanner, mode string, sent []string) {
	for _, req := range sent {
		scan.Capture(mode, "request to GitHub", req)
		_, body, _ := strings.Cut(req, "\n")
		var fields map[string]any
		if json.Unmarshal([]byte(body), &fields) != nil {
			continue
		}
		for _, v := range fields {
			if s, ok := v.(string); ok {
				scan.Capture(mode, "request to GitHub, decoded", s)
			}
		}
	}
}

// env is a run of event at the commit head (PR base base), of the unit
// at deploy/app, or of the configuration clusters/test with config.
func (l *leakRepo) env(event, head, base, ns string, config bool) *runEnv {
	e := newRun(l.t, l.gh, event, l.dir, map[string]string{prOpened: head, prSynchronize: head, prBase: base, pushed: head,
		"3333333333333333333333333333333333333333": head})
	e.input("inventory-namespace", ns)
	if config {
		// The key of the decryption Secret the units name, given as a
		// configuration's units get theirs: through the step's env.
		delete(e.vars, "INPUT_TIMEOUT")
		e.vars["UNITS_AGE_KEY"] = l.key.Identity
		return e.input("decryption-secrets", "sops-age=$UNITS_AGE_KEY").input("config", "clusters/test")
	}
	return e.input("sops-age-key", l.key.Identity).input("path", "deploy/app").input("name", "app").input("target-namespace", ns).input("wait", "false")
}

func (l *leakRepo) encryptYAML(path string, obj map[string]any) {
	l.t.Helper()
	plain, err := yaml.Marshal(obj)
	if err != nil {
		l.t.Fatal(err)
	}
	enc, err := sopstest.Encrypt(l.key.Recipient, plain, formats.Yaml, sopstest.K8sSecretRegex)
	if err != nil {
		l.t.Fatal(err)
	}
	l.write(path, string(enc))
}

func secretObject(name, ns string, stringData map[string]any, data map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	if ns != "" {
		meta["namespace"] = ns
	}
	obj := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": meta, "stringData": stringData}
	if data != nil {
		obj["data"] = data
	}
	return obj
}

// appUnit writes deploy/app: a SOPS Secret with stringData (a value with
// characters every escaping changes, a PEM-like one, one that changes
// between commits, and extra) and data, and a SOPS dotenv file a
// secretGenerator reads.
func (l *leakRepo) appUnit(rotating string, extra map[string]any) {
	l.t.Helper()
	l.write("deploy/app/kustomization.yaml", `resources: [creds.enc.yaml, settings.yaml]
secretGenerator:
- name: api
  envs: [api.enc.env]
generatorOptions:
  disableNameSuffixHash: true
`)
	stringData := map[string]any{"special": leakSpecial, "pem": leakPEM, "rotating": rotating}
	for k, v := range extra {
		stringData[k] = v
	}
	l.encryptYAML("deploy/app/creds.enc.yaml", secretObject("creds", "", stringData,
		map[string]any{"blob": base64.StdEncoding.EncodeToString([]byte(leakData))}))
	env, err := sopstest.Encrypt(l.key.Recipient, []byte("TOKEN="+leakEnv+"\nUSER=svc\n"), formats.Dotenv, "")
	if err != nil {
		l.t.Fatal(err)
	}
	l.write("deploy/app/api.enc.env", string(env))
	l.write("deploy/app/settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  rotating: "+rotating[:10]+"\n")
}

// Every mode of the action over a unit with encrypted files: push
// (apply, with a kubeconfig's contents holding a client key), a pull
// request's diff against the cluster (with a kubeconfig file holding a
// bearer token) where a value changed, the offline diff of a forked pull
// request, drift reported then corrected after values were edited in the
// cluster, a failing push (an admission policy quoting a value), delete.
// Nothing of any secret, in any form, in the log, the job summary, the
// outputs, the diff file, the report file or anything sent to GitHub
// (comments, commit statuses); every secret the run holds registered with ::add-mask::.
func TestLeakScanActionUnit(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	// What the scan reads of GitHub: statuses, the PR's comment (#7),
	// the fork's (#8) and the drift issue.
	l.gh.expect(statusCall, commentOn(7), commentOn(8))
	l.gh.expectTimes(1, openIssueCall)
	decrypted := []string{"SOPS stringData", "SOPS data", "SOPS multi-line", "SOPS dotenv"}
	for name, v := range map[string]string{"SOPS stringData": leakSpecial, "SOPS data": leakData, "SOPS multi-line": leakPEM,
		"SOPS dotenv": leakEnv, "rotating (old)": leakRotOld, "rotating (new)": leakRotNew} {
		l.scan.Secret(name, v)
	}
	l.scan.Unmasked("edited in the cluster", leakLive)
	l.appUnit(leakRotOld, nil)
	first := l.commit("app")
	l.appUnit(leakRotNew, nil)
	second := l.commit("rotate")
	cert := []string{"kubeconfig client key"}
	token := []string{"kubeconfig bearer token"}

	l.git("checkout", "-q", first)
	if res := l.run("push", l.env("push", first, "", ns, false).input("kubeconfig", l.certKubeconfig), slices.Concat(decrypted, cert, []string{"rotating (old)"})...); res.code != exitOK {
		t.Fatalf("push: exit %d\n%s", res.code, res.stdout)
	}
	client := cluster.Client(t)
	if s, err := client.CoreV1().Secrets(ns).Get(t.Context(), "creds", metav1.GetOptions{}); err != nil || string(s.Data["special"]) != leakSpecial {
		t.Fatalf("the pushed Secret: %v", err)
	}

	l.git("checkout", "-q", second)
	pr := l.run("pull_request", l.env("pull_request.opened", second, first, ns, false).input("kubeconfig", cluster.Kubeconfig), slices.Concat(decrypted, token, []string{"rotating (new)"})...)
	if pr.code != exitOK || !strings.Contains(pr.summary, "rotating: '*** (changed, sha256:") || len(l.gh.commentBodies()) != 1 {
		t.Fatalf("pull request: exit %d, %d comments\n%s\n%s", pr.code, len(l.gh.commentBodies()), pr.stdout, pr.summary)
	}
	fork := l.run("pull_request (offline)", l.env("pull_request.fork", second, first, ns, false))
	if fork.code != exitOK || !strings.Contains(fork.stdout, "no cluster access") || !strings.Contains(fork.summary, "rotating: '*** (after)'") {
		t.Fatalf("offline diff: exit %d\n%s\n%s", fork.code, fork.stdout, fork.summary)
	}
	if pr.report == "" || fork.report == "" { // the scan read them
		t.Errorf("a pull request's run wrote no report file (outputs %v, %v)", pr.outputs, fork.outputs)
	}
	if res := l.run("push (rotated)", l.env("push", second, "", ns, false).input("kubeconfig", l.certKubeconfig), slices.Concat(decrypted, cert, []string{"rotating (new)"})...); res.code != exitOK {
		t.Fatalf("push of the rotated value: exit %d\n%s", res.code, res.stdout)
	}

	s, err := client.CoreV1().Secrets(ns).Get(t.Context(), "creds", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Data["special"], s.Data["rotating"] = []byte(leakLive), []byte(leakLive)
	if _, err := client.CoreV1().Secrets(ns).Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	report := l.run("schedule (drift report)", l.env("schedule", second, "", ns, false).input("kubeconfig", cluster.Kubeconfig).
		input("drift-action", "report").input("fail-on-drift", "true"), slices.Concat(decrypted, token)...)
	if report.code != exitFail || report.outputs["drifted"] != "true" {
		t.Fatalf("drift report: exit %d outputs %v\n%s", report.code, report.outputs, report.stdout)
	}
	if res := l.run("schedule (drift corrected)", l.env("schedule", second, "", ns, false).input("kubeconfig", l.certKubeconfig), slices.Concat(decrypted, cert)...); res.code != exitOK {
		t.Fatalf("drift correction: exit %d\n%s", res.code, res.stdout)
	}

	// A value the API server refuses, quoting it.
	cluster.DenyPolicy(t, ns)
	l.scan.Secret("refused by admission", leakSubstNew)
	l.appUnit(leakRotNew, map[string]any{"deny": leakSubstNew})
	third := l.commit("a value admission refuses")
	failed := l.run("push (failing)", l.env("push", third, "", ns, false).input("kubeconfig", l.certKubeconfig), slices.Concat(decrypted, cert, []string{"refused by admission"})...)
	if failed.code != exitFail || !strings.Contains(failed.summary, "refused: deny is ***") {
		t.Fatalf("failing push: exit %d\n%s\n%s", failed.code, failed.stdout, failed.summary)
	}
	if st := l.gh.lastStatus(); st["state"] != "failure" {
		t.Errorf("status of the failing push: %v", st["state"])
	}

	if res := l.run("delete", l.env("push", third, "", ns, false).input("kubeconfig", l.certKubeconfig).input("mode", "delete"), cert...); res.code != exitOK {
		t.Fatalf("delete: exit %d\n%s", res.code, res.stdout)
	}
	if _, err := client.CoreV1().Secrets(ns).Get(t.Context(), "creds", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Secret after delete: %v", err)
	}
}

// configUnits writes clusters/test/units.yaml with a Kustomization for
// each name at deploy/<name>, decrypted with SOPS and substituting from
// the configuration's encrypted Secret vars.
func (l *leakRepo) configUnits(ns string, names ...string) {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(kustomization(n, ns, "deploy/"+n, "  decryption: {provider: sops, secretRef: {name: sops-age}}\n  postBuild:\n    substituteFrom:\n    - {kind: Secret, name: vars}\n"))
	}
	l.write("clusters/test/units.yaml", b.String())
}

// A value of an encrypted Secret of a configuration, substituted into a
// ConfigMap's data, an annotation and a URL, into a Deployment's image
// (whose repository the PR changes too: the comment lists the image
// change first, masked), and into a Job's env: apply,
// a pull request's diff where the value changed (the cluster holds the
// old one; the Job's dry-run fails, its error dumping the template), the
// offline diff, a push that fails (that Job, and a label made of the
// value, which validation quotes), drift reported then corrected.
func TestLeakScanActionConfig(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall, commentOn(7), commentOn(8))
	l.gh.expectTimes(1, openIssueCall)
	l.scan.Secret("substituted (old)", leakSubstOld)
	l.scan.Secret("substituted (new)", leakSubstNew)
	l.scan.Unmasked("edited in the cluster", leakLive)
	l.configUnits(ns, "subst", "job")
	l.write("deploy/subst/settings.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: subst-settings
  annotations:
    leak.example/token: ${TOKEN}
data:
  token: ${TOKEN}
  url: https://svc.example/callback?token=${TOKEN}&v=1
  plain: "1"
`)
	deployment := func(repository string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: subst-app\nspec:\n  selector:\n    matchLabels: {app: subst}\n" +
			"  template:\n    metadata:\n      labels: {app: subst}\n    spec:\n      containers:\n      - name: app\n        image: " + repository + ":${TOKEN}\n"
	}
	l.write("deploy/subst/deployment.yaml", deployment("registry.example/app"))
	l.write("deploy/job/job.yaml", `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: registry.example/migrate:1
        env:
        - name: DB_PASSWORD
          value: ${TOKEN}
`)
	l.write("deploy/label/settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labelled\n  labels:\n    token: ${TOKEN}\n")
	l.write("clusters/test/flux-system/gotk-sync.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n")
	l.encryptYAML("clusters/test/vars.enc.yaml", secretObject("vars", ns, map[string]any{"TOKEN": leakSubstOld}, nil))
	first := l.commit("units")
	l.encryptYAML("clusters/test/vars.enc.yaml", secretObject("vars", ns, map[string]any{"TOKEN": leakSubstNew}, nil))
	l.write("deploy/subst/deployment.yaml", deployment("registry.example/app2"))
	second := l.commit("rotate")
	l.configUnits(ns, "subst", "job", "label")
	third := l.commit("label")
	cert := []string{"kubeconfig client key"}
	token := []string{"kubeconfig bearer token"}

	l.git("checkout", "-q", first)
	if res := l.run("config push", l.env("push", first, "", ns, true).input("kubeconfig", l.certKubeconfig), slices.Concat(cert, []string{"substituted (old)"})...); res.code != exitOK {
		t.Fatalf("push: exit %d\n%s", res.code, res.stdout)
	}
	client := cluster.Client(t)
	if cm, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "subst-settings", metav1.GetOptions{}); err != nil || cm.Data["token"] != leakSubstOld {
		t.Fatalf("the substituted ConfigMap: %v", err)
	}

	l.git("checkout", "-q", second)
	pr := l.run("config pull_request", l.env("pull_request.opened", second, first, ns, true).input("kubeconfig", cluster.Kubeconfig), slices.Concat(token, []string{"substituted (new)"})...)
	for _, want := range []string{"token: '*** (changed, sha256:", "leak.example/token: '*** (sha256:", "field is immutable"} {
		if !strings.Contains(pr.summary, want) {
			t.Errorf("the pull request's summary lacks %q:\n%s", want, pr.summary)
		}
	}
	if len(l.gh.commentBodies()) != 1 {
		t.Errorf("comments: %d", len(l.gh.commentBodies()))
	} else if body := l.gh.commentBodies()[0]; !strings.Contains(body, "- container `app`: `***` → `***` in `Deployment/"+ns+"/subst-app`") {
		t.Errorf("the comment does not list the image change, masked:\n%s", l.scan.Redact(body))
	}
	l.run("config pull_request (offline)", l.env("pull_request.fork", second, first, ns, true))

	l.git("checkout", "-q", third)
	// A test of the configuration reaches no cluster and decrypts nothing:
	// its job summary holds ciphertext at most.
	if tested := l.run("config test", l.env("push", third, "", ns, true).input("mode", "test")); !strings.Contains(tested.summary, "unit(s) passed") {
		t.Errorf("the test's summary:\n%s", l.scan.Redact(tested.summary))
	}
	failed := l.run("config push (failing)", l.env("push", third, "", ns, true).input("kubeconfig", l.certKubeconfig), slices.Concat(cert, []string{"substituted (new)"})...)
	if failed.code != exitFail {
		t.Fatalf("push: exit %d, want a failure\n%s", failed.code, failed.stdout)
	}
	for _, want := range []string{"field is immutable", `metadata.labels: Invalid value: "***"`} {
		if !strings.Contains(failed.summary, want) {
			t.Errorf("the failing push's summary lacks %q:\n%s", want, failed.summary)
		}
	}
	for _, unit := range []string{"job", "label"} {
		if st := l.gh.lastStatusOf("kustomize-deploy/" + unit); st["state"] != "failure" {
			t.Errorf("status of %s: %v", unit, st["state"])
		}
	}

	cm, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "subst-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["token"] = leakLive
	if _, err := client.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	l.run("config schedule (drift report)", l.env("schedule", third, "", ns, true).input("kubeconfig", cluster.Kubeconfig).input("drift-action", "report"), slices.Concat(token, []string{"substituted (new)"})...)
	fixed := l.run("config schedule (drift corrected)", l.env("schedule", third, "", ns, true).input("kubeconfig", l.certKubeconfig), slices.Concat(cert, []string{"substituted (new)"})...)
	if fixed.outputs["drifted"] != "true" {
		t.Errorf("drift correction: outputs %v\n%s", fixed.outputs, fixed.stdout)
	}
	if cm, _ := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "subst-settings", metav1.GetOptions{}); cm.Data["token"] != leakSubstNew {
		t.Error("drift was not corrected")
	}
}

// What reports a result (annotations, outputs, the job summary, the
// diff file, the PR comment, the commit status) masks its texts before
// rendering them: markdown escapes & and \ in a message quoting a value,
// and GitHub cuts a status's description. Here the result quotes secrets
// the engine did not mask (the action's own, the GitHub token, and a
// value), Go-style. Its diff is as the engine makes it, masked by where
// values came from: the word Git wrote there is shown, though a secret
// registered with the masker is the same word.
func TestLeakScanReport(t *testing.T) {
	gh := newFakeGitHub(t)
	// The report's two writes, both scanned.
	gh.onlyExpectedWrites()
	gh.expectTimes(1, commentOn(7))
	gh.expectTimes(1, "POST /repos/acme/deployments/statuses/abc123")
	tmp := t.TempDir()
	files := map[string]string{"GITHUB_OUTPUT": filepath.Join(tmp, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(tmp, "summary")}
	var log strings.Builder
	getenv := func(k string) string { return files[k] }
	gha := githubactions.New(githubactions.WithWriter(&log), githubactions.WithGetenv(getenv))
	r := &runner{masker: mask.New(), gha: gha, env: Env{Getenv: getenv}, files: &fileCommands{getenv: getenv, gha: gha},
		in: Inputs{GitHubToken: leakToken, Status: true, Comment: "auto"}, mode: result.ModeDiff,
		ev: &event{Owner: "acme", Repo: "deployments", SHA: "abc123", PR: 7, APIURL: gh.srv.URL, WorkspaceDir: tmp}}
	r.log = r.masker.Writer(&log)
	r.maskValues(leakToken, leakSpecial, "postgres")
	r.gh = newGHReporter(r.env, r.gha, r.log, r.masker, r.in, r.ev, r.mode)
	quoted := fmt.Sprintf("ConfigMap \"a\" is invalid: metadata.labels: Invalid value: %q (token %s)", leakSpecial, leakToken)
	res := &result.Result{Unit: "app", Mode: result.ModeDiff, Reason: result.ReasonValidationFailed, Message: quoted, Entries: []result.Entry{
		{Object: object.ID{Kind: "ConfigMap", Namespace: "apps", Name: "a"}, Action: result.Failed, Reason: quoted},
		{Object: object.ID{Kind: "ConfigMap", Namespace: "apps", Name: "b"}, Action: result.Configured, Diff: "+  token: '*** (changed, sha256:0123abcd)'\n+  user: postgres\n"},
		// The texts a review adds: a danger's consequence naming a
		// namespace made of a value, a change folded as noise, and an
		// image change whose tag is a value.
		{Object: object.ID{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding", Namespace: "apps", Name: "admin"}, Action: result.Configured, Diff: "+  name: cluster-admin\n",
			Dangers: []result.Danger{{Risk: "RBAC grant", Field: "roleRef", Consequence: "binds cluster-admin: its subjects get full control of the Namespace " + leakSpecial}}},
		{Object: object.ID{Kind: "ConfigMap", Namespace: "apps", Name: "c-" + leakSpecial}, Action: result.Configured, Noise: true, Diff: "+    helm.sh/chart: web-1.1.0\n"},
	}, Images: []result.ImageChange{{Container: "app", From: "registry.example/app:" + leakSpecial, To: "registry.example/app:2",
		Objects: []object.ID{{Group: "apps", Kind: "Deployment", Namespace: "apps", Name: "web-" + leakSpecial}}}}}
	r.report(t.Context(), outcome{results: []*result.Result{res}, title: "app", marker: marker("unit=app", ""), file: "app",
		clusters: map[string]string{"app": ""}})

	scan := &leaktest.Scanner{}
	scan.Secret("SOPS stringData", leakSpecial)
	scan.Secret("GitHub token", leakToken)
	sent, _ := gh.sentFrom(0)
	captureRequests(scan, "report", sent)
	scan.Capture("report", "log", log.String())
	for name, path := range map[string]string{"job summary": files["GITHUB_STEP_SUMMARY"], "GITHUB_OUTPUT file": files["GITHUB_OUTPUT"], "diff file": filepath.Join(tmp, diffDir, "app.diff")} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		scan.Capture("report", name, string(data))
	}
	scan.Check(t)
	if len(gh.commentBodies()) != 1 || !strings.Contains(gh.commentBodies()[0], `Invalid value: "\*\*\*"`) || !strings.Contains(gh.commentBodies()[0], "+  user: postgres") {
		t.Errorf("the comment: %s", scan.Redact(strings.Join(gh.commentBodies(), "\n")))
	}
	for _, want := range []string{"### 🖼️ Images", "binds cluster-admin", "1 object relabelled"} {
		if !strings.Contains(gh.commentBodies()[0], want) {
			t.Errorf("the comment lacks %q: %s", want, scan.Redact(strings.Join(gh.commentBodies(), "\n")))
		}
	}
	if st := gh.lastStatus(); st == nil || !strings.Contains(st["description"].(string), `Invalid value: "***"`) {
		t.Errorf("status %s", scan.Redact(fmt.Sprint(st)))
	}
}

// Runs that fail on their credentials, or whose reports GitHub refuses:
// a kubeconfig that does not parse, or is one line, around a token; a
// bearer token and a client certificate the cluster refuses; a token
// that may not write to GitHub. Each fails (or warns) as intended, and
// nothing of any credential shows anywhere.
func TestLeakScanActionFailures(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall, commentOn(7)) // the comment GitHub refuses
	l.scan.Secret("SOPS stringData", leakSpecial)
	l.appUnit(leakRotOld, nil)
	head := l.commit("app")
	const unparsed = "kc-unparsed-token+/=0123456789abcdef"
	const refused = "kc-refused-token-0123456789abcdef"
	// A kubeconfig that does not parse is never read, so never
	// registered: it must not show all the same.
	l.scan.Unmasked("token of a kubeconfig that does not parse", unparsed)
	l.scan.Secret("kubeconfig token the cluster refuses", refused)
	untrusted, _, untrustedKey := certKubeconfig(t, false)
	l.scan.Secret("kubeconfig client key the cluster refuses", string(untrustedKey))

	tokenKubeconfig := func(token string) string {
		kc := clientcmdapi.NewConfig()
		kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cluster.Config.Host, CertificateAuthorityData: cluster.Config.CAData}
		kc.AuthInfos["ci"] = &clientcmdapi.AuthInfo{Token: token}
		kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "ci"}
		kc.CurrentContext = "test"
		data, err := clientcmd.Write(*kc)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	for _, c := range []struct {
		mode, kubeconfig, want string
		registered             []string
	}{
		{"push (kubeconfig does not parse)", strings.Replace(tokenKubeconfig(unparsed), "token: ", "token: [", 1), "not a valid kubeconfig", nil},
		{"push (kubeconfig of one line)", "token: " + unparsed, "neither a readable file nor kubeconfig contents", nil},
		{"push (token refused)", tokenKubeconfig(refused), "the server has asked for the client to provide credentials", []string{"kubeconfig token the cluster refuses"}},
		{"push (certificate refused)", untrusted, "the server has asked for the client to provide credentials", []string{"kubeconfig client key the cluster refuses"}},
	} {
		res := l.run(c.mode, l.env("push", head, "", ns, false).input("kubeconfig", c.kubeconfig), c.registered...)
		if res.code != exitFail || !strings.Contains(res.stdout, c.want) {
			t.Errorf("%s: exit %d, want a failure saying %q\n%s", c.mode, res.code, c.want, res.stdout)
		}
	}

	l.gh.forbid = true
	res := l.run("pull_request (GitHub refuses)", l.env("pull_request.opened", head, head, ns, false).input("kubeconfig", l.certKubeconfig), "SOPS stringData", "kubeconfig client key")
	if res.code != exitOK || !strings.Contains(res.stdout, "read-only token") {
		t.Errorf("a refused comment: exit %d\n%s", res.code, res.stdout)
	}
}

// A value of an encrypted Secret that breaks the YAML of the object it is
// substituted into: the unit fails its build, annotated at the field
// holding the placeholder, and nothing of the value shows anywhere.
func TestLeakScanActionSubstitutionError(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall)
	const breaking = `[ak-yaml-K4+/=&"\ %ö'end`
	l.scan.Secret("substituted (breaks the YAML)", breaking)
	l.configUnits(ns, "broken")
	l.write("deploy/broken/settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\ndata:\n  plain: \"1\"\n  token: ${TOKEN}\n")
	l.write("clusters/test/flux-system/gotk-sync.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n")
	l.encryptYAML("clusters/test/vars.enc.yaml", secretObject("vars", ns, map[string]any{"TOKEN": breaking}, nil))
	head := l.commit("units")
	res := l.run("config push (substitution fails)", l.env("push", head, "", ns, true).input("kubeconfig", l.certKubeconfig), "kubeconfig client key", "substituted (breaks the YAML)")
	if res.code != exitFail {
		t.Fatalf("exit %d, want a failure\n%s", res.code, res.stdout)
	}
	if want := "::error file=deploy/broken/settings.yaml,line=7,title=BuildFailed in broken::"; !strings.Contains(res.stdout, want) {
		t.Errorf("the log lacks %q:\n%s", want, res.stdout)
	}
}

// A push whose Deployment crashes after its container printed a decrypted
// value: the job summary folds the log with the value masked, and nothing
// of it shows in the log, the outputs or the commit status.
func TestLeakScanActionDiagnostics(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall)
	l.scan.Secret("SOPS stringData", leakSpecial)
	cluster.ServeLogs(t, ns, testcluster.ContainerLog{Container: "app", Previous: []string{"DB_PASSWORD=" + leakSpecial, "fatal: login refused"}})
	l.appUnit(leakRotOld, nil)
	l.write("deploy/app/kustomization.yaml", "resources: [creds.enc.yaml, deployment.yaml]\n")
	l.write("deploy/app/deployment.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: 1
  selector:
    matchLabels: {app: app}
  template:
    metadata:
      labels:
        app: app
        `+testcluster.CrashLabel+`: "1"
    spec:
      containers:
      - name: app
        image: registry.example/app:1
`)
	head := l.commit("crashing app")
	res := l.run("push (crashing)", l.env("push", head, "", ns, false).input("kubeconfig", l.certKubeconfig).input("wait", "true").input("timeout", "8s"),
		"SOPS stringData", "kubeconfig client key")
	if res.code != exitFail {
		t.Fatalf("exit %d, want a failure\n%s", res.code, res.stdout)
	}
	for _, want := range []string{"waiting CrashLoopBackOff", "(previous instance)", "DB_PASSWORD=***", "fatal: login refused"} {
		if !strings.Contains(res.summary, want) {
			t.Errorf("the job summary lacks %q:\n%s", want, res.summary)
		}
	}
}

// Notifications of a configuration (docs/notifications.md): a Slack
// Provider whose webhook address and token come from the secrets input,
// a generic-hmac Provider whose key is a SOPS Secret of the
// configuration, an Alert of each beside the unit's objects. A push
// applies (an event to each Provider), a push fails on a label made of a
// substituted secret value, which the API server quotes (an error event
// to each). Nothing of either Provider's credentials shows in the log,
// the job summary, the outputs or anything sent to GitHub, each
// registered with ::add-mask:: once read; the events posted (scanned as
// sent and decoded) carry none of the run's secrets, the substituted
// value, the GitHub token or the HMAC key.
func TestLeakScanActionNotifications(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall)
	const slackToken, hmacKey = "xoxb-leak-Nq4+/=&token", "hmac-leak-Kp2+/=&key"
	var mu sync.Mutex
	var bodies [][]byte
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
	}))
	t.Cleanup(recv.Close)
	webhook := recv.URL + "/services/T0LEAK/B0LEAK/webhook-path-Zr8"
	l.scan.Secret("Slack token", slackToken)
	l.scan.Secret("Slack webhook address", webhook)
	l.scan.Secret("HMAC key", hmacKey)
	l.scan.Secret("substituted (old)", leakSubstOld)
	l.configUnits(ns, "app")
	l.write("deploy/app/settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-settings\ndata:\n  token: ${TOKEN}\n")
	l.write("deploy/app/notifications.yaml", `apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {name: slack}
spec:
  type: slack
  channel: deploys
  secretRef: {name: slack-hook}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {name: slack}
spec:
  providerRef: {name: slack}
  eventSources:
  - {kind: Kustomization, name: '*'}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {name: signed}
spec:
  type: generic-hmac
  address: `+recv.URL+`/signed
  secretRef: {name: hmac}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {name: signed}
spec:
  providerRef: {name: signed}
  eventSources:
  - {kind: Kustomization, name: app}
`)
	l.write("clusters/test/flux-system/gotk-sync.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n")
	l.encryptYAML("clusters/test/vars.enc.yaml", secretObject("vars", ns, map[string]any{"TOKEN": leakSubstOld}, nil))
	l.encryptYAML("clusters/test/hmac.enc.yaml", secretObject("hmac", ns, map[string]any{"token": hmacKey}, nil))
	first := l.commit("app with notifications")
	l.write("deploy/app/label.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labelled\n  labels:\n    token: ${TOKEN}\n")
	second := l.commit("a label the API server refuses")
	cert := []string{"kubeconfig client key", "substituted (old)"}
	env := func(head string) *runEnv {
		e := l.env("push", head, "", ns, true).input("kubeconfig", l.certKubeconfig).input("secrets", "slack-hook=$SLACK_HOOK")
		e.vars["SLACK_HOOK"] = "address=" + webhook + "\ntoken=" + slackToken + "\n"
		return e
	}
	posted := func(mode string, want int) {
		t.Helper()
		mu.Lock()
		got := bodies
		bodies = nil
		mu.Unlock()
		if len(got) != want {
			t.Errorf("%s: %d notification(s) posted, want %d", mode, len(got), want)
		}
		for _, b := range got {
			l.scan.CaptureJSON(mode, "notification", b)
		}
	}

	l.git("checkout", "-q", first)
	if res := l.run("config push (notifies)", env(first), slices.Concat(cert, []string{"Slack token", "Slack webhook address", "HMAC key"})...); res.code != exitOK {
		t.Fatalf("push: exit %d\n%s", res.code, res.stdout)
	}
	posted("config push (notifies)", 2)
	l.git("checkout", "-q", second)
	failed := l.run("config push (failing, notifies)", env(second), slices.Concat(cert, []string{"Slack token", "Slack webhook address", "HMAC key"})...)
	if failed.code != exitFail {
		t.Fatalf("failing push: exit %d\n%s", failed.code, failed.stdout)
	}
	posted("config push (failing, notifies)", 2)
}
