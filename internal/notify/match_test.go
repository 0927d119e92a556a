package notify

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// alertDoc is an Alert in namespace flux-system with spec (YAML, indented
// two spaces) below providerRef.
func alertDoc(name, spec string) *config.Notification {
	return &config.Notification{Kind: config.NotificationAlert, APIVersion: "notification.toolkit.fluxcd.io/v1beta3",
		Ref: config.Ref{Namespace: "flux-system", Name: name}, File: "alerts.yaml", Line: 1,
		Raw: fmt.Appendf(nil, "apiVersion: notification.toolkit.fluxcd.io/v1beta3\nkind: Alert\nmetadata:\n  name: %s\n  namespace: flux-system\nspec:\n  providerRef:\n    name: hook\n%s", name, spec)}
}

func mustAlert(t *testing.T, spec string) *Alert {
	t.Helper()
	a, err := readAlert(alertDoc("a", spec))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Which events an Alert takes, as notification-controller decides:
// eventSources by kind, name or *, namespace (the Alert's own when the
// source names none) and matchLabels; eventSeverity info takes both,
// error only errors; inclusionList and exclusionList on the message;
// suspend takes none.
func TestAlertMatches(t *testing.T) {
	t.Parallel()
	now := time.Now()
	change := Events(apps, resultOf(result.ModeApply, result.ReasonApplySucceed, true, "", entry(web, result.Configured)), now)[0]
	failure := Events(apps, resultOf(result.ModeApply, result.ReasonHealthCheckFailed, false, "Deployment/apps/web: timeout waiting"), now)[0]
	otherNS := Events(Source{Namespace: "team-a", Name: "apps"}, resultOf(result.ModeApply, result.ReasonApplySucceed, true, "", entry(web, result.Configured)), now)[0]
	tests := []struct {
		name                  string
		spec                  string
		change, failure, team bool // whether it takes each event
	}{
		{"any Kustomization of its namespace", "  eventSources:\n  - {kind: Kustomization, name: '*'}\n", true, true, false},
		{"by name", "  eventSources:\n  - {kind: Kustomization, name: apps}\n", true, true, false},
		{"another name", "  eventSources:\n  - {kind: Kustomization, name: infra}\n", false, false, false},
		{"another kind", "  eventSources:\n  - {kind: HelmRelease, name: '*'}\n", false, false, false},
		{"another namespace, named", "  eventSources:\n  - {kind: Kustomization, name: '*', namespace: team-a}\n", false, false, true},
		{"one source of several", "  eventSources:\n  - {kind: GitRepository, name: '*'}\n  - {kind: Kustomization, name: '*', namespace: team-a}\n", false, false, true},
		{"matchLabels that match", "  eventSources:\n  - {kind: Kustomization, name: '*', matchLabels: {team: web}}\n", true, true, false},
		{"matchLabels that do not", "  eventSources:\n  - {kind: Kustomization, name: '*', matchLabels: {team: db}}\n", false, false, false},
		{"errors only", "  eventSeverity: error\n  eventSources:\n  - {kind: Kustomization, name: '*'}\n", false, true, false},
		{"info takes errors too", "  eventSeverity: info\n  eventSources:\n  - {kind: Kustomization, name: '*'}\n", true, true, false},
		{"included", "  inclusionList: ['timeout']\n  eventSources:\n  - {kind: Kustomization, name: '*'}\n", false, true, false},
		{"excluded", "  exclusionList: ['^Deployment/apps/web configured$']\n  eventSources:\n  - {kind: Kustomization, name: '*'}\n", false, true, false},
		{"included and excluded", "  inclusionList: ['Deployment']\n  exclusionList: ['timeout']\n  eventSources:\n  - {kind: Kustomization, name: '*'}\n", true, false, false},
		{"suspended", "  suspend: true\n  eventSources:\n  - {kind: Kustomization, name: '*'}\n", false, false, false},
		{"an inclusion list of bad expressions only takes nothing", "  inclusionList: ['(']\n  eventSources:\n  - {kind: Kustomization, name: '*'}\n", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := mustAlert(t, tt.spec)
			got := [3]bool{a.matches(change), a.matches(failure), a.matches(otherNS)}
			if want := [3]bool{tt.change, tt.failure, tt.team}; got != want {
				t.Errorf("takes (change, failure, other namespace) %v, want %v", got, want)
			}
		})
	}
}

// An Alert the API server would refuse is not used, and says why by
// field; a bad expression of its lists is skipped with a warning.
func TestReadAlertProblems(t *testing.T) {
	t.Parallel()
	tests := []struct{ spec, want string }{
		{"  eventSources: []\n", "spec.eventSources: required"},
		{"  eventSeverity: warning\n  eventSources:\n  - {kind: Kustomization, name: '*'}\n", `spec.eventSeverity: "warning" is neither info nor error`},
		{"  eventSources:\n  - {kind: Deployment, name: '*'}\n", `spec.eventSources[0].kind: "Deployment" is not a kind of Flux object`},
		{"  eventSources:\n  - {kind: Kustomization}\n", "spec.eventSources[0].name: required"},
	}
	for _, tt := range tests {
		if _, err := readAlert(alertDoc("a", tt.spec)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.spec, err, tt.want)
		}
	}
	a := mustAlert(t, "  exclusionList: ['(']\n  eventSources:\n  - {kind: Kustomization, name: '*'}\n")
	if len(a.warnings) != 1 || !strings.Contains(a.warnings[0], "spec.exclusionList[0] is skipped") {
		t.Errorf("warnings %q", a.warnings)
	}
}

// An event's metadata as the Alert's Provider gets it, by RFC 0008's
// precedence: the object's event annotations, the Alert's eventMetadata,
// its summary, the controller's keys; prefixes taken off.
func TestMetadataPrecedence(t *testing.T) {
	t.Parallel()
	e := Events(apps, resultOf(result.ModeApply, result.ReasonApplySucceed, true, "", entry(web, result.Configured)), time.Now())[0]
	e.Metadata["event.toolkit.fluxcd.io/revision"] = "from the annotation"
	a := mustAlert(t, "  summary: deploys\n  eventMetadata: {env: staging, cluster: eu-1, summary: overridden}\n  eventSources:\n  - {kind: Kustomization, name: '*'}\n")
	want := map[string]string{"env": "staging", "cluster": "eu-1", "summary": "deploys", "revision": testRevision}
	if diff := cmp.Diff(want, metadata(e.Event, a)); diff != "" {
		t.Errorf("metadata mismatch (-want +got):\n%s", diff)
	}
}
