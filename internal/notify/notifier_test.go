package notify

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

func newNotifier(t *testing.T, r *receiver, opts Options, found ...*config.Notification) *Notifier {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return testNow }
	}
	if opts.TelegramAPI == "" {
		opts.TelegramAPI = r.srv.URL
	}
	var docs []*config.Notification
	for _, f := range found {
		c := *f
		c.Raw = []byte(strings.ReplaceAll(string(f.Raw), "{{URL}}", r.srv.URL))
		docs = append(docs, &c)
	}
	return New(docs, opts)
}

// A run that changed nothing posts nothing; a change and a failure post
// one event each; an Alert of errors only hears the failure alone.
func TestNotifyOnChangeAndErrorOnly(t *testing.T) {
	t.Parallel()
	r := newReceiver(t)
	errorsOnly := alertDoc("errors", "  eventSeverity: error\n  eventSources:\n  - {kind: Kustomization, name: '*'}\n")
	n := newNotifier(t, r, Options{}, providerDoc("  type: generic\n  address: {{URL}}/hook\n"), everything, errorsOnly)
	noop := resultOf(result.ModeApply, result.ReasonApplySucceed, true, "applied", entry(web, result.Unchanged))
	if ds := n.Notify(t.Context(), apps, noop); len(ds) != 0 || len(r.requests()) != 0 {
		t.Fatalf("a no-op posted %v", ds)
	}
	if ds := n.Notify(t.Context(), apps, changed()); len(ds) != 1 || ds[0].Alert.Name != "everything" || ds[0].Err != nil {
		t.Fatalf("a change: %v", ds)
	}
	ds := n.Notify(t.Context(), apps, failed())
	if len(ds) != 2 || ds[0].Err != nil || ds[1].Err != nil || ds[0].Event.Severity != "error" {
		t.Fatalf("a failure: %v", ds)
	}
	if got := len(r.requests()); got != 3 {
		t.Errorf("%d posts, want 3", got)
	}
	if s := ds[1].String(); s != "posted error event of Kustomization/flux-system/apps (HealthCheckFailed) to Provider flux-system/hook (generic, for Alert flux-system/errors)" {
		t.Errorf("delivery says %q", s)
	}
}

// A suspended Provider is not posted to; the delivery says so.
func TestNotifySuspendedProvider(t *testing.T) {
	t.Parallel()
	r := newReceiver(t)
	n := newNotifier(t, r, Options{}, providerDoc("  type: generic\n  address: {{URL}}/hook\n  suspend: true\n"), everything)
	ds := n.Notify(t.Context(), apps, changed())
	if len(ds) != 1 || !ds[0].Suspended || len(r.requests()) != 0 {
		t.Errorf("deliveries %v, %d requests", ds, len(r.requests()))
	}
}

// A receiver that keeps failing is tried Retries more times, then the
// delivery fails, its error saying the status and what the receiver
// answered, without the address or any secret value the answer quotes.
func TestNotifyFailedPostRetriedAndMasked(t *testing.T) {
	t.Parallel()
	const token = "hmac-key-Zq8+/=&7"
	r := newReceiver(t)
	r.status = func(int) int { return http.StatusBadGateway }
	n := newNotifier(t, r, Options{Retries: 2, RetryWait: time.Millisecond,
		Secret: secrets(map[string]map[string]string{"flux-system/hook": {"token": token}})},
		providerDoc("  type: generic-hmac\n  address: {{URL}}/hook/"+"path-secret\n  secretRef: {name: hook}\n"), everything)
	r.body = `{"error": "bad key ` + token + ` for ` + r.srv.URL + `/hook/path-secret"}`
	ds := n.Notify(t.Context(), apps, changed())
	if len(ds) != 1 || ds[0].Err == nil {
		t.Fatalf("deliveries %v", ds)
	}
	if got := len(r.requests()); got != 3 {
		t.Errorf("%d attempts, want 3", got)
	}
	msg := ds[0].Err.Error()
	if !strings.Contains(msg, "status code 502") || strings.Contains(msg, token) || strings.Contains(msg, "path-secret") || strings.Contains(msg, "127.0.0.1") {
		t.Errorf("error %q", msg)
	}
}

// A client error is not retried.
func TestNotifyClientErrorNotRetried(t *testing.T) {
	t.Parallel()
	r := newReceiver(t)
	r.status = func(int) int { return http.StatusUnauthorized }
	n := newNotifier(t, r, Options{Retries: 2, RetryWait: time.Millisecond}, providerDoc("  type: generic\n  address: {{URL}}/hook\n"), everything)
	if ds := n.Notify(t.Context(), apps, changed()); len(ds) != 1 || ds[0].Err == nil || len(r.requests()) != 1 {
		t.Errorf("deliveries %v, %d requests", ds, len(r.requests()))
	}
}

// A receiver that does not answer fails the post once the Provider's
// timeout is over, without an error naming it.
func TestNotifyTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	r := newReceiverWrapped(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			select {
			case <-release:
			case <-req.Context().Done():
			}
			h.ServeHTTP(w, req)
		})
	})
	t.Cleanup(func() { close(release) })
	n := newNotifier(t, r, Options{}, providerDoc("  type: generic\n  address: {{URL}}/hook\n  timeout: 200ms\n"), everything)
	ds := n.Notify(t.Context(), apps, changed())
	if len(ds) != 1 || ds[0].Err == nil || !strings.Contains(ds[0].Err.Error(), "deadline exceeded") || strings.Contains(ds[0].Err.Error(), "127.0.0.1") {
		t.Errorf("deliveries %v", ds)
	}
}

// A Secret that cannot be read fails the delivery; once it can (a unit
// applied it since), the next event is posted.
func TestNotifySecretReadAgain(t *testing.T) {
	t.Parallel()
	r := newReceiver(t)
	var ready atomic.Bool
	data := map[string]map[string]string{"flux-system/hook": {"address": r.srv.URL + "/from-secret"}}
	lookup := secrets(data)
	n := newNotifier(t, r, Options{Secret: func(ctx context.Context, p *Provider, name string) (map[string]string, error) {
		if !ready.Load() {
			return lookup(ctx, p, "missing")
		}
		return lookup(ctx, p, name)
	}}, providerDoc("  type: generic\n  secretRef: {name: hook}\n"), everything)
	ds := n.Notify(t.Context(), apps, changed())
	if len(ds) != 1 || ds[0].Err == nil || !strings.Contains(ds[0].Err.Error(), "spec.secretRef hook: not found") {
		t.Fatalf("deliveries %v", ds)
	}
	ready.Store(true)
	if ds := n.Notify(t.Context(), apps, changed()); len(ds) != 1 || ds[0].Err != nil {
		t.Fatalf("deliveries %v", ds)
	}
	if got := r.requests(); len(got) != 1 || got[0].Path != "/from-secret" {
		t.Errorf("requests %v", got)
	}
}

// The job's token stands in for a github Provider's Secret only for a
// repository on the job's GitHub server: it is never sent elsewhere.
func TestNotifyJobTokenOnlyToItsServer(t *testing.T) {
	t.Parallel()
	const jobToken = "ghs_jobToken0123456789"
	ours, theirs := newReceiver(t), newReceiver(t)
	status := func(addr string) *config.Notification {
		return providerDoc("  type: githubdispatch\n  address: " + addr + "/acme/app\n")
	}
	n := newNotifier(t, ours, Options{GitHubToken: jobToken, GitHubServer: ours.srv.URL, GitHubAPI: ours.srv.URL + "/rest/"}, status(ours.srv.URL), everything)
	if ds := n.Notify(t.Context(), apps, changed()); len(ds) != 1 || ds[0].Err != nil {
		t.Fatalf("deliveries %v", ds)
	}
	// The job's API (GITHUB_API_URL) serves the job's server.
	if got := ours.requests(); len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer "+jobToken || got[0].Path != "/rest/repos/acme/app/dispatches" {
		t.Errorf("requests to the job's server %v", got)
	}
	n = newNotifier(t, theirs, Options{GitHubToken: jobToken, GitHubServer: ours.srv.URL}, status(theirs.srv.URL), everything)
	ds := n.Notify(t.Context(), apps, changed())
	if len(ds) != 1 || ds[0].Err == nil || !strings.Contains(ds[0].Err.Error(), "the job's token goes only to repositories of the job's GitHub server") {
		t.Fatalf("deliveries %v", ds)
	}
	if got := theirs.requests(); len(got) != 0 {
		t.Errorf("another server was sent %v", got)
	}
}

// Providers and Alerts that cannot be used are warned about once, by
// object and file: nothing is posted for them, and the run goes on.
func TestNotifierWarnings(t *testing.T) {
	t.Parallel()
	r := newReceiver(t)
	twice := providerDoc("  type: generic\n  address: {{URL}}/other\n")
	twice.File = "other.yaml"
	noType := providerDoc("  address: {{URL}}\n")
	noType.Ref.Name = "typeless"
	lonely := alertDoc("lonely", "  eventSources:\n  - {kind: Kustomization, name: '*'}\n")
	lonely.Raw = []byte(strings.Replace(string(lonely.Raw), "name: hook", "name: nowhere", 1))
	sources := alertDoc("sources", "  eventSources:\n  - {kind: GitRepository, name: '*'}\n  - {kind: OCIRepository, name: '*'}\n")
	// Beside a Kustomization's, a GitRepository's source is no warning.
	mixed := alertDoc("mixed", "  eventSources:\n  - {kind: GitRepository, name: '*'}\n  - {kind: Kustomization, name: '*'}\n")
	n := newNotifier(t, r, Options{}, providerDoc("  type: generic\n  address: {{URL}}/hook\n"), twice, noType, everything, lonely, sources, mixed)
	want := []string{
		"Alert flux-system/lonely (alerts.yaml:1): Provider flux-system/nowhere is not in the configuration: nothing is posted for it",
		"Alert flux-system/sources (alerts.yaml:1) takes events of GitRepository, OCIRepository only: it is never posted for, since a run sends events of Kustomizations and HelmReleases only",
		"Provider flux-system/hook is defined more than once, differently (providers.yaml:1, other.yaml:1): no Alert posts to it",
		"Provider flux-system/typeless (providers.yaml:1) is not used: spec.type: required",
	}
	if strings.Join(n.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(n.Warnings, "\n"), strings.Join(want, "\n"))
	}
	if ds := n.Notify(t.Context(), apps, changed()); len(ds) != 0 || len(r.requests()) != 0 {
		t.Errorf("posted %v", ds)
	}
}

// A type the run does not post to fails its deliveries, saying which
// types it does.
func TestNotifyUnsupportedType(t *testing.T) {
	t.Parallel()
	r := newReceiver(t)
	n := newNotifier(t, r, Options{}, providerDoc("  type: datadog\n  address: {{URL}}\n"), everything)
	ds := n.Notify(t.Context(), apps, changed())
	if len(ds) != 1 || ds[0].Err == nil || !strings.Contains(ds[0].Err.Error(), "spec.type datadog is not supported by kustomize-deploy (alertmanager, discord,") {
		t.Errorf("deliveries %v", ds)
	}
}

// What an event says is redacted before it is posted: the run's secret
// values (Options.Redact) and the Providers' own.
func TestNotifyRedactsEvents(t *testing.T) {
	t.Parallel()
	const runSecret, hookPath = "run-secret-Vb7+/=", "/hook/path-secret-42"
	r := newReceiver(t)
	n := newNotifier(t, r, Options{Redact: strings.NewReplacer(runSecret, "***").Replace},
		providerDoc("  type: generic\n  address: {{URL}}"+hookPath+"\n"), everything)
	res := failed()
	res.Message = "ConfigMap refused: value " + runSecret + " posted to " + r.srv.URL + hookPath
	if ds := n.Notify(t.Context(), apps, res); len(ds) != 1 || ds[0].Err != nil {
		t.Fatalf("deliveries %v", ds)
	}
	got := r.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	body := string(got[0].Body)
	if strings.Contains(body, runSecret) || strings.Contains(body, "path-secret-42") || !strings.Contains(body, "ConfigMap refused: value *** posted to ***") {
		t.Errorf("body %s", body)
	}
}

// A diff (a pull request's) posts nothing and reads no Provider's
// Secret, whatever it would change.
func TestNotifyDiffReadsAndPostsNothing(t *testing.T) {
	t.Parallel()
	r := newReceiver(t)
	var reads atomic.Int32
	n := newNotifier(t, r, Options{Secret: func(context.Context, *Provider, string) (map[string]string, error) {
		reads.Add(1)
		return map[string]string{"address": r.srv.URL}, nil
	}}, providerDoc("  type: generic\n  secretRef: {name: hook}\n"), everything)
	diff := resultOf(result.ModeDiff, result.ReasonDiffSucceed, true, "diff", entry(web, result.Configured))
	failedDiff := resultOf(result.ModeDiff, result.ReasonValidationFailed, false, "refused")
	for _, res := range []*result.Result{diff, failedDiff} {
		if ds := n.Notify(t.Context(), apps, res); len(ds) != 0 {
			t.Errorf("a diff posted %v", ds)
		}
	}
	if reads.Load() != 0 || len(r.requests()) != 0 {
		t.Errorf("%d Secret reads, %d requests", reads.Load(), len(r.requests()))
	}
}

// Under notification-controller's --no-cross-namespace-refs (Flux's
// multi-tenancy lockdown), an Alert of flux-system whose eventSources name
// a tenant's namespace takes none of its events; its own namespace's it
// still takes. Without it, it takes both.
func TestNotifyNoCrossNamespaceRefs(t *testing.T) {
	t.Parallel()
	tenant := Source{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Namespace: "team-a", Name: "web"}
	both := alertDoc("both", "  eventSources:\n  - {kind: Kustomization, name: '*'}\n  - {kind: Kustomization, name: '*', namespace: team-a}\n")
	for _, tc := range []struct {
		locked bool
		want   []string // the involved objects posted
	}{
		{locked: false, want: []string{"flux-system/apps", "team-a/web"}},
		{locked: true, want: []string{"flux-system/apps"}},
	} {
		r := newReceiver(t)
		n := newNotifier(t, r, Options{NoCrossNamespaceRefs: tc.locked}, providerDoc("  type: generic\n  address: {{URL}}/hook\n"), both)
		var got []string
		for _, src := range []Source{apps, tenant} {
			for _, d := range n.Notify(t.Context(), src, changed()) {
				got = append(got, d.Event.InvolvedObject.Namespace+"/"+d.Event.InvolvedObject.Name)
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("locked %v: posted %v, want %v", tc.locked, got, tc.want)
		}
	}
}
