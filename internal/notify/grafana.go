package notify

import (
	"context"
	"fmt"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// Grafana: an annotation (Graphite format) tagged flux, the controller,
// each metadata key: value, and the object.

type grafanaAnnotation struct {
	When int64    `json:"when"`
	Text string   `json:"text"`
	Tags []string `json:"tags,omitempty"`
}

// postGrafana posts an annotation with the Secret's token (Bearer), or
// its username and password (basic) when there is no token.
func postGrafana(ctx context.Context, t *target, e eventv1.Event) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	tags := []string{"flux", e.ReportingController}
	for _, k := range sortedKeys(e.Metadata) {
		tags = append(tags, fmt.Sprintf("%s: %s", strings.ReplaceAll(k, ":", "|"), strings.ReplaceAll(e.Metadata[k], ":", "|")))
	}
	tags = append(tags, "kind: "+e.InvolvedObject.Kind, "name: "+e.InvolvedObject.Name, "namespace: "+e.InvolvedObject.Namespace)
	req := request{url: t.address, body: grafanaAnnotation{When: e.Timestamp.Unix(), Text: objectName(e), Tags: tags}}
	switch {
	case t.token != "":
		req.headers = map[string]string{"Authorization": "Bearer " + t.token}
	case t.username != "" && t.password != "":
		req.username, req.password = t.username, t.password
	}
	return do(ctx, t.client, req)
}
