package leaktest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const secret = `v4lue+/=&"\ %é中'x`

// Every form planted in a capture is a hit, named by its encoding, and
// the report never shows the value.
func TestEveryFormIsFound(t *testing.T) {
	t.Parallel()
	forms := Forms(secret + "\nsecond-line-of-it")
	if len(forms) < 20 {
		t.Fatalf("only %d forms", len(forms))
	}
	for _, f := range forms {
		s := &Scanner{}
		s.Secret("s", secret+"\nsecond-line-of-it")
		s.Capture("mode", "stream", "before\nsome text "+f.Text+" after\n")
		hits, _ := s.Hits()
		found := false
		for _, h := range hits {
			if h.Encoding == f.Encoding && h.Line == 2 {
				found = true
			}
			if strings.Contains(h.String(), "v4lue") || strings.Contains(h.String(), "second-line") {
				t.Errorf("the report shows the value: %s", h)
			}
		}
		if !found {
			t.Errorf("%s (%q) not found: %v", f.Encoding, f.Text, hits)
		}
	}
}

// ::add-mask:: lines carry values by design; other lines do not.
func TestMaskCommandsAreNotHits(t *testing.T) {
	t.Parallel()
	s := &Scanner{}
	s.Secret("s", secret)
	s.Capture("mode", "log", MaskCommand+secret+"\nlog: "+secret+"\n")
	hits, c := s.Hits()
	if len(hits) != 1 || hits[0].Line != 2 || hits[0].Count != 1 {
		t.Errorf("hits %v", hits)
	}
	if c.Secrets != 1 || c.Captures != 1 || c.Forms != len(Forms(secret)) {
		t.Errorf("counts %+v", c)
	}
}

// The context around a hit masks every other secret near it too.
func TestContextMasksEverySecret(t *testing.T) {
	t.Parallel()
	s := &Scanner{}
	s.Secret("a", "first-secret-value")
	s.Secret("b", "other-secret-value")
	s.Capture("m", "s", "x other-secret-value y first-secret-value z")
	hits, _ := s.Hits()
	if len(hits) != 2 {
		t.Fatalf("hits %v", hits)
	}
	for _, h := range hits {
		if h.Context != "x <SECRET> y <SECRET> z" {
			t.Errorf("context %q", h.Context)
		}
	}
	if got := s.Redact("a first-secret-value b\n::add-mask::x"); got != "a <SECRET> b\n::add-mask::…" {
		t.Errorf("redacted %q", got)
	}
}

func TestRegistered(t *testing.T) {
	t.Parallel()
	reg := Registered("::add-mask::a%25b\nlog line\n::add-mask::c%0Ad\n")
	if diff := cmp.Diff(map[string]bool{"a%b": true, "c\nd": true}, reg); diff != "" {
		t.Errorf("registered mismatch (-want +got):\n%s", diff)
	}
}

// A JSON payload is scanned as sent and as its receiver decodes it: a
// value JSON escaping hides from a raw scan (a newline split, a quote
// escaped) is found in the decoded strings, at any depth.
func TestCaptureJSONDecodes(t *testing.T) {
	const secret = "json-secret-Q7\"w+/=end"
	s := &Scanner{}
	s.Secret("token", secret)
	s.CaptureJSON("apply", "notification", []byte(`{"event": {"metadata": {"note": "before\n`+strings.ReplaceAll(secret, `"`, `\u0022`)+`\nafter"}}, "list": ["x"]}`))
	hits, counts := s.Hits()
	if len(hits) == 0 {
		t.Fatalf("no hit in %s", counts)
	}
	found := false
	for _, h := range hits {
		if strings.Contains(h.String(), "notification, decoded") {
			found = true
		}
	}
	if !found {
		t.Errorf("no hit in the decoded strings: %v", hits)
	}
}
