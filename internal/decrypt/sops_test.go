package decrypt

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
)

func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		data      string
		guess     formats.Format
		want      formats.Format
		encrypted bool
	}{
		{name: "plain yaml", data: "a: b\n", guess: formats.Yaml},
		{name: "plain env", data: "A=b\n", guess: formats.Dotenv},
		{name: "yaml", data: "a: ENC[x]\nsops:\n    mac: ENC[x]\n", guess: formats.Yaml, want: formats.Yaml, encrypted: true},
		{name: "dotenv", data: "A=ENC[x]\nsops_mac=ENC[x]\n", guess: formats.Dotenv, want: formats.Dotenv, encrypted: true},
		{name: "binary envelope", data: `{"data": "ENC[x]", "sops": {"mac": "ENC[x]"}}`, guess: formats.Binary, want: formats.Binary, encrypted: true},
		{name: "yaml content, unknown name", data: "sops:\n    mac: ENC[x]\n", guess: formats.Binary, want: formats.Yaml, encrypted: true},
		{name: "ini", data: "[sops]\nmac = ENC[x]\n", guess: formats.Ini, want: formats.Ini, encrypted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := detect([]byte(tt.data), tt.guess)
			if ok != tt.encrypted || (ok && got != tt.want) {
				t.Errorf("detect = %v, %v; want %v, %v", formatNames[got], ok, formatNames[tt.want], tt.encrypted)
			}
		})
	}
}

func TestFormatFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		unknown formats.Format
		want    formats.Format
	}{
		{"a.yaml", formats.Binary, formats.Yaml},
		{"a.yml", formats.Binary, formats.Yaml},
		{"a.json", formats.Binary, formats.Json},
		{"a.env", formats.Binary, formats.Dotenv},
		{"a.ini", formats.Binary, formats.Ini},
		{".dockerconfigjson", formats.Binary, formats.Json},
		{"tls.key", formats.Binary, formats.Binary},
		{"secrets.txt", formats.Dotenv, formats.Dotenv},
	}
	for _, tt := range tests {
		if got := formatFor(tt.name, tt.unknown); got != tt.want {
			t.Errorf("formatFor(%q) = %s, want %s", tt.name, formatNames[got], formatNames[tt.want])
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Could not decrypt value: Input string hunter2\nline2 does not match sops' data format", "Could not decrypt value: Input string <redacted> does not match sops' data format"},
		{"invalid dotenv input line: PASSWORD hunter2", "invalid dotenv input line: <redacted>"},
		{"Could not convert hunter2 to bytes: x", "Could not convert <redacted> to bytes: x"},
		{"Error encoding value hunter2: bad", "Error encoding value <redacted>"},
		{"Could not decrypt with AES_GCM: cipher: message authentication failed", "Could not decrypt with AES_GCM: cipher: message authentication failed"},
	}
	for _, tt := range tests {
		if got := redact(errors.New(tt.in)); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A panic inside sops becomes an error that does not quote the panic value.
func TestSafelyRecoversPanics(t *testing.T) {
	t.Parallel()
	out, err := safely(formats.Yaml, func() ([]byte, error) { panic("hunter2") })
	if !errors.Is(err, ErrMalformed) || out != nil {
		t.Fatalf("safely = %q, %v; want ErrMalformed", out, err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error quotes the panic value: %v", err)
	}
}

// Hostile documents fail cleanly in every format.
func TestDecryptDataHostileInput(t *testing.T) {
	t.Parallel()
	d, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	inputs := [][]byte{
		[]byte(`{"data": {"nested": "ENC[x]"}, "sops": {"mac": "ENC[x]", "lastmodified": "x", "age": [{"recipient": "age1x", "enc": "x"}]}}`),
		[]byte(`{"sops": []}`),
		[]byte("sops:\n    mac: ENC[\n"),
		[]byte("\x00\xff"),
	}
	for _, in := range inputs {
		for _, f := range []formats.Format{formats.Binary, formats.Json, formats.Yaml, formats.Dotenv, formats.Ini} {
			if _, err := d.decryptData(context.Background(), in, f, true); err == nil {
				t.Errorf("decryptData(%q, %s) succeeded", in, formatNames[f])
			}
		}
	}
}
