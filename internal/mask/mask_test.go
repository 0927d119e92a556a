package mask

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

func TestMaskerHidesValuesAndBase64(t *testing.T) {
	m := New()
	added := m.Add("s3cr3t-value", "ab", "multi\nline-secret")
	if len(added) != 5 { // value, its base64, "multi", "line-secret", multi-line base64
		t.Errorf("added %q", added)
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
