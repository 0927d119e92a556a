package mask

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestMaskerHidesValuesAndBase64(t *testing.T) {
	t.Parallel()
	m := New()
	added := m.Add("s3cr3t-value", "ab", "multi\nline-secret")
	for _, want := range []string{"s3cr3t-value", "czNjcjN0LXZhbHVl", "multi", "line-secret", "bXVsdGkKbGluZS1zZWNyZXQ=", `multi\nline-secret`} {
		if !slices.Contains(added, want) {
			t.Errorf("added %q lacks %q", added, want)
		}
	}
	for _, a := range added {
		if strings.Contains(a, "\n") || a == "ab" {
			t.Errorf("added %q", a)
		}
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("s3cr3t-value"))
	in := "password=s3cr3t-value data=" + b64 + " short=ab other=line-secret"
	got := m.String(in)
	for _, leak := range []string{"s3cr3t-value", b64, "line-secret"} {
		if strings.Contains(got, leak) {
			t.Errorf("%q leaks %q", got, leak)
		}
	}
	if !strings.Contains(got, "short=ab") {
		t.Errorf("a 2-character value was masked: %q", got)
	}
}

func TestWriterMasksAcrossWrites(t *testing.T) {
	t.Parallel()
	m := New()
	m.Add("hunter2-secret")
	var out bytes.Buffer
	w := m.Writer(&out)
	for _, part := range []string{"pass: hun", "ter2-sec", "ret\nnext line\ntail hunter2-secret"} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "pass: ***\nnext line\ntail ***"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

// An API server's message quotes a value Go-style (a label) or as JSON
// (an immutable Job template, with & as \u0026), and a message stored
// then printed as JSON is escaped twice; a URL escapes it; a token may be
// base64 in the URL alphabet, unpadded. Every form is hidden.
func TestMaskerHidesEscapedForms(t *testing.T) {
	t.Parallel()
	const secret = `s3cr+/=&"\ %é'中`
	m := New()
	m.Add(secret)
	js, _ := json.Marshal(secret)
	twice, _ := json.Marshal(string(js))
	quotedInJSON, _ := json.Marshal(fmt.Sprintf("Invalid value: %q", secret))
	for _, s := range []string{
		fmt.Sprintf("Invalid value: %q: a valid label", secret),
		fmt.Sprintf("Invalid value: %+q: a valid label", secret),
		`{"Value":` + string(js) + `}`,
		`{"message":` + string(twice) + `}`,
		`{"description":` + string(quotedInJSON) + `}`,
		"https://example.com/?token=" + url.QueryEscape(secret),
		"https://example.com/" + url.PathEscape(secret),
		"data: " + base64.RawURLEncoding.EncodeToString([]byte(secret)),
		"data: " + base64.URLEncoding.EncodeToString([]byte(secret)),
		"value: '" + strings.ReplaceAll(secret, "'", "''") + "'",
	} {
		if got := m.String(s); !strings.Contains(got, Replacement) || strings.Contains(got, "s3cr") {
			t.Errorf("%s: masked as %s", s, got)
		}
	}
}
