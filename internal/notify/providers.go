package notify

import (
	"context"
	"fmt"
	"sort"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// A sender posts one event to a Provider of its type, with the payload
// notification-controller sends that type (internal/notifier/*.go).
type sender func(ctx context.Context, t *target, e eventv1.Event) error

// senders are the Provider types a run posts to, by spec.type.
var senders = map[string]sender{
	"generic":        postGeneric,
	"generic-hmac":   postGenericHMAC,
	"slack":          postSlack,
	"discord":        postDiscord,
	"rocket":         postRocket,
	"msteams":        postMSTeams,
	"googlechat":     postGoogleChat,
	"matrix":         postMatrix,
	"telegram":       postTelegram,
	"pagerduty":      postPagerDuty,
	"opsgenie":       postOpsgenie,
	"alertmanager":   postAlertmanager,
	"github":         postGitHubStatus,
	"githubdispatch": postGitHubDispatch,
	"grafana":        postGrafana,
	"webex":          postWebex,
	"lark":           postLark,
}

// objectName names the involved object as chat payloads do:
// kind/name.namespace, the kind in lower case.
func objectName(e eventv1.Event) string {
	return fmt.Sprintf("%s/%s.%s", strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, e.InvolvedObject.Namespace)
}

// sortedKeys are m's keys in order: payloads list metadata in a stable
// order (notification-controller's follows Go's map order).
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
