package notify

import (
	"context"
	"net/url"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// Microsoft Teams: an Adaptive Card (Workflows' webhooks), or the
// deprecated Office 365 connector's MessageCard for an address on
// *.webhook.office.com, as notification-controller chooses.

// teamsAdaptiveCardVersion is the newest Adaptive Card schema Teams reads.
const teamsAdaptiveCardVersion = "1.4"

type teamsMessageCard struct {
	Type       string         `json:"@type"`
	Context    string         `json:"@context"`
	ThemeColor string         `json:"themeColor"`
	Summary    string         `json:"summary"`
	Sections   []teamsSection `json:"sections"`
}

type teamsSection struct {
	ActivityTitle    string      `json:"activityTitle"`
	ActivitySubtitle string      `json:"activitySubtitle"`
	Facts            []teamsFact `json:"facts"`
}

type teamsFact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type teamsCardMessage struct {
	Type        string                `json:"type"`
	Attachments []teamsCardAttachment `json:"attachments"`
}

type teamsCardAttachment struct {
	ContentType string           `json:"contentType"`
	Content     teamsCardContent `json:"content"`
}

type teamsCardContent struct {
	Schema  string             `json:"$schema"`
	Type    string             `json:"type"`
	Version string             `json:"version"`
	Body    []teamsCardElement `json:"body"`
	MSTeams teamsCardMSTeams   `json:"msteams"`
}

type teamsCardMSTeams struct {
	Width string `json:"width,omitempty"`
}

// teamsCardElement is a Container, a TextBlock or a FactSet.
type teamsCardElement struct {
	Type   string             `json:"type"`
	Items  []teamsCardElement `json:"items,omitempty"`
	Text   string             `json:"text,omitempty"`
	Size   string             `json:"size,omitempty"`
	Weight string             `json:"weight,omitempty"`
	Color  string             `json:"color,omitempty"`
	Wrap   bool               `json:"wrap,omitempty"`
	Facts  []teamsCardFact    `json:"facts,omitempty"`
}

type teamsCardFact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

func postMSTeams(ctx context.Context, t *target, e eventv1.Event) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	u, _ := url.Parse(t.address)
	var payload any
	if strings.HasSuffix(u.Hostname(), ".webhook.office.com") {
		payload = teamsConnectorPayload(e)
	} else {
		payload = teamsCardPayload(e)
	}
	return do(ctx, t.client, request{url: t.address, body: payload})
}

func teamsConnectorPayload(e eventv1.Event) teamsMessageCard {
	facts := make([]teamsFact, 0, len(e.Metadata))
	for _, k := range sortedKeys(e.Metadata) {
		facts = append(facts, teamsFact{Name: k, Value: e.Metadata[k]})
	}
	color := "0076D7"
	if e.Severity == eventv1.EventSeverityError {
		color = "FF0000"
	}
	name := objectName(e)
	return teamsMessageCard{
		Type: "MessageCard", Context: "http://schema.org/extensions", ThemeColor: color, Summary: name,
		Sections: []teamsSection{{ActivityTitle: e.Message, ActivitySubtitle: name, Facts: facts}},
	}
}

func teamsCardPayload(e eventv1.Event) teamsCardMessage {
	message := teamsCardElement{Type: "TextBlock", Text: e.Message, Wrap: true}
	if e.Severity == eventv1.EventSeverityError {
		message.Color = "attention"
	}
	// The summary first, then the rest of the metadata by key.
	facts := make([]teamsCardFact, 0, len(e.Metadata))
	if summary, ok := e.Metadata["summary"]; ok {
		facts = append(facts, teamsCardFact{Title: "summary", Value: summary})
	}
	for _, k := range sortedKeys(e.Metadata) {
		if k != "summary" {
			facts = append(facts, teamsCardFact{Title: k, Value: e.Metadata[k]})
		}
	}
	return teamsCardMessage{
		Type: "message",
		Attachments: []teamsCardAttachment{{
			ContentType: "application/vnd.microsoft.card.adaptive",
			Content: teamsCardContent{
				Schema:  "http://adaptivecards.io/schemas/adaptive-card.json",
				Type:    "AdaptiveCard",
				Version: teamsAdaptiveCardVersion,
				MSTeams: teamsCardMSTeams{Width: "Full"},
				Body: []teamsCardElement{{
					Type: "Container",
					Items: []teamsCardElement{
						{Type: "TextBlock", Text: objectName(e), Size: "large", Weight: "bolder", Wrap: true},
						message,
						{Type: "FactSet", Facts: facts},
					},
				}},
			},
		}},
	}
}
