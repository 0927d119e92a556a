package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// Slack's incoming webhooks and chat.postMessage, and the services that
// take Slack's payload: Discord (its /slack endpoint) and Rocket.Chat.

// slackPayload is a Slack message with one attachment.
type slackPayload struct {
	Channel     string            `json:"channel"`
	Username    string            `json:"username"`
	IconURL     string            `json:"icon_url"`
	IconEmoji   string            `json:"icon_emoji"`
	Text        string            `json:"text,omitempty"`
	Attachments []slackAttachment `json:"attachments,omitempty"`
}

type slackAttachment struct {
	Fallback   string       `json:"fallback"`
	Color      string       `json:"color"`
	AuthorName string       `json:"author_name"`
	Text       string       `json:"text"`
	MrkdwnIn   []string     `json:"mrkdwn_in"`
	Fields     []slackField `json:"fields"`
}

type slackField struct {
	Title string `json:"title"`
	Value string `json:"value"`
	Short bool   `json:"short"`
}

// slackPostMessage is Slack's Web API method, which answers 200 with
// ok: false on a failure.
const slackPostMessage = "https://slack.com/api/chat.postMessage"

func slackFields(e eventv1.Event) []slackField {
	fields := make([]slackField, 0, len(e.Metadata))
	for _, k := range sortedKeys(e.Metadata) {
		fields = append(fields, slackField{Title: k, Value: e.Metadata[k]})
	}
	return fields
}

// postSlack posts to a Slack webhook, or to chat.postMessage with the
// Secret's token (a bot's) as bearer.
func postSlack(ctx context.Context, t *target, e eventv1.Event) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	payload := slackPayload{Channel: t.channel, Username: t.username}
	if payload.Username == "" {
		payload.Username = e.ReportingController
	}
	color := "good"
	if e.Severity == eventv1.EventSeverityError {
		color = "danger"
	}
	author := objectName(e)
	payload.Attachments = []slackAttachment{{
		Fallback:   fmt.Sprintf("%s: %s", author, strings.Split(e.Message, "\n")[0]),
		Color:      color,
		AuthorName: author,
		Text:       e.Message,
		MrkdwnIn:   []string{"text"},
		Fields:     slackFields(e),
	}}
	req := request{url: t.address, body: payload}
	if t.token != "" {
		req.headers = map[string]string{"Authorization": "Bearer " + t.token}
	}
	if t.address == slackPostMessage {
		req.validate = func(body []byte) error {
			var resp struct {
				Ok    bool   `json:"ok"`
				Error string `json:"error"`
			}
			if err := json.Unmarshal(body, &resp); err != nil {
				return fmt.Errorf("unable to unmarshal response body: %w", err)
			}
			if !resp.Ok {
				return fmt.Errorf("Slack responded with error: %s", resp.Error)
			}
			return nil
		}
	}
	return do(ctx, t.client, req)
}

// postDiscord posts Slack's payload to the webhook's /slack endpoint.
func postDiscord(ctx context.Context, t *target, e eventv1.Event) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	address := t.address
	if !strings.HasSuffix(address, "/slack") {
		u, _ := url.Parse(address)
		u.Path = path.Join(u.Path, "slack")
		address = u.String()
	}
	payload := slackPayload{Username: t.username}
	if payload.Username == "" {
		payload.Username = e.ReportingController
	}
	color := "good"
	if e.Severity == eventv1.EventSeverityError {
		color = "danger"
	}
	payload.Attachments = []slackAttachment{{
		Color:      color,
		AuthorName: objectName(e),
		Text:       e.Message,
		MrkdwnIn:   []string{"text"},
		Fields:     slackFields(e),
	}}
	return do(ctx, t.client, request{url: address, body: payload})
}

// postRocket posts Slack's payload to a Rocket.Chat webhook.
func postRocket(ctx context.Context, t *target, e eventv1.Event) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	payload := slackPayload{Channel: t.channel, Username: t.username}
	color := "#0076D7"
	if e.Severity == eventv1.EventSeverityError {
		color = "#FF0000"
	}
	payload.Attachments = []slackAttachment{{
		Color:      color,
		AuthorName: objectName(e),
		Text:       e.Message,
		MrkdwnIn:   []string{"text"},
		Fields:     slackFields(e),
	}}
	return do(ctx, t.client, request{url: t.address, body: payload})
}
