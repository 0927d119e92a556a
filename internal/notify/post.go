package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Posting is notification-controller's (internal/notifier/client.go):
// JSON, any 2xx accepted, retried on a network error, 429 or a 5xx, the
// whole post bounded by the Provider's timeout. Errors never quote the
// address: a webhook's URL is its secret.

// retrying retries a request on a network error, 429 or a 5xx, at most
// retries more times, waiting wait, then twice as long each time, while
// the request's context allows.
type retrying struct {
	next    http.RoundTripper
	retries int
	wait    time.Duration
}

func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 {
			r = req.Clone(req.Context())
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		resp, err := t.next.RoundTrip(r)
		if attempt == t.retries || !retryable(resp, err) || req.Context().Err() != nil || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
		}
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(t.wait << attempt):
		}
	}
}

func retryable(resp *http.Response, err error) bool {
	if err != nil {
		return true
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented
}

// request is one HTTP request of a post.
type request struct {
	method  string // POST unless set
	url     string
	body    any // marshalled as JSON
	headers map[string]string
	// basic sets basic authentication.
	username, password string
	// validate checks a 2xx response's body (Slack's chat.postMessage
	// answers 200 with ok: false); nil accepts it.
	validate func([]byte) error
}

// do sends req with client: an error for anything but a 2xx, saying the
// status and the start of the body, never the URL.
func do(ctx context.Context, client *http.Client, req request) error {
	data, err := json.Marshal(req.body)
	if err != nil {
		return fmt.Errorf("marshalling the payload: %w", err)
	}
	method := req.method
	if method == "" {
		method = http.MethodPost
	}
	hr, err := http.NewRequestWithContext(ctx, method, req.url, bytes.NewReader(data))
	if err != nil {
		return errors.New("the address is not a URL")
	}
	hr.Header.Set("Content-Type", "application/json")
	if req.username != "" || req.password != "" {
		hr.SetBasicAuth(req.username, req.password)
	}
	for k, v := range req.headers {
		hr.Header.Set(k, v)
	}
	resp, err := client.Do(hr)
	if err != nil {
		return fmt.Errorf("request failed: %w", withoutURL(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("request failed with status code %d: %s", resp.StatusCode, excerpt(body))
	}
	if req.validate != nil {
		return req.validate(body)
	}
	return nil
}

// withoutURL is err without the URL a *url.Error quotes.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// excerpt is the start of a response body, on one line.
func excerpt(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	const max = 300
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// checkURL checks that address is an absolute http(s) URL, without
// quoting it.
func checkURL(field, address string) error {
	u, err := url.ParseRequestURI(address)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("%s is not an http(s) URL", field)
	}
	return nil
}
