package notify

import (
	"context"
	"fmt"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// Google Chat: a card with the object as its header, the message, and
// the metadata as key-value widgets.

type googleChatPayload struct {
	Cards []googleChatCard `json:"cards"`
}

type googleChatCard struct {
	Header   googleChatHeader    `json:"header"`
	Sections []googleChatSection `json:"sections"`
}

type googleChatHeader struct {
	Title      string  `json:"title"`
	SubTitle   string  `json:"subtitle"`
	ImageURL   *string `json:"imageUrl"`
	ImageStyle *string `json:"imageStyle"`
}

type googleChatSection struct {
	Header  string             `json:"header"`
	Widgets []googleChatWidget `json:"widgets"`
}

type googleChatWidget struct {
	TextParagraph *googleChatText     `json:"textParagraph"`
	KeyValue      *googleChatKeyValue `json:"keyValue"`
}

type googleChatText struct {
	Text string `json:"text"`
}

type googleChatKeyValue struct {
	TopLabel         string  `json:"topLabel"`
	Content          string  `json:"content"`
	ContentMultiLine bool    `json:"contentMultiline"`
	BottomLabel      *string `json:"bottomLabel"`
	Icon             *string `json:"icon"`
}

func postGoogleChat(ctx context.Context, t *target, e eventv1.Event) error {
	if err := checkURL("the address", t.address); err != nil {
		return err
	}
	text := e.Message
	if e.Severity == eventv1.EventSeverityError {
		text = fmt.Sprintf("<font color=\"#ff0000\">%s</font>", e.Message)
	}
	sections := []googleChatSection{{Widgets: []googleChatWidget{{TextParagraph: &googleChatText{Text: text}}}}}
	if len(e.Metadata) > 0 {
		var kv []googleChatWidget
		for _, k := range sortedKeys(e.Metadata) {
			kv = append(kv, googleChatWidget{KeyValue: &googleChatKeyValue{TopLabel: k, Content: e.Metadata[k]}})
		}
		sections = append(sections, googleChatSection{Widgets: kv})
	}
	payload := googleChatPayload{Cards: []googleChatCard{{
		Header:   googleChatHeader{Title: objectName(e), SubTitle: e.ReportingController},
		Sections: sections,
	}}}
	return do(ctx, t.client, request{url: t.address, body: payload})
}
