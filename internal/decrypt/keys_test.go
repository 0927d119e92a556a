package decrypt

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAgeKeys(t *testing.T) {
	t.Parallel()
	k1, k2, k3 := newTestKey(t), newTestKey(t), newTestKey(t)
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{
			name: "age-keygen file",
			in:   "# created: 2024-01-01T00:00:00Z\n# public key: " + k1.recipient + "\n" + k1.identity + "\n",
			want: []string{k1.identity},
		},
		{
			name: "several keys, blank lines, CRLF, indentation",
			in:   "\r\n  " + k1.identity + "\r\n\n# comment\n\t" + k2.identity + "\n",
			want: []string{k1.identity, k2.identity},
		},
		{
			name: "SOPS_AGE_KEY with several keys on one line",
			in:   k1.identity + " " + k2.identity + "\t" + k3.identity,
			want: []string{k1.identity, k2.identity, k3.identity},
		},
		{name: "empty", in: "", wantErr: "no AGE-SECRET-KEY-1 identity found"},
		{name: "comments only", in: "# public key: " + k1.recipient + "\n", wantErr: "no AGE-SECRET-KEY-1 identity found"},
		{name: "public key instead of secret", in: k1.recipient, wantErr: "line 1: not an age secret key"},
		{
			name:    "corrupted key is not echoed",
			in:      "# ok\n" + k1.identity[:len(k1.identity)-4] + "QQQQ\n",
			wantErr: "line 2: malformed AGE-SECRET-KEY-1 identity",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseAgeKeys([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "AGE-SECRET-KEY-1"+k1.identity[16:20]) {
					t.Errorf("error echoes key material: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("keys mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRejectsBadIdentity(t *testing.T) {
	t.Parallel()
	k := newTestKey(t)
	if _, err := New(Options{Keys: []string{" " + k.identity + "\n"}}); err != nil {
		t.Errorf("surrounding space: %v", err)
	}
	_, err := New(Options{Keys: []string{k.identity, "AGE-SECRET-KEY-1NOTAKEY"}})
	if err == nil || !strings.Contains(err.Error(), "age identity 2") || strings.Contains(err.Error(), "NOTAKEY") {
		t.Fatalf("err = %v", err)
	}
}
