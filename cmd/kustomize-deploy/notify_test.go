package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// eventReceiver is a notification endpoint on 127.0.0.1 that records the
// Flux events posted to it, by path.
type eventReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []postedEvent
}

type postedEvent struct {
	path, signature string
	body            []byte
	event           eventv1.Event
}

func newEventReceiver(t *testing.T) *eventReceiver {
	r := &eventReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		p := postedEvent{path: req.URL.Path, signature: req.Header.Get("X-Signature"), body: body}
		if err := json.Unmarshal(body, &p.event); err != nil {
			t.Errorf("a post to %s is not an event: %v", req.URL.Path, err)
		}
		r.mu.Lock()
		r.got = append(r.got, p)
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// take returns the events posted since the last call.
func (r *eventReceiver) take() []postedEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// A configuration whose app holds a notification Provider and Alerts
// beside its objects runs with no notification-controller: the Provider
// and Alerts are not applied (the cluster has no CRD for them), and the
// run posts what Flux would. The first apply posts one event (the change
// set, ReconciliationSucceeded, with the Alert's metadata and the
// revision), signed with the HMAC key of a SOPS Secret of the
// configuration's files; a second apply, a no-op, posts nothing; drift
// reported is an error to both Alerts (the errors-only one through a
// Provider whose address is a Secret found in the cluster), drift
// corrected the change set; an apply that fails posts the error to both.
func TestConfigNotifies(t *testing.T) {
	c := newCLI(t)
	key := newKey(t)
	c.env["SOPS_AGE_KEY"] = key.Identity
	recv := newEventReceiver(t)
	const hmacKey = "hmac-key-Rt5+/=&e2e"
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "clusters/local/apps.yaml"), `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: `+c.ns+`
  labels: {team: web}
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: flux-system}
  path: ./apps
  targetNamespace: `+c.ns+`
  prune: true
`)
	encryptFile(t, key, filepath.Join(root, "clusters/local/hmac.enc.yaml"),
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: hmac\n  namespace: "+c.ns+"\nstringData:\n  token: "+hmacKey+"\n", formats.Yaml, sopstest.K8sSecretRegex)
	writeFile(t, filepath.Join(root, "apps/settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {size: small}\n")
	writeFile(t, filepath.Join(root, "apps/notifications.yaml"), `apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {name: signed}
spec:
  type: generic-hmac
  address: `+recv.srv.URL+`/signed
  secretRef: {name: hmac}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {name: deploys}
spec:
  providerRef: {name: signed}
  eventMetadata: {cluster: local}
  eventSources:
  - {kind: Kustomization, name: '*', matchLabels: {team: web}}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta2
kind: Provider
metadata: {name: on-call}
spec:
  type: generic
  secretRef: {name: on-call-address}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta2
kind: Alert
metadata: {name: failures}
spec:
  providerRef: {name: on-call}
  eventSeverity: error
  eventSources:
  - {kind: Kustomization, name: apps}
`)
	// The errors-only Provider's address is a Secret of the cluster alone.
	if _, err := cluster.Client(t).CoreV1().Secrets(c.ns).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "on-call-address"}, StringData: map[string]string{"address": recv.srv.URL + "/on-call"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gitCommit(t, root, "apps")
	config := filepath.Join(root, "clusters/local")

	o, s := c.runConfig("apply", "--config", config)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := recv.take()
	if len(got) != 1 || got[0].path != "/signed" {
		t.Fatalf("the first apply posted %d event(s), want 1 to /signed: %+v\n%s", len(got), got, o.stderr)
	}
	e := got[0]
	if e.event.Severity != "info" || e.event.Reason != "ReconciliationSucceeded" || e.event.InvolvedObject.Kind != "Kustomization" ||
		e.event.InvolvedObject.Name != "apps" || e.event.InvolvedObject.Namespace != c.ns || e.event.ReportingController != "kustomize-controller" {
		t.Errorf("event %+v", e.event)
	}
	if want := "ConfigMap/" + c.ns + "/settings created"; e.event.Message != want {
		t.Errorf("the change set %q, want %q", e.event.Message, want)
	}
	if strings.Contains(e.event.Message, "Provider") || strings.Contains(e.event.Message, "Alert") {
		t.Errorf("the change set lists the Provider or an Alert:\n%s", e.event.Message)
	}
	if e.event.Metadata["cluster"] != "local" || !strings.Contains(e.event.Metadata["revision"], "sha1:") {
		t.Errorf("metadata %v", e.event.Metadata)
	}
	mac := hmac.New(sha256.New, []byte(hmacKey))
	mac.Write(e.body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); e.signature != want {
		t.Errorf("X-Signature %q, want the HMAC of the body with the SOPS Secret's token", e.signature)
	}
	contains(t, "the run's progress", o.stderr, "notification: posted info event of Kustomization/"+c.ns+"/apps (ReconciliationSucceeded) to Provider "+c.ns+"/signed")
	r := unitsByName(s)["apps"]
	if notes := strings.Join(r.Notes, "\n"); !strings.Contains(notes, "Provider/"+c.ns+"/signed") || !strings.Contains(notes, "a Flux notification Provider or Alert: not applied") {
		t.Errorf("notes %q", r.Notes)
	}
	for _, secret := range []string{hmacKey, recv.srv.URL} {
		if strings.Contains(o.stdout+o.stderr, secret) {
			t.Errorf("the run printed %q", secret)
		}
	}

	if o, _ := c.runConfig("apply", "--config", config); o.code != exitOK {
		t.Fatalf("second apply: exit %d\n%s", o.code, o.stderr)
	}
	if got := recv.take(); len(got) != 0 {
		t.Errorf("a no-op posted %+v", got)
	}

	// Drift: reported, it is an error (helm-controller's DriftDetected);
	// corrected, the change set.
	client := cluster.Client(t)
	cm, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["size"] = "edited"
	if _, err := client.CoreV1().ConfigMaps(c.ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if o, _ := c.runConfig("drift", "--config", config); o.code != exitOK {
		t.Fatalf("drift: exit %d\n%s", o.code, o.stderr)
	}
	got = recv.take()
	if len(got) != 2 || got[0].event.Reason != "DriftDetected" || got[1].event.Reason != "DriftDetected" || got[0].event.Severity != "error" {
		t.Errorf("drift reported posted %+v, want DriftDetected to both Providers", got)
	}
	if o, _ := c.runConfig("drift", "--correct", "--config", config); o.code != exitOK {
		t.Fatalf("drift --correct: exit %d\n%s", o.code, o.stderr)
	}
	got = recv.take()
	if len(got) != 1 || got[0].path != "/signed" || got[0].event.Reason != "ReconciliationSucceeded" || got[0].event.Message != "ConfigMap/"+c.ns+"/settings configured" {
		t.Errorf("drift corrected posted %+v, want the change set to /signed", got)
	}

	writeFile(t, filepath.Join(root, "apps/broken.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_A_Name}\n")
	gitCommit(t, root, "broken")
	o, s = c.runConfig("apply", "--config", config)
	if o.code != exitFail || s.Ready {
		t.Fatalf("failing apply: exit %d\n%s", o.code, o.stderr)
	}
	got = recv.take()
	paths := map[string]eventv1.Event{}
	for _, p := range got {
		paths[p.path] = p.event
	}
	if len(got) != 2 || paths["/signed"].Severity != "error" || paths["/on-call"].Severity != "error" {
		t.Fatalf("the failing apply posted %+v, want an error event to each Provider\n%s", got, o.stderr)
	}
	want := string(unitsByName(s)["apps"].Reason)
	if want == "ApplyFailed" {
		want = "ReconciliationFailed" // Flux's word for it
	}
	if ev := paths["/on-call"]; ev.Reason != want || !strings.Contains(ev.Message, "Not_A_Name") {
		t.Errorf("error event %+v", ev)
	}
}

// A HelmRelease the run renders sends helm-controller's events: an Alert
// of HelmReleases selected by label hears the install, then the upgrade
// to another chart version, each once; the Kustomization's own events go
// to no Alert here.
func TestConfigNotifiesHelmRelease(t *testing.T) {
	c := newCLI(t)
	recv := newEventReceiver(t)
	charts := helmtest.NewRepository(t,
		helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"},
		helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.1.0", AppVersion: "1.1"})
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "clusters/local/releases.yaml"), `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: releases, namespace: `+c.ns+`}
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: flux-system}
  path: ./releases
  prune: true
`)
	release := func(version string) {
		chartUnit(t, filepath.Join(root, "releases"), c.ns, charts.URL, version, "    greeting: hello\n")
		path := filepath.Join(root, "releases/release.yaml")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, strings.Replace(string(data), "  name: web\n", "  name: web\n  labels: {tier: frontend}\n", 1))
	}
	release("1.0.0")
	writeFile(t, filepath.Join(root, "releases/notifications.yaml"), `apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {name: hook, namespace: `+c.ns+`}
spec:
  type: generic
  address: `+recv.srv.URL+`/releases
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {name: frontends, namespace: `+c.ns+`}
spec:
  providerRef: {name: hook}
  eventSources:
  - {kind: HelmRelease, name: '*', matchLabels: {tier: frontend}}
`)
	gitCommit(t, root, "release")
	config := filepath.Join(root, "clusters/local")
	for _, step := range []struct{ version, reason, message string }{
		{"1.0.0", "InstallSucceeded", "Helm install succeeded for release " + c.ns + "/web with chart web@1.0.0"},
		{"1.1.0", "UpgradeSucceeded", "Helm upgrade succeeded for release " + c.ns + "/web with chart web@1.1.0"},
	} {
		release(step.version)
		gitCommit(t, root, step.version)
		if o, _ := c.runConfig("apply", "--config", config); o.code != exitOK {
			t.Fatalf("apply of %s: exit %d\n%s", step.version, o.code, o.stderr)
		}
		got := recv.take()
		if len(got) != 1 {
			t.Fatalf("apply of %s posted %+v, want one event", step.version, got)
		}
		e := got[0].event
		if e.InvolvedObject.Kind != "HelmRelease" || e.InvolvedObject.Name != "web" || e.ReportingController != "helm-controller" ||
			e.Reason != step.reason || e.Message != step.message || e.Metadata["revision"] != step.version {
			t.Errorf("apply of %s posted %+v", step.version, e)
		}
	}
}
