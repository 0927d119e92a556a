package notify

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// Matrix: an m.room.message text event PUT into the room spec.channel
// names, on the homeserver at the address, with the Secret's token.

type matrixPayload struct {
	Body    string `json:"body"`
	MsgType string `json:"msgtype"`
}

func postMatrix(ctx context.Context, t *target, e eventv1.Event) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	if t.channel == "" {
		return errors.New("spec.channel (the room) is empty")
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	sum := sha1.Sum(raw)
	txID := hex.EncodeToString(sum[:])
	address := fmt.Sprintf("%s/_matrix/client/r0/rooms/%s/send/m.room.message/%s", strings.TrimSuffix(t.address, "/"), t.channel, txID)
	emoji := "💫"
	if e.Severity == eventv1.EventSeverityError {
		emoji = "🚨"
	}
	var meta strings.Builder
	for _, k := range sortedKeys(e.Metadata) {
		fmt.Fprintf(&meta, "- %s: %s\n", k, e.Metadata[k])
	}
	msg := fmt.Sprintf("%s %s\n%s\n%s", emoji, objectName(e), e.Message, meta.String())
	return do(ctx, t.client, request{method: http.MethodPut, url: address, body: matrixPayload{Body: msg, MsgType: "m.text"},
		headers: map[string]string{"Authorization": "Bearer " + t.token}})
}
