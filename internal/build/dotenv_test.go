package build

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDotenv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		content string
		want    map[string]string
		wantErr string // after "<file>:"
	}{
		{
			name: "forms",
			content: "\ufeff# settings\n\nENV=prod\nexport REGION = eu-west-1 \nEMPTY=\nURL=https://x.example.com/?a=b # comment\n" +
				"SINGLE='it is ${literal} \\n'\nDOUBLE=\"say \\\"hi\\\"\\nbye\" # comment\nHASH=a#b\r\nENV=override\n",
			want: map[string]string{
				"ENV": "override", "REGION": "eu-west-1", "EMPTY": "", "URL": "https://x.example.com/?a=b",
				"SINGLE": `it is ${literal} \n`, "DOUBLE": "say \"hi\"\nbye", "HASH": "a#b",
			},
		},
		{name: "empty file", content: "", want: map[string]string{}},
		{name: "no equals", content: "ENV=prod\nJUSTAKEY\n", wantErr: `2: expected KEY=VALUE, got a line without '='`},
		{name: "bad name", content: "\n\nMY-VAR=1\n", wantErr: `3: variable name "MY-VAR" is invalid`},
		{name: "unterminated quote", content: "A='open\n", wantErr: "1: A: missing closing '"},
		{name: "text after quote", content: "A=\"x\" y\n", wantErr: `1: A: unexpected "y" after the closing quote`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "vars.env")
			writeFile(t, path, tc.content)
			got, err := ParseDotenv(path)
			if tc.wantErr != "" {
				wantErr(t, err, path+":"+tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("variables mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDotenvMissingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "missing.env")
	_, err := ParseDotenv(path)
	wantErr(t, err, path)
}

func TestParseKeyValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, k, v string
		wantErr  string
	}{
		{in: "ENV=prod", k: "ENV", v: "prod"},
		{in: "ENV=", k: "ENV", v: ""},
		{in: "QUERY=a=b", k: "QUERY", v: "a=b"},
		{in: "_X1='quoted'", k: "_X1", v: "'quoted'"},
		{in: "ENV", wantErr: `expected KEY=VALUE, got 3 character(s) without '='`},
		{in: "=x", wantErr: `variable name "" is invalid`},
		{in: "1X=x", wantErr: `variable name "1X" is invalid`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			k, v, err := ParseKeyValue(tc.in)
			if tc.wantErr != "" {
				wantErr(t, err, tc.wantErr)
				return
			}
			if err != nil || k != tc.k || v != tc.v {
				t.Fatalf("got %q, %q, %v; want %q, %q", k, v, err, tc.k, tc.v)
			}
		})
	}
}
