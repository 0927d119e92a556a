package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/leaktest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// The values of the leak scan, each of a shape that encodes its own way:
// characters that URL-, JSON-, Go- and YAML-escaping change, a multi-line
// PEM-like value, values that change between runs.
const (
	leakSpecial  = `lk-special-Q7w+/=&"\ %é中'end`
	leakData     = "lk-data-R8v+9/Zr==&tail"
	leakPEM      = "-----BEGIN LEAKTEST PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjlkpem1\nlkpem2+Vb9/cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2wX3y\nZ4a5B6c7D8e9F0g1H2i3J4k5L6m7N8o9lkpem3==\n-----END LEAKTEST PRIVATE KEY-----\n"
	leakEnv      = "lk-env-Hh3+k/9=zQ"
	leakRotOld   = "lk-rot-old-Xw4+/=p&q"
	leakRotNew   = "lk-rot-new-Yv5+/=r&s"
	leakLive     = "lk-live-edit-Mn6+/=t&u"
	leakSubstOld = `lk-sub-old-Z2+/=&"\ %ü'end`
	leakSubstNew = `lk-sub-new-W3+/=&"\ %ß'end`
)

// leakCLI runs commands and hands everything they print to the scanner.
type leakCLI struct {
	*cli
	scan *leaktest.Scanner
	key  sopstest.Key
}

func newLeakCLI(t *testing.T) *leakCLI {
	l := &leakCLI{cli: newCLI(t), scan: &leaktest.Scanner{}, key: newKey(t)}
	l.env["SOPS_AGE_KEY"] = l.key.Identity
	l.scan.Secret("age identity", l.key.Identity)
	l.scan.Secret("kubeconfig bearer token", cluster.Config.BearerToken)
	t.Cleanup(func() { l.scan.Check(t) })
	return l
}

// run runs a command and captures its streams under mode; it returns
// them redacted.
func (l *leakCLI) run(mode string, args ...string) outcome {
	l.t.Helper()
	o := l.cli.run(args...)
	l.scan.Capture(mode, "stdout", o.stdout)
	l.scan.Capture(mode, "stderr", o.stderr)
	// What the test may print of it, should it fail, shows no value.
	return outcome{o.code, l.scan.Redact(o.stdout), l.scan.Redact(o.stderr)}
}

// both runs a command as text, then with --output json; it returns the
// JSON run.
func (l *leakCLI) both(mode string, args ...string) (text, js outcome) {
	l.t.Helper()
	text = l.run(mode, args...)
	js = l.run(mode+" -o json", append(args, "--output", "json")...)
	return text, js
}

// encryptYAML writes obj as YAML at path, its data and stringData
// encrypted for the test's key.
func (l *leakCLI) encryptYAML(path string, obj map[string]any) {
	l.t.Helper()
	plain, err := yaml.Marshal(obj)
	if err != nil {
		l.t.Fatal(err)
	}
	encryptFile(l.t, l.key, path, string(plain), formats.Yaml, sopstest.K8sSecretRegex)
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

func gitCommit(t *testing.T, dir, msg string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", msg}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// appUnit writes a unit with every kind of encrypted file: a SOPS Secret
// with stringData (one value with characters every escaping changes, a
// PEM-like one, one that changes between runs) and data, and a SOPS
// dotenv file a secretGenerator reads.
func (l *leakCLI) appUnit(dir, rotating string) {
	l.t.Helper()
	writeFile(l.t, filepath.Join(dir, "kustomization.yaml"), `resources: [creds.enc.yaml, settings.yaml]
secretGenerator:
- name: api
  envs: [api.enc.env]
generatorOptions:
  disableNameSuffixHash: true
`)
	l.encryptYAML(filepath.Join(dir, "creds.enc.yaml"), secretObject("creds", "",
		map[string]any{"special": leakSpecial, "pem": leakPEM, "rotating": rotating},
		map[string]any{"blob": base64.StdEncoding.EncodeToString([]byte(leakData))}))
	encryptFile(l.t, l.key, filepath.Join(dir, "api.enc.env"), "TOKEN="+leakEnv+"\nUSER=svc\n", formats.Dotenv, "")
	writeFile(l.t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  rotating: "+rotating[:10]+"\n")
}

// Every command over a unit with encrypted files, text and JSON: build,
// apply, diff of a changed secret (the live side holds the old value),
// drift after values were edited in the cluster, drift --correct, status
// and delete. No value, in any form, in anything printed.
func TestLeakScanUnit(t *testing.T) {
	l := newLeakCLI(t)
	for name, v := range map[string]string{"SOPS stringData": leakSpecial, "SOPS data": leakData, "SOPS multi-line": leakPEM,
		"SOPS dotenv": leakEnv, "rotating (old)": leakRotOld, "rotating (new)": leakRotNew, "edited in the cluster": leakLive} {
		l.scan.Secret(name, v)
	}
	dir := t.TempDir()
	l.appUnit(dir, leakRotOld)
	gitCommit(t, dir, "app")
	unit := []string{"--name", "app", "--path", dir, "--target-namespace", l.ns, "--timeout", "30s"}

	build, buildJSON := l.both("build", "build", "--path", dir, "--target-namespace", l.ns)
	if build.code != exitOK || buildJSON.code != exitOK {
		t.Fatalf("build: exit %d, %d\n%s%s", build.code, buildJSON.code, build.stderr, buildJSON.stderr)
	}
	// build prints Secrets with every value masked: nothing to reveal.
	contains(t, "build", build.stdout, "special: '***'", "pem: '***'", "TOKEN: '***'", "blob: '***'")

	apply, applyJSON := l.both("apply", append([]string{"apply"}, unit...)...)
	if apply.code != exitOK || applyJSON.code != exitOK {
		t.Fatalf("apply: exit %d, %d\n%s%s", apply.code, applyJSON.code, apply.stdout, applyJSON.stdout)
	}
	client := cluster.Client(t)
	s, err := client.CoreV1().Secrets(l.ns).Get(t.Context(), "creds", metav1.GetOptions{})
	if err != nil || string(s.Data["special"]) != leakSpecial || string(s.Data["pem"]) != leakPEM || string(s.Data["blob"]) != leakData {
		t.Fatalf("the applied Secret does not hold the values: %v", err)
	}

	// The value changes: the diff says so, showing neither.
	l.appUnit(dir, leakRotNew)
	gitCommit(t, dir, "rotate")
	diff, _ := l.both("diff", append([]string{"diff"}, unit...)...)
	contains(t, "diff of the rotated secret", diff.stdout, "rotating: '*** (changed, sha256:")

	if o := l.run("apply (rotated)", append([]string{"apply"}, unit...)...); o.code != exitOK {
		t.Fatalf("apply of the rotated secret: exit %d\n%s", o.code, o.stdout)
	}
	// Someone edits values in the cluster: drift shows that they changed,
	// not what they are.
	s, _ = client.CoreV1().Secrets(l.ns).Get(t.Context(), "creds", metav1.GetOptions{})
	s.Data["special"], s.Data["rotating"] = []byte(leakLive), []byte(leakLive)
	if _, err := client.CoreV1().Secrets(l.ns).Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	report, _ := l.both("drift", append([]string{"drift"}, unit...)...)
	contains(t, "drift report", report.stdout, "Secret/"+l.ns+"/creds", "***")
	if o, _ := l.both("drift --correct", append([]string{"drift", "--correct"}, unit...)...); o.code != exitOK {
		t.Fatalf("drift --correct: exit %d\n%s", o.code, o.stdout)
	}
	s, _ = client.CoreV1().Secrets(l.ns).Get(t.Context(), "creds", metav1.GetOptions{})
	if string(s.Data["special"]) != leakSpecial {
		t.Error("drift --correct did not restore the Secret")
	}
	l.both("status", "status")
	del, _ := l.both("delete", "delete", "--name", "app")
	if del.code != exitOK {
		t.Fatalf("delete: exit %d\n%s", del.code, del.stdout)
	}
}

// fluxUnits writes clusters/test/units.yaml with a Kustomization for
// each name of units, at deploy/<name>, decrypted with SOPS and
// substituting from the configuration's encrypted Secret vars; the
// name's value is more of its spec, indented by two spaces.
func fluxUnits(t *testing.T, root, ns string, units map[string]string) {
	t.Helper()
	var b strings.Builder
	for _, n := range slices.Sorted(maps.Keys(units)) {
		extra := units[n]
		fmt.Fprintf(&b, `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: %s
  namespace: %s
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: flux-system}
  path: ./deploy/%s
  targetNamespace: %s
  prune: true
  decryption: {provider: sops, secretRef: {name: sops-age}}
  postBuild:
    substituteFrom:
    - {kind: Secret, name: vars}
%s`, n, ns, n, ns, extra)
	}
	writeFile(t, filepath.Join(root, "clusters/test/units.yaml"), b.String())
}

// substUnit writes deploy/subst: a ConfigMap whose data, annotation and a
// URL in it take ${TOKEN}.
func substUnit(t *testing.T, root string) {
	writeFile(t, filepath.Join(root, "deploy/subst/settings.yaml"), `apiVersion: v1
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
}

// A value of an encrypted Secret of the configuration, substituted into
// a ConfigMap's data, an annotation and a URL, through apply, diff (the
// value changed: the cluster holds the old one), drift and drift
// --correct of a configuration (--config), text and JSON.
func TestLeakScanConfigSubstitution(t *testing.T) {
	l := newLeakCLI(t)
	l.scan.Secret("substituted (old)", leakSubstOld)
	l.scan.Secret("substituted (new)", leakSubstNew)
	l.scan.Secret("edited in the cluster", leakLive)
	root := t.TempDir()
	fluxUnits(t, root, l.ns, map[string]string{"subst": ""})
	substUnit(t, root)
	vars := filepath.Join(root, "clusters/test/vars.enc.yaml")
	l.encryptYAML(vars, secretObject("vars", l.ns, map[string]any{"TOKEN": leakSubstOld}, nil))
	gitCommit(t, root, "subst")
	config := []string{"--config", filepath.Join(root, "clusters/test")}

	apply, _ := l.both("config apply", append([]string{"apply"}, config...)...)
	if apply.code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", apply.code, apply.stdout, apply.stderr)
	}
	client := cluster.Client(t)
	cm, err := client.CoreV1().ConfigMaps(l.ns).Get(t.Context(), "subst-settings", metav1.GetOptions{})
	if err != nil || cm.Data["token"] != leakSubstOld || cm.Annotations["leak.example/token"] != leakSubstOld {
		t.Fatalf("the substituted ConfigMap: %v", err)
	}

	l.encryptYAML(vars, secretObject("vars", l.ns, map[string]any{"TOKEN": leakSubstNew}, nil))
	gitCommit(t, root, "rotate")
	diff, _ := l.both("config diff", append([]string{"diff"}, config...)...)
	contains(t, "diff of the rotated value", diff.stdout, "token: '*** (changed, sha256:", "leak.example/token: '*** (sha256:")
	if o := l.run("config apply (rotated)", append([]string{"apply"}, config...)...); o.code != exitOK {
		t.Fatalf("apply of the rotated value: exit %d\n%s", o.code, o.stdout)
	}

	cm, _ = client.CoreV1().ConfigMaps(l.ns).Get(t.Context(), "subst-settings", metav1.GetOptions{})
	cm.Data["token"], cm.Data["url"] = leakLive, "https://svc.example/callback?token="+leakLive
	if _, err := client.CoreV1().ConfigMaps(l.ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	report, _ := l.both("config drift", append([]string{"drift"}, config...)...)
	contains(t, "drift report", report.stdout, "ConfigMap/"+l.ns+"/subst-settings", "***")
	if o, _ := l.both("config drift --correct", append([]string{"drift", "--correct"}, config...)...); o.code != exitOK {
		t.Fatalf("drift --correct: exit %d\n%s", o.code, o.stdout)
	}
	l.both("status", "status")
}

// Runs that fail where the API server's or the engine's message quotes
// an object holding a secret: a label made of a substituted value
// (validation quotes it Go-style), a Job whose template changed (the
// immutable-field error dumps the template as JSON), an admission policy
// echoing a ConfigMap's and a Secret's value, a client-side schema check,
// a health check that fails. Each fails as intended; nothing printed,
// then or by status, holds a value.
func TestLeakScanErrors(t *testing.T) {
	l := newLeakCLI(t)
	l.scan.Secret("substituted (old)", leakSubstOld)
	l.scan.Secret("substituted (new)", leakSubstNew)
	cluster.DenyPolicy(t, l.ns)
	root := t.TempDir()
	fluxUnits(t, root, l.ns, map[string]string{"label": "", "job": "", "admission": "", "schema": ""})
	writeFile(t, filepath.Join(root, "deploy/schema/deployment.yaml"), `apiVersion: apps/v1
kind: Deployment
metadata:
  name: schema
spec:
  replicas: ${TOKEN}
  selector:
    matchLabels: {app: schema}
  template:
    metadata:
      labels: {app: schema}
    spec:
      containers:
      - name: app
        image: registry.example/app:1
        env:
        - name: TOKEN
          value: ${TOKEN}
`)
	writeFile(t, filepath.Join(root, "deploy/label/settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labelled\n  labels:\n    token: ${TOKEN}\n")
	writeFile(t, filepath.Join(root, "deploy/job/job.yaml"), `apiVersion: batch/v1
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
	writeFile(t, filepath.Join(root, "deploy/admission/objects.yaml"), `apiVersion: v1
kind: ConfigMap
metadata:
  name: denied
data:
  deny: ${TOKEN}
---
apiVersion: v1
kind: Secret
metadata:
  name: denied
stringData:
  deny: ${TOKEN}
`)
	vars := filepath.Join(root, "clusters/test/vars.enc.yaml")
	l.encryptYAML(vars, secretObject("vars", l.ns, map[string]any{"TOKEN": leakSubstOld}, nil))
	gitCommit(t, root, "units")
	config := []string{"--config", filepath.Join(root, "clusters/test")}

	// The Job goes in first, with the old value.
	if o := l.run("config apply (job)", append([]string{"apply", "--name", "job"}, config...)...); o.code != exitOK {
		t.Fatalf("apply of the job: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	l.encryptYAML(vars, secretObject("vars", l.ns, map[string]any{"TOKEN": leakSubstNew}, nil))
	gitCommit(t, root, "rotate")

	_, failed := l.both("config apply (failing)", append([]string{"apply"}, config...)...)
	if failed.code != exitFail {
		t.Fatalf("exit %d, want a failure\n%s", failed.code, failed.stdout)
	}
	want := map[string]string{
		"label":     "metadata.labels: Invalid value",
		"job":       "field is immutable",
		"admission": "refused: deny is ***",
		"schema":    "spec.replicas",
	}
	for unit, s := range want {
		contains(t, "the failing apply of "+unit, failed.stdout, s)
	}
	// The client-side schema check, then a dry-run, refuse them too.
	client, _ := l.both("config apply --validation client (failing)", append([]string{"apply", "--validation", "client"}, config...)...)
	if client.code != exitFail {
		t.Fatalf("exit %d, want a failure\n%s", client.code, client.stdout)
	}
	contains(t, "the schema check", client.stdout, "spec.replicas: expected integer")
	l.both("config diff (failing)", append([]string{"diff"}, config...)...)

	// A unit whose Deployment, holding a decrypted value, never gets
	// ready (the Flux Kustomizations above wait 30 s at least).
	unhealthy := t.TempDir()
	l.encryptYAML(filepath.Join(unhealthy, "creds.enc.yaml"), secretObject("creds", "", map[string]any{"special": leakSpecial}, nil))
	writeFile(t, filepath.Join(unhealthy, "deployment.yaml"), `apiVersion: apps/v1
kind: Deployment
metadata:
  name: unhealthy
spec:
  replicas: 1
  selector:
    matchLabels: {app: unhealthy}
  template:
    metadata:
      labels:
        app: unhealthy
        testcluster.kustomize-deploy.dev/readiness: fail
    spec:
      containers:
      - name: app
        image: registry.example/app:1
        envFrom:
        - secretRef: {name: creds}
`)
	l.scan.Secret("SOPS stringData", leakSpecial)
	health, _ := l.both("apply (unhealthy)", "apply", "--name", "unhealthy", "--path", unhealthy, "--target-namespace", l.ns, "--timeout", "3s")
	contains(t, "the unhealthy apply", health.stdout, string(result.ReasonHealthCheckFailed))

	// label, admission and schema failed before applying anything: they
	// have no inventory, so status has no message of theirs to show.
	status, _ := l.both("status", "status")
	contains(t, "status", status.stdout, "job", "unhealthy")
	for _, unit := range []string{"label", "admission", "schema"} {
		if strings.Contains(status.stdout, unit+" ") {
			t.Errorf("status lists %s, which never applied anything:\n%s", unit, status.stdout)
		}
	}
}

// Values from a SOPS Secret flow through a chart's templates into a
// ConfigMap (inside a DSN), an env var, a base64 Secret and a checksum
// annotation: build, apply, a diff where the value changed (the live side
// holds the old one), drift and status show none of them, in any form.
func TestLeakScanHelmValues(t *testing.T) {
	const helmOld, helmNew = "lk-helm-old-Pq8+/=v", "lk-helm-new-Rs9+/=w"
	l := newLeakCLI(t)
	l.scan.Secret("chart value (old)", helmOld)
	l.scan.Secret("chart value (new)", helmNew)
	charts := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	unit := func(password string) {
		chartUnit(t, dir, l.ns, charts.URL, "1.0.0", "    greeting: hello\n  valuesFrom:\n  - {kind: Secret, name: web-values}\n")
		l.encryptYAML(filepath.Join(dir, "values.enc.yaml"), secretObject("web-values", l.ns, map[string]any{"values.yaml": "password: " + password + "\n"}, nil))
	}
	unit(helmOld)
	args := []string{"--name", "web", "--path", dir, "--chart-cache", t.TempDir()}
	noWait := append(slices.Clone(args), "--wait=false") // diff never waits: it has no --wait

	l.both("build", "build", "--path", dir, "--chart-cache", t.TempDir())
	if text, _ := l.both("apply", append([]string{"apply"}, noWait...)...); text.code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", text.code, text.stdout, text.stderr)
	}
	cm, err := cluster.Client(t).CoreV1().ConfigMaps(l.ns).Get(t.Context(), "web-settings", metav1.GetOptions{})
	if err != nil || !strings.Contains(cm.Data["dsn"], helmOld) {
		t.Fatalf("the chart did not put the value into the ConfigMap: %v", err)
	}
	unit(helmNew)
	text, _ := l.both("diff", append([]string{"diff"}, args...)...)
	contains(t, "the diff of a changed value", text.stdout, "ConfigMap/"+l.ns+"/web-settings", "Deployment/"+l.ns+"/web")
	l.both("drift", append([]string{"drift"}, noWait...)...)
	l.both("status", "status", "--name", "web")
}

// A Secret that a chart's template reads with lookup may put its value
// anywhere in the rendered objects (here a ConfigMap's data): it stays
// masked in build, apply, diff, drift and status, before and after it
// changes in the cluster.
func TestLeakScanHelmLookup(t *testing.T) {
	const tokOld, tokNew = "lk-lookup-old-Ab3+/=x", "lk-lookup-new-Cd4+/=y"
	l := newLeakCLI(t)
	l.scan.Secret("looked-up value (old)", tokOld)
	l.scan.Secret("looked-up value (new)", tokNew)
	client := cluster.Client(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: l.ns}, StringData: map[string]string{"token": tokOld}}
	if _, err := client.CoreV1().Secrets(l.ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	charts := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "caps"), Version: "0.1.0"})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "repository.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+l.ns+"\nspec:\n  interval: 1h\n  url: "+charts.URL+"\n")
	writeFile(t, filepath.Join(dir, "release.yaml"), "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: caps\n  namespace: "+l.ns+
		"\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: caps\n      version: \"0.1.0\"\n      sourceRef: {kind: HelmRepository, name: charts}\n  values:\n    lookupSecret: token\n")
	args := []string{"--name", "caps", "--path", dir, "--chart-cache", t.TempDir()}
	noWait := append(slices.Clone(args), "--wait=false") // diff never waits: it has no --wait

	l.both("build", "build", "--path", dir, "--chart-cache", t.TempDir())
	if text, _ := l.both("apply", append([]string{"apply"}, noWait...)...); text.code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", text.code, text.stdout, text.stderr)
	}
	cm, err := client.CoreV1().ConfigMaps(l.ns).Get(t.Context(), "caps-caps", metav1.GetOptions{})
	if err != nil || cm.Data["token"] != tokOld {
		t.Fatalf("the chart did not put the looked-up value into the ConfigMap: %v", err)
	}
	secret.StringData["token"] = tokNew
	if _, err := client.CoreV1().Secrets(l.ns).Update(t.Context(), secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	text, _ := l.both("diff", append([]string{"diff"}, args...)...)
	contains(t, "the diff of a changed looked-up value", text.stdout, "ConfigMap/"+l.ns+"/caps-caps")
	l.both("drift", append([]string{"drift"}, noWait...)...)
	l.both("status", "status", "--name", "caps")
}

// Git credentials: a token of --git-secret (refused, then accepted by
// the local Git server) and one written into a GitRepository's spec.url,
// through apply (failing on auth, then succeeding), diff and drift of a
// configuration whose units build fetched trees, text and JSON. Neither
// shows, even where the server's refusal is reported.
func TestLeakScanGitSource(t *testing.T) {
	const (
		leakGitToken = `lk-git-Tk9+/=&"\ %é中'end`
		leakGitWrong = "lk-git-wrong-Vb2+/=&z"
		leakGitURL   = "lk-giturl-Pq7+/=&x"
	)
	l := newLeakCLI(t)
	l.scan.Secret("git token", leakGitToken)
	l.scan.Secret("wrong git token", leakGitWrong)
	l.scan.Secret("token in spec.url", leakGitURL)
	srv := gittest.NewServer(t)
	repo := srv.Repo("apps")
	repo.Commit("one", map[string]string{"web/web.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: " + l.ns + "\ndata:\n  a: \"1\"\n"})
	srv.RequireAuth("apps", "git", leakGitToken)
	inURL := strings.Replace(repo.URL, "http://", "http://"+url.UserPassword("git", leakGitURL).String()+"@", 1)

	root := t.TempDir()
	var b strings.Builder
	for _, s := range []struct{ name, url, secret string }{{"apps", repo.URL, "  secretRef: {name: apps-auth}\n"}, {"apps-url", inURL, ""}} {
		fmt.Fprintf(&b, `---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: %s, namespace: %s}
spec:
  interval: 5m
  url: %q
%s---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: %s, namespace: %s}
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: %s}
  path: ./web
  prune: true
`, s.name, l.ns, s.url, s.secret, s.name, l.ns, s.name)
	}
	writeFile(t, filepath.Join(root, "clusters/test/units.yaml"), b.String())
	gitCommit(t, root, "units")
	config := []string{"--config", filepath.Join(root, "clusters/test"), "--name", "apps"}
	secretFile := func(token string) string {
		f := filepath.Join(t.TempDir(), "apps-auth.yaml")
		writeFile(t, f, "apiVersion: v1\nkind: Secret\nmetadata: {name: apps-auth}\ndata:\n  username: "+base64.StdEncoding.EncodeToString([]byte("git"))+"\n  password: "+base64.StdEncoding.EncodeToString([]byte(token))+"\n")
		return f
	}

	wrong := append([]string{"apply", "--git-secret", "apps-auth=" + secretFile(leakGitWrong)}, config...)
	if o, _ := l.both("git apply (wrong token)", wrong...); o.code != exitFail || !strings.Contains(o.stdout+o.stderr, "were refused") {
		t.Fatalf("wrong token: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	urlOnly := []string{"apply", "--config", filepath.Join(root, "clusters/test"), "--name", "apps-url"}
	if o, _ := l.both("git apply (token in spec.url)", urlOnly...); o.code != exitFail || !strings.Contains(o.stdout+o.stderr, "the credentials in spec.url were refused") {
		t.Fatalf("token in spec.url: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	right := []string{"--git-secret", "apps-auth=" + secretFile(leakGitToken)}
	if o, _ := l.both("git apply", append(append([]string{"apply"}, right...), config...)...); o.code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	l.both("git diff", append(append([]string{"diff"}, right...), config...)...)
	l.both("git drift", append(append([]string{"drift"}, right...), config...)...)
	l.run("git apply --verbose", append(append([]string{"apply", "--verbose"}, right...), config...)...)
}

// Registry credentials: a password of --oci-secret (refused, then
// accepted by the local registry), given as a Docker config.json and as
// a dockerconfigjson Secret, through apply (failing on auth, then
// succeeding), diff and drift of a configuration whose unit builds a
// pulled artifact, text and JSON. Neither shows, nor the auth strings
// that encode them.
func TestLeakScanOCISource(t *testing.T) {
	const (
		leakOCIPassword = `lk-oci-Pw5+/=&"\ %é中'end`
		leakOCIWrong    = "lk-oci-wrong-Jq8+/=&z"
	)
	l := newLeakCLI(t)
	l.scan.Secret("registry password", leakOCIPassword)
	l.scan.Secret("wrong registry password", leakOCIWrong)
	host := l.registryWithApps(leakOCIPassword)

	root := t.TempDir()
	writeFile(t, filepath.Join(root, "clusters/test/units.yaml"), fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: apps, namespace: %s}
spec:
  interval: 5m
  url: oci://%s/apps
  secretRef: {name: regcred}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: %s}
spec:
  interval: 10m
  sourceRef: {kind: OCIRepository, name: apps}
  path: ./web
  prune: true
`, l.ns, host, l.ns))
	gitCommit(t, root, "units")
	config := []string{"--config", filepath.Join(root, "clusters/test")}
	configJSON := func(password string) string { return dockerConfigJSON(t, host, "flux", password) }
	wrongFile := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, wrongFile, configJSON(leakOCIWrong))
	if o, _ := l.both("oci apply (wrong password)", append([]string{"apply", "--oci-secret", "regcred=" + wrongFile}, config...)...); o.code != exitFail || !strings.Contains(o.stdout+o.stderr, "were refused") {
		t.Fatalf("wrong password: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	secretFile := filepath.Join(t.TempDir(), "regcred.yaml")
	writeFile(t, secretFile, "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\nmetadata: {name: regcred}\ndata:\n  .dockerconfigjson: "+base64.StdEncoding.EncodeToString([]byte(configJSON(leakOCIPassword)))+"\n")
	right := []string{"--oci-secret", "regcred=" + secretFile}
	if o, _ := l.both("oci apply", append(append([]string{"apply"}, right...), config...)...); o.code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	l.both("oci diff", append(append([]string{"diff"}, right...), config...)...)
	l.both("oci drift", append(append([]string{"drift"}, right...), config...)...)
	l.run("oci apply --verbose", append(append([]string{"apply", "--verbose"}, right...), config...)...)
}

// An OCIRepository's pull Secret that an earlier unit creates from a
// SOPS-encrypted file, read from the cluster at the pulling unit's turn
// (the source deferred): through a diff that skips the unit, the apply
// that creates the Secret and then pulls with it, and a second apply
// (resolved as the configuration opens), text and JSON. Neither the
// password nor the auth strings that encode it show.
func TestLeakScanDeferredOCISource(t *testing.T) {
	const leakOCIPassword = `lk-oci-deferred-Pw7+/=&"\ %é中'end`
	l := newLeakCLI(t)
	l.scan.Secret("registry password", leakOCIPassword)
	host := l.registryWithApps(leakOCIPassword)
	root := t.TempDir()
	secret := secretObject("regcred", l.ns, map[string]any{".dockerconfigjson": dockerConfigJSON(t, host, "flux", leakOCIPassword)}, nil)
	secret["type"] = "kubernetes.io/dockerconfigjson"
	l.encryptYAML(filepath.Join(root, "creds/regcred.yaml"), secret)
	writeFile(t, filepath.Join(root, "clusters/test/units.yaml"), fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: creds, namespace: %s}
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: flux-system}
  path: ./creds
  prune: true
  decryption: {provider: sops}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: apps, namespace: %s}
spec:
  interval: 5m
  url: oci://%s/apps
  secretRef: {name: regcred}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: %s}
spec:
  interval: 10m
  dependsOn: [{name: creds}]
  sourceRef: {kind: OCIRepository, name: apps}
  path: ./web
  prune: true
`, l.ns, l.ns, host, l.ns))
	gitCommit(t, root, "units")
	config := []string{"--config", filepath.Join(root, "clusters/test")}
	if o, _ := l.both("deferred diff", append([]string{"diff"}, config...)...); o.code == exitFail || !strings.Contains(o.stdout, "SourceDeferred") {
		t.Fatalf("diff: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if o := l.run("deferred apply --verbose", append([]string{"apply", "--verbose"}, config...)...); o.code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(l.ns).Get(t.Context(), "web", metav1.GetOptions{}); err != nil {
		t.Fatalf("the pulled artifact was not applied: %v", err)
	}
	l.both("deferred apply (again)", append([]string{"apply"}, config...)...)
}

// A container that prints a decrypted value before it crashes, and an
// event (a careless controller's) quoting it: the diagnostics of the
// failed health check show the log line and the event with the value
// masked, in the text, the JSON and the progress.
func TestLeakScanDiagnostics(t *testing.T) {
	l := newLeakCLI(t)
	l.scan.Secret("SOPS stringData", leakSpecial)
	cluster.ServeLogs(t, l.ns, testcluster.ContainerLog{Container: "app", Previous: []string{"DB_PASSWORD=" + leakSpecial, "fatal: login refused"}})
	dir := t.TempDir()
	l.encryptYAML(filepath.Join(dir, "creds.enc.yaml"), secretObject("creds", "", map[string]any{"special": leakSpecial}, nil))
	writeFile(t, filepath.Join(dir, "deployment.yaml"), deploymentYAML("app", "        "+testcluster.CrashLabel+": \"1\"\n", ""))
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [creds.enc.yaml, deployment.yaml]\n")
	event := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "app.careless", Namespace: l.ns},
		InvolvedObject: corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "app", Namespace: l.ns},
		Type:           corev1.EventTypeWarning, Reason: "Careless", Message: "connecting with " + leakSpecial, Count: 1,
	}
	unit := []string{"apply", "--name", "app", "--path", dir, "--target-namespace", l.ns, "--timeout", "8s"}
	if o := l.run("apply (first)", unit...); o.code != exitFail {
		t.Fatalf("apply: exit %d, want a failure\n%s", o.code, o.stdout)
	}
	// The event names the Deployment by uid, as a controller records it.
	d, err := cluster.Client(t).AppsV1().Deployments(l.ns).Get(t.Context(), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	event.InvolvedObject.UID = d.UID
	event.LastTimestamp = metav1.Now()
	if _, err := cluster.Client(t).CoreV1().Events(l.ns).Create(t.Context(), event, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	text, js := l.both("apply (crashing)", unit...)
	contains(t, "the text", text.stdout, "  | DB_PASSWORD=***", "Warning Careless", "connecting with ***")
	contains(t, "the JSON", js.stdout, `"DB_PASSWORD=***"`, `"connecting with ***"`)
}

// A failed upgrade rolled back (upgrade.remediation): the release of the
// last good revision is rendered again from Git, its SOPS values
// decrypted again, and nothing of either value shows in the run's
// output, its JSON, the history or the inventory Secret, which stores no
// render.
func TestLeakScanHelmRollback(t *testing.T) {
	const good, bad = "lk-rb-good-Tu5+/=a&b", "lk-rb-bad-Vw6+/=c&d"
	l := newLeakCLI(t)
	l.scan.Secret("chart value (good)", good)
	l.scan.Secret("chart value (bad)", bad)
	charts := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	unit := func(password, values string) {
		chartUnit(t, dir, l.ns, charts.URL, "1.0.0", values+"  valuesFrom:\n  - {kind: Secret, name: web-values}\n  upgrade:\n    remediation: {remediateLastFailure: true}\n")
		l.encryptYAML(filepath.Join(dir, "values.enc.yaml"), secretObject("web-values", l.ns, map[string]any{"values.yaml": "password: " + password + "\n"}, nil))
		gitCommit(t, dir, password[:8])
	}
	args := []string{"apply", "--name", "web", "--path", dir, "--chart-cache", t.TempDir(), "--timeout", "6s"}
	unit(good, "    greeting: hello\n")
	if o := l.run("apply (good)", args...); o.code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	unit(bad, "    podLabels: {"+testcluster.FailReadinessLabel+": "+testcluster.FailReadinessValue+"}\n")
	o := l.run("apply (rolled back) -o json", append(args, "-o", "json")...)
	var res result.Result
	if err := json.Unmarshal([]byte(o.stdout), &res); err != nil || o.code != exitFail || len(res.Remediations) != 1 || res.Remediations[0].Strategy != "rollback" || res.Remediations[0].Error != "" {
		t.Fatalf("the failed upgrade: exit %d, %v, remediations %+v\n%s", o.code, err, res.Remediations, o.stderr)
	}
	cm, err := cluster.Client(t).CoreV1().ConfigMaps(l.ns).Get(t.Context(), "web-settings", metav1.GetOptions{})
	if err != nil || !strings.Contains(cm.Data["dsn"], good) {
		t.Fatalf("the rollback did not put the good value back: %v", err)
	}
	l.both("history", "history", "--name", "web")
	secret, err := cluster.Client(t).CoreV1().Secrets(l.ns).Get(t.Context(), inventory.SecretName("web"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for key, value := range secret.Data {
		l.scan.Capture("inventory Secret", key, string(value))
	}
}

// registryWithApps serves a registry that only user flux with password
// may read, holding apps:latest, an artifact of web/web.yaml (ConfigMap
// web in the scan's namespace); it returns the registry's host.
func (l *leakCLI) registryWithApps(password string) string {
	l.t.Helper()
	reg := helmtest.NewRegistryWithAuth(l.t, "flux", password)
	ocitest.Push(l.t, reg.Host+"/apps:latest", ocitest.Flux(l.t, map[string]string{"web/web.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: " + l.ns + "\ndata:\n  a: \"1\"\n"}, "", ""), "flux", password, nil)
	return reg.Host
}

// dockerConfigJSON is a Docker config giving user and password for host
// in every form a leak may take: as written, JSON-escaped (a password
// may hold quotes), and in the auth string that encodes them
// (dockerConfig writes the auth string alone).
func dockerConfigJSON(t *testing.T, host, user, password string) string {
	t.Helper()
	entry, err := json.Marshal(map[string]string{"username": user, "password": password, "auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + password))})
	if err != nil {
		t.Fatal(err)
	}
	return `{"auths": {"` + host + `": ` + string(entry) + `}}`
}
