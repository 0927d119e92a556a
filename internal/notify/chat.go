package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// Webex's messages API and Lark's interactive cards.

type webexPayload struct {
	RoomID   string `json:"roomId,omitempty"`
	Markdown string `json:"markdown,omitempty"`
}

// postWebex posts markdown to the room spec.channel names, with the
// bot's token (Bearer); the address is the API's
// (https://webexapis.com/v1/messages).
func postWebex(ctx context.Context, t *target, e eventv1.Event) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	if t.token == "" {
		return errors.New("the bot's token (the token of the Secret spec.secretRef names) is empty")
	}
	emoji := "✅"
	if e.Severity == eventv1.EventSeverityError {
		emoji = "💣"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s **%s**\n%s\n", emoji, objectName(e), e.Message)
	for _, k := range sortedKeys(e.Metadata) {
		fmt.Fprintf(&b, ">**%s**: %s\n", k, e.Metadata[k])
	}
	return do(ctx, t.client, request{url: t.address, body: webexPayload{RoomID: t.channel, Markdown: b.String()},
		headers: map[string]string{"Authorization": "Bearer " + t.token}})
}

type larkPayload struct {
	MsgType string   `json:"msg_type"`
	Card    larkCard `json:"card"`
}

type larkCard struct {
	Config   larkConfig    `json:"config"`
	Header   larkHeader    `json:"header"`
	Elements []larkElement `json:"elements"`
}

type larkConfig struct {
	WideScreenMode bool `json:"wide_screen_mode"`
}

type larkHeader struct {
	Title    larkText `json:"title"`
	Template string   `json:"template"`
}

type larkElement struct {
	Tag  string   `json:"tag"`
	Text larkText `json:"text"`
}

type larkText struct {
	Tag     string `json:"tag"`
	Content string `json:"content"`
}

// postLark posts an interactive card to a Lark (Feishu) bot's webhook.
func postLark(ctx context.Context, t *target, e eventv1.Event) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	emoji, color := "💫", "turquoise"
	if e.Severity == eventv1.EventSeverityError {
		emoji, color = "🚨", "red"
	}
	message := fmt.Sprintf("**%s**\n\n", e.Message)
	for _, k := range sortedKeys(e.Metadata) {
		message += fmt.Sprintf("%s: %s\n", k, e.Metadata[k])
	}
	payload := larkPayload{MsgType: "interactive", Card: larkCard{
		Config:   larkConfig{WideScreenMode: true},
		Header:   larkHeader{Title: larkText{Tag: "plain_text", Content: emoji + " " + objectName(e)}, Template: color},
		Elements: []larkElement{{Tag: "div", Text: larkText{Tag: "lark_md", Content: message}}},
	}}
	return do(ctx, t.client, request{url: t.address, body: payload})
}
