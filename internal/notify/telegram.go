package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// Telegram: the Bot API's sendMessage, MarkdownV2, to the chat (and
// topic: "chat:thread") spec.channel names, with the bot's token from
// the Secret. The address is ignored, as notification-controller does.

type telegramPayload struct {
	ChatID          string `json:"chat_id"`
	MessageThreadID string `json:"message_thread_id,omitempty"`
	Text            string `json:"text"`
	ParseMode       string `json:"parse_mode"`
}

func postTelegram(ctx context.Context, t *target, e eventv1.Event) error {
	if t.channel == "" {
		return errors.New("spec.channel (the chat) is empty")
	}
	if t.token == "" {
		return errors.New("the bot's token (the token of the Secret spec.secretRef names) is empty")
	}
	emoji := "💫"
	if e.Severity == eventv1.EventSeverityError {
		emoji = "🚨"
	}
	heading := fmt.Sprintf("%s %s/%s/%s", emoji, strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, e.InvolvedObject.Namespace)
	var meta strings.Builder
	for _, k := range sortedKeys(e.Metadata) {
		fmt.Fprintf(&meta, "\\- *%s*: %s\n", telegramEscape(k), telegramEscape(e.Metadata[k]))
	}
	chat, thread, _ := strings.Cut(t.channel, ":")
	payload := telegramPayload{
		ChatID:          chat,
		MessageThreadID: thread,
		Text:            fmt.Sprintf("*%s*\n%s\n%s", telegramEscape(heading), telegramEscape(e.Message), meta.String()),
		ParseMode:       "MarkdownV2",
	}
	return do(ctx, t.client, request{url: strings.TrimSuffix(t.telegram, "/") + "/bot" + t.token + "/sendMessage", body: payload})
}

// telegramEscape escapes what MarkdownV2 reserves.
func telegramEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\.-_[]()~>`#+=|{}!*", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
