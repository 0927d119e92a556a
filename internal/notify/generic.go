package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// notificationHeader names the controller of the event in a generic
// post (notification-controller's Forwarder).
const notificationHeader = "gotk-component"

// postGeneric posts the event as JSON to the address.
func postGeneric(ctx context.Context, t *target, e eventv1.Event) error {
	return forward(ctx, t, e, nil)
}

// postGenericHMAC posts the event as JSON to the address, signed with the
// Secret's token: X-Signature: sha256=<hex HMAC of the body>.
func postGenericHMAC(ctx context.Context, t *target, e eventv1.Event) error {
	if t.token == "" {
		return errors.New("the HMAC key (the token of the Secret spec.secretRef names) is empty")
	}
	return forward(ctx, t, e, []byte(t.token))
}

func forward(ctx context.Context, t *target, e eventv1.Event, key []byte) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	headers := map[string]string{notificationHeader: e.ReportingController}
	for k, v := range t.headers {
		headers[k] = v
	}
	if key != nil {
		body, err := json.Marshal(e)
		if err != nil {
			return err
		}
		headers["X-Signature"] = "sha256=" + sign(body, key)
	}
	return do(ctx, t.client, request{url: t.address, body: e, headers: headers})
}

// sign is the hex HMAC-SHA256 of payload with key.
func sign(payload, key []byte) string {
	h := hmac.New(sha256.New, key)
	h.Write(payload)
	return hex.EncodeToString(h.Sum(nil))
}
