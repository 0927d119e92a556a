package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// received is one request a receiver got.
type received struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// receiver is a notification endpoint on 127.0.0.1 that records every
// request and answers with status (200 unless set) and body.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	status func(n int) int // the status of the n-th request (0-based)
	body   string
}

func newReceiver(t *testing.T) *receiver { return newReceiverWrapped(t, nil) }

// newReceiverWrapped is a receiver whose handler wrap wraps, if given.
func newReceiverWrapped(t *testing.T, wrap func(http.Handler) http.Handler) *receiver {
	r := &receiver{body: "{}"}
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.got)
		r.got = append(r.got, received{req.Method, req.URL.EscapedPath(), req.Header.Clone(), body})
		r.mu.Unlock()
		status := http.StatusOK
		if r.status != nil {
			status = r.status(n)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, r.body)
	})
	if wrap != nil {
		h = wrap(h)
	}
	r.srv = httptest.NewServer(h)
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// providerDoc is a Provider hook in flux-system with spec (YAML,
// indented two spaces).
func providerDoc(spec string) *config.Notification {
	return &config.Notification{Kind: config.NotificationProvider, APIVersion: "notification.toolkit.fluxcd.io/v1beta3",
		Ref: config.Ref{Namespace: "flux-system", Name: "hook"}, File: "providers.yaml", Line: 1,
		Raw: []byte("apiVersion: notification.toolkit.fluxcd.io/v1beta3\nkind: Provider\nmetadata:\n  name: hook\n  namespace: flux-system\nspec:\n" + spec)}
}

// everything is an Alert of hook for every Kustomization of flux-system,
// adding env: prod.
var everything = alertDoc("everything", "  eventMetadata: {env: prod}\n  eventSources:\n  - {kind: Kustomization, name: '*'}\n")

// secrets stands in for the Secrets Providers name.
func secrets(data map[string]map[string]string) func(context.Context, *Provider, string) (map[string]string, error) {
	return func(_ context.Context, p *Provider, name string) (map[string]string, error) {
		d, ok := data[p.Ref.Namespace+"/"+name]
		if !ok {
			return nil, fmt.Errorf("not found")
		}
		return d, nil
	}
}

var testNow = time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)

// changed is the result of a run that configured one Deployment.
func changed() *result.Result {
	return resultOf(result.ModeApply, result.ReasonApplySucceed, true, "applied", entry(web, result.Configured))
}

// failed is the result of a run whose health check failed.
func failed() *result.Result {
	return resultOf(result.ModeApply, result.ReasonHealthCheckFailed, false, "Deployment/apps/web: timeout", entry(web, result.Configured))
}

// jsonEqual compares a body with the JSON the provider's API expects.
func jsonEqual(t *testing.T, what string, body []byte, want string) {
	t.Helper()
	var got, exp any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%s: the body is not JSON: %v\n%s", what, err, body)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("%s: the wanted body is not JSON: %v", what, err)
	}
	if diff := cmp.Diff(exp, got); diff != "" {
		t.Errorf("%s: payload mismatch (-want +got):\n%s", what, diff)
	}
}

// eventJSON is the change event as the generic providers post it.
func eventJSON(uid string) string {
	return `{
	  "involvedObject": {"kind": "Kustomization", "namespace": "flux-system", "name": "apps", "uid": "` + uid + `", "apiVersion": "kustomize.toolkit.fluxcd.io/v1"},
	  "severity": "info",
	  "timestamp": "2026-11-28T09:30:00Z",
	  "message": "Deployment/apps/web configured",
	  "reason": "ReconciliationSucceeded",
	  "metadata": {"env": "prod", "revision": "` + testRevision + `"},
	  "reportingController": "kustomize-controller",
	  "reportingInstance": "kustomize-deploy"
	}`
}

// Every Provider type posts the change event to a receiver on 127.0.0.1
// in the payload its API expects (notification-controller's, for each),
// with its credentials where the API wants them.
func TestProviderPayloads(t *testing.T) {
	t.Parallel()
	uid := string(pseudoUID(KindKustomization, "flux-system", "apps"))
	const token = "tok-3f9a+/=&secret"
	type check func(t *testing.T, got []received, url string)
	one := func(method, path string, body string, headers map[string]string) check {
		return func(t *testing.T, got []received, url string) {
			t.Helper()
			if len(got) != 1 {
				t.Fatalf("%d requests, want 1", len(got))
			}
			r := got[0]
			if r.Method != method || r.Path != path {
				t.Errorf("%s %s, want %s %s", r.Method, r.Path, method, path)
			}
			for k, v := range headers {
				if r.Header.Get(k) != v {
					t.Errorf("header %s: %q, want %q", k, r.Header.Get(k), v)
				}
			}
			jsonEqual(t, path, r.Body, body)
		}
	}
	slackAttachment := func(color, fallback string) string {
		return `{` + fallback + `"color": "` + color + `", "author_name": "kustomization/apps.flux-system", "text": "Deployment/apps/web configured",
		  "mrkdwn_in": ["text"], "fields": [{"title": "env", "value": "prod", "short": false}, {"title": "revision", "value": "` + testRevision + `", "short": false}]}`
	}
	tests := []struct {
		name   string
		spec   string // {{URL}} is the receiver's
		secret map[string]string
		check  check
	}{
		{
			name:  "generic",
			spec:  "  type: generic\n  address: {{URL}}/hook\n",
			check: one("POST", "/hook", eventJSON(uid), map[string]string{"Gotk-Component": "kustomize-controller", "Content-Type": "application/json"}),
		},
		{
			name:   "generic with the Secret's address and headers",
			spec:   "  type: generic\n  address: https://not.used.example\n  secretRef: {name: hook}\n",
			secret: map[string]string{"address": "{{URL}}/secret-hook", "headers": "X-Api-Key: " + token},
			check:  one("POST", "/secret-hook", eventJSON(uid), map[string]string{"X-Api-Key": token}),
		},
		{
			name:   "generic-hmac",
			spec:   "  type: generic-hmac\n  address: {{URL}}/signed\n  secretRef: {name: hook}\n",
			secret: map[string]string{"token": token},
			check: func(t *testing.T, got []received, _ string) {
				one("POST", "/signed", eventJSON(uid), nil)(t, got, "")
				mac := hmac.New(sha256.New, []byte(token))
				mac.Write(got[0].Body)
				if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); got[0].Header.Get("X-Signature") != want {
					t.Errorf("X-Signature %q, want %q (the HMAC of the body)", got[0].Header.Get("X-Signature"), want)
				}
			},
		},
		{
			name:   "slack",
			spec:   "  type: slack\n  channel: deploys\n  username: flux\n  secretRef: {name: hook}\n",
			secret: map[string]string{"address": "{{URL}}/services/T0/B0/X", "token": token},
			check: one("POST", "/services/T0/B0/X", `{"channel": "deploys", "username": "flux", "icon_url": "", "icon_emoji": "",
			  "attachments": [`+slackAttachment("good", `"fallback": "kustomization/apps.flux-system: Deployment/apps/web configured",`)+`]}`,
				map[string]string{"Authorization": "Bearer " + token}),
		},
		{
			name: "discord",
			spec: "  type: discord\n  address: {{URL}}/api/webhooks/1/x\n",
			check: one("POST", "/api/webhooks/1/x/slack", `{"channel": "", "username": "kustomize-controller", "icon_url": "", "icon_emoji": "",
			  "attachments": [`+slackAttachment("good", `"fallback": "",`)+`]}`, nil),
		},
		{
			name: "rocket",
			spec: "  type: rocket\n  address: {{URL}}/hooks/x\n  channel: ops\n  username: flux\n",
			check: one("POST", "/hooks/x", `{"channel": "ops", "username": "flux", "icon_url": "", "icon_emoji": "",
			  "attachments": [`+slackAttachment("#0076D7", `"fallback": "",`)+`]}`, nil),
		},
		{
			name: "msteams",
			spec: "  type: msteams\n  address: {{URL}}/workflows/x\n",
			check: one("POST", "/workflows/x", `{"type": "message", "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive", "content": {
			  "$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard", "version": "1.4", "msteams": {"width": "Full"},
			  "body": [{"type": "Container", "items": [
			    {"type": "TextBlock", "text": "kustomization/apps.flux-system", "size": "large", "weight": "bolder", "wrap": true},
			    {"type": "TextBlock", "text": "Deployment/apps/web configured", "wrap": true},
			    {"type": "FactSet", "facts": [{"title": "env", "value": "prod"}, {"title": "revision", "value": "`+testRevision+`"}]}
			  ]}]}}]}`, nil),
		},
		{
			name: "googlechat",
			spec: "  type: googlechat\n  address: {{URL}}/v1/spaces/x/messages\n",
			check: one("POST", "/v1/spaces/x/messages", `{"cards": [{"header": {"title": "kustomization/apps.flux-system", "subtitle": "kustomize-controller", "imageUrl": null, "imageStyle": null},
			  "sections": [
			    {"header": "", "widgets": [{"textParagraph": {"text": "Deployment/apps/web configured"}, "keyValue": null}]},
			    {"header": "", "widgets": [
			      {"textParagraph": null, "keyValue": {"topLabel": "env", "content": "prod", "contentMultiline": false, "bottomLabel": null, "icon": null}},
			      {"textParagraph": null, "keyValue": {"topLabel": "revision", "content": "`+testRevision+`", "contentMultiline": false, "bottomLabel": null, "icon": null}}
			    ]}
			  ]}]}`, nil),
		},
		{
			name:   "matrix",
			spec:   "  type: matrix\n  address: {{URL}}\n  channel: '!room:example.org'\n  secretRef: {name: hook}\n",
			secret: map[string]string{"token": token},
			check: func(t *testing.T, got []received, _ string) {
				if len(got) != 1 {
					t.Fatalf("%d requests", len(got))
				}
				r := got[0]
				prefix := "/_matrix/client/r0/rooms/!room:example.org/send/m.room.message/"
				if r.Method != "PUT" || !strings.HasPrefix(r.Path, prefix) || len(strings.TrimPrefix(r.Path, prefix)) != 2*sha1.Size {
					t.Errorf("%s %s, want PUT %s<sha1 of the event>", r.Method, r.Path, prefix)
				}
				if r.Header.Get("Authorization") != "Bearer "+token {
					t.Errorf("authorization %q", r.Header.Get("Authorization"))
				}
				jsonEqual(t, "matrix", r.Body, `{"msgtype": "m.text", "body": "💫 kustomization/apps.flux-system\nDeployment/apps/web configured\n- env: prod\n- revision: `+testRevision+`\n"}`)
			},
		},
		{
			name:   "telegram",
			spec:   "  type: telegram\n  channel: '-100123:7'\n  address: https://ignored.example\n  secretRef: {name: hook}\n",
			secret: map[string]string{"token": "123456:ABC-token"},
			check: one("POST", "/bot123456:ABC-token/sendMessage", `{"chat_id": "-100123", "message_thread_id": "7", "parse_mode": "MarkdownV2",
			  "text": "*💫 kustomization/apps/flux\\-system*\nDeployment/apps/web configured\n\\- *env*: prod\n\\- *revision*: main@sha1:0123456789abcdef0123456789abcdef01234567\n"}`, nil),
		},
		{
			name: "pagerduty",
			spec: "  type: pagerduty\n  address: {{URL}}/ignored/path\n  channel: routing-key-1\n",
			check: func(t *testing.T, got []received, _ string) {
				if len(got) != 2 || got[0].Path != "/v2/enqueue" || got[1].Path != "/v2/change/enqueue" {
					t.Fatalf("requests %v, want /v2/enqueue then /v2/change/enqueue", got)
				}
				jsonEqual(t, "event", got[0].Body, `{"routing_key": "routing-key-1", "event_action": "resolve", "dedup_key": "`+uid+`"}`)
				jsonEqual(t, "change", got[1].Body, `{"routing_key": "routing-key-1", "payload": {"summary": "reconciliation succeeded: kustomization/apps",
				  "source": "Flux kustomize-controller", "timestamp": "2026-11-28T09:30:00Z",
				  "custom_details": {"message": "Deployment/apps/web configured", "metadata": {"env": "prod", "revision": "`+testRevision+`"}}}}`)
			},
		},
		{
			name:   "opsgenie",
			spec:   "  type: opsgenie\n  address: {{URL}}/v2/alerts\n  secretRef: {name: hook}\n",
			secret: map[string]string{"token": token},
			check: func(t *testing.T, got []received, _ string) {
				if len(got) != 1 || got[0].Path != "/v2/alerts" || got[0].Header.Get("Authorization") != "GenieKey "+token {
					t.Fatalf("requests %v", got)
				}
				var body map[string]any
				json.Unmarshal(got[0].Body, &body)
				alias, _ := body["alias"].(string)
				if len(alias) != 64 {
					t.Errorf("alias %q, want a SHA-256", alias)
				}
				jsonEqual(t, "opsgenie", got[0].Body, `{"message": "Kustomization/apps", "alias": "`+alias+`", "description": "Deployment/apps/web configured",
				  "details": {"env": "prod", "revision": "`+testRevision+`", "severity": "info"}}`)
			},
		},
		{
			name:   "alertmanager",
			spec:   "  type: alertmanager\n  address: {{URL}}/api/v2/alerts\n  secretRef: {name: hook}\n",
			secret: map[string]string{"token": token},
			check: one("POST", "/api/v2/alerts", `[{"status": "firing", "startsAt": "2026-11-28T09:30:00Z", "endsAt": "0001-01-01T00:00:00Z",
			  "annotations": {"message": "Deployment/apps/web configured"},
			  "labels": {"env": "prod", "revision": "`+testRevision+`", "alertname": "FluxKustomizationReconciliationsucceeded", "severity": "info",
			    "reason": "ReconciliationSucceeded", "kind": "Kustomization", "name": "apps", "namespace": "flux-system", "reportingcontroller": "kustomize-controller"}}]`,
				map[string]string{"Authorization": "Bearer " + token}),
		},
		{
			name:   "grafana",
			spec:   "  type: grafana\n  address: {{URL}}/api/annotations\n  secretRef: {name: hook}\n",
			secret: map[string]string{"token": token},
			check: one("POST", "/api/annotations", `{"when": 1795858200, "text": "kustomization/apps.flux-system",
			  "tags": ["flux", "kustomize-controller", "env: prod", "revision: main@sha1|0123456789abcdef0123456789abcdef01234567",
			    "kind: Kustomization", "name: apps", "namespace: flux-system"]}`, map[string]string{"Authorization": "Bearer " + token}),
		},
		{
			name:   "webex",
			spec:   "  type: webex\n  address: {{URL}}/v1/messages\n  channel: room-1\n  secretRef: {name: hook}\n",
			secret: map[string]string{"token": token},
			check: one("POST", "/v1/messages", `{"roomId": "room-1",
			  "markdown": "✅ **kustomization/apps.flux-system**\nDeployment/apps/web configured\n>**env**: prod\n>**revision**: `+testRevision+`\n"}`,
				map[string]string{"Authorization": "Bearer " + token}),
		},
		{
			name: "lark",
			spec: "  type: lark\n  address: {{URL}}/open-apis/bot/v2/hook/x\n",
			check: one("POST", "/open-apis/bot/v2/hook/x", `{"msg_type": "interactive", "card": {"config": {"wide_screen_mode": true},
			  "header": {"title": {"tag": "plain_text", "content": "💫 kustomization/apps.flux-system"}, "template": "turquoise"},
			  "elements": [{"tag": "div", "text": {"tag": "lark_md", "content": "**Deployment/apps/web configured**\n\nenv: prod\nrevision: `+testRevision+`\n"}}]}}`, nil),
		},
		{
			name:   "github",
			spec:   "  type: github\n  address: {{URL}}/acme/app\n  secretRef: {name: hook}\n",
			secret: map[string]string{"token": token},
			check: func(t *testing.T, got []received, _ string) {
				if len(got) != 1 {
					t.Fatalf("requests %v", got)
				}
				if got[0].Method != "POST" || got[0].Path != "/api/v3/repos/acme/app/statuses/0123456789abcdef0123456789abcdef01234567" {
					t.Errorf("%s %s", got[0].Method, got[0].Path)
				}
				if got[0].Header.Get("Authorization") != "Bearer "+token {
					t.Errorf("authorization %q", got[0].Header.Get("Authorization"))
				}
				uidPart := strings.Split(string(pseudoUID("Provider", "flux-system", "hook")), "-")[0]
				jsonEqual(t, "status", got[0].Body, `{"state": "success", "context": "kustomization/apps/`+uidPart+`", "description": "reconciliation succeeded"}`)
			},
		},
		{
			name:   "githubdispatch",
			spec:   "  type: githubdispatch\n  address: {{URL}}/acme/app\n  secretRef: {name: hook}\n",
			secret: map[string]string{"token": token},
			check: func(t *testing.T, got []received, _ string) {
				if len(got) != 1 || got[0].Method != "POST" || got[0].Path != "/api/v3/repos/acme/app/dispatches" {
					t.Fatalf("requests %v", got)
				}
				jsonEqual(t, "dispatch", got[0].Body, `{"event_type": "Kustomization/apps.flux-system", "client_payload": `+eventJSON(uid)+`}`)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newReceiver(t)
			expand := func(s string) string { return strings.ReplaceAll(s, "{{URL}}", r.srv.URL) }
			data := map[string]string{}
			for k, v := range tt.secret {
				data[k] = expand(v)
			}
			var masked []string
			var mu sync.Mutex
			n := New([]*config.Notification{providerDoc(expand(tt.spec)), everything}, Options{
				Secret:      secrets(map[string]map[string]string{"flux-system/hook": data}),
				TelegramAPI: r.srv.URL,
				Now:         func() time.Time { return testNow },
				Mask:        func(v []string) { mu.Lock(); masked = append(masked, v...); mu.Unlock() },
			})
			if len(n.Warnings) > 0 {
				t.Fatalf("warnings: %q", n.Warnings)
			}
			ds := n.Notify(t.Context(), apps, changed())
			if len(ds) != 1 || ds[0].Err != nil {
				t.Fatalf("deliveries: %v", ds)
			}
			tt.check(t, r.requests(), r.srv.URL)
			for _, v := range data {
				if strings.Contains(v, "X-Api-Key") {
					continue // headers: their values are masked
				}
				if !contains(masked, v) {
					t.Errorf("%q was not masked", v)
				}
			}
		})
	}
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}
