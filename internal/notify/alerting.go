package notify

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"time"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// Incident tools: PagerDuty's Events API v2, Opsgenie's Alert API and
// Prometheus Alertmanager's alerts API.

// pagerDutyEvent is an Events API v2 event (go-pagerduty's V2Event).
type pagerDutyEvent struct {
	RoutingKey string            `json:"routing_key"`
	Action     string            `json:"event_action"`
	DedupKey   string            `json:"dedup_key,omitempty"`
	Payload    *pagerDutyPayload `json:"payload,omitempty"`
}

type pagerDutyPayload struct {
	Summary   string         `json:"summary"`
	Source    string         `json:"source"`
	Severity  string         `json:"severity"`
	Timestamp string         `json:"timestamp,omitempty"`
	Component string         `json:"component,omitempty"`
	Group     string         `json:"group,omitempty"`
	Details   map[string]any `json:"custom_details,omitempty"`
}

// pagerDutyChange is a Change Events API event (go-pagerduty's ChangeEvent).
type pagerDutyChange struct {
	RoutingKey string                 `json:"routing_key"`
	Payload    pagerDutyChangePayload `json:"payload"`
}

type pagerDutyChangePayload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source,omitempty"`
	Timestamp     string         `json:"timestamp,omitempty"`
	CustomDetails map[string]any `json:"custom_details,omitempty"`
}

// postPagerDuty triggers an incident for an error and resolves it
// otherwise (deduplicated by the involved object), and sends a change
// event for an info event; spec.channel is the routing key.
func postPagerDuty(ctx context.Context, t *target, e eventv1.Event) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	if e.Reason == "Progressing" {
		return nil // success or failure only
	}
	u, _ := url.Parse(t.address)
	endpoint := u.Scheme + "://" + u.Host
	name, desc := nameAndDescription(e)
	details := map[string]any{"message": e.Message, "metadata": e.Metadata}
	ev := pagerDutyEvent{RoutingKey: t.channel, Action: "resolve", DedupKey: string(e.InvolvedObject.UID)}
	if e.Severity == eventv1.EventSeverityError {
		ev.Action = "trigger"
		ev.Payload = &pagerDutyPayload{
			Summary: desc + ": " + name, Source: "Flux " + e.ReportingController, Severity: "error",
			Timestamp: e.Timestamp.Format(time.RFC3339), Component: e.InvolvedObject.Name, Group: e.InvolvedObject.Kind,
			Details: details,
		}
	}
	if err := do(ctx, t.client, request{url: endpoint + "/v2/enqueue", body: ev}); err != nil {
		return fmt.Errorf("failed sending event: %w", err)
	}
	if e.Severity != eventv1.EventSeverityInfo {
		return nil
	}
	change := pagerDutyChange{RoutingKey: t.channel, Payload: pagerDutyChangePayload{
		Summary: desc + ": " + name, Source: "Flux " + e.ReportingController, Timestamp: e.Timestamp.Format(time.RFC3339),
		CustomDetails: details,
	}}
	if err := do(ctx, t.client, request{url: endpoint + "/v2/change/enqueue", body: change}); err != nil {
		return fmt.Errorf("failed sending change event: %w", err)
	}
	return nil
}

// nameAndDescription are the object (kind/name, lower case) and the
// reason in words ("reconciliation succeeded").
func nameAndDescription(e eventv1.Event) (string, string) {
	name := strings.ToLower(e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name)
	return name, strings.ToLower(strings.Join(splitCamelCase(e.Reason), " "))
}

// splitCamelCase splits "HealthCheckFailed" into its words.
func splitCamelCase(s string) []string {
	var words []string
	start := 0
	runes := []rune(s)
	for i := 1; i < len(runes); i++ {
		upper := func(r rune) bool { return r >= 'A' && r <= 'Z' }
		if upper(runes[i]) && (!upper(runes[i-1]) || i+1 < len(runes) && !upper(runes[i+1])) {
			words = append(words, string(runes[start:i]))
			start = i
		}
	}
	if start < len(runes) {
		words = append(words, string(runes[start:]))
	}
	return words
}

// opsgenieAlert is an Opsgenie alert.
type opsgenieAlert struct {
	Message     string            `json:"message"`
	Alias       string            `json:"alias,omitempty"`
	Description string            `json:"description"`
	Details     map[string]string `json:"details"`
}

// postOpsgenie creates an alert with the Secret's token as the API key,
// its alias stable for the Provider, object and reason.
func postOpsgenie(ctx context.Context, t *target, e eventv1.Event) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	if t.token == "" {
		return errors.New("empty Opsgenie apikey/token")
	}
	details := maps.Clone(e.Metadata)
	if details == nil {
		details = map[string]string{}
	}
	details["severity"] = e.Severity
	key := fmt.Sprintf("%s/%s/%s/%s/%s", pseudoUID("Provider", t.p.Ref.Namespace, t.p.Ref.Name),
		e.InvolvedObject.Kind, e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Reason)
	alias := fmt.Sprintf("%x", sha256.Sum256([]byte(key)))
	payload := opsgenieAlert{Message: e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name, Alias: alias, Description: e.Message, Details: details}
	return do(ctx, t.client, request{url: t.address, body: payload, headers: map[string]string{"Authorization": "GenieKey " + t.token}})
}

// alertmanagerAlert is an alert of Alertmanager's API.
type alertmanagerAlert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    string            `json:"startsAt"`
	// EndsAt is the zero time, as notification-controller sends it
	// (omitempty does not leave a struct out): Alertmanager resolves the
	// alert after its resolve_timeout.
	EndsAt string `json:"endsAt"`
}

// postAlertmanager fires one alert, labelled with the event's metadata
// and what it is about; bearer token or basic authentication from the
// Secret.
func postAlertmanager(ctx context.Context, t *target, e eventv1.Event) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	annotations := map[string]string{"message": e.Message}
	labels := maps.Clone(e.Metadata)
	if labels == nil {
		labels = map[string]string{}
	}
	if summary, ok := labels["summary"]; ok {
		annotations["summary"] = summary
		delete(labels, "summary")
	}
	labels["alertname"] = "Flux" + e.InvolvedObject.Kind + cases.Title(language.Und).String(e.Reason)
	labels["severity"] = e.Severity
	labels["reason"] = e.Reason
	labels["kind"] = e.InvolvedObject.Kind
	labels["name"] = e.InvolvedObject.Name
	labels["namespace"] = e.InvolvedObject.Namespace
	labels["reportingcontroller"] = e.ReportingController
	payload := []alertmanagerAlert{{Status: "firing", Labels: labels, Annotations: annotations,
		StartsAt: e.Timestamp.Format(time.RFC3339), EndsAt: time.Time{}.Format(time.RFC3339)}}
	req := request{url: t.address, body: payload}
	switch {
	case t.username != "" && t.password != "":
		// notification-controller's last request modifier wins.
		req.username, req.password = t.username, t.password
	case t.token != "":
		req.headers = map[string]string{"Authorization": "Bearer " + t.token}
	}
	return do(ctx, t.client, req)
}
