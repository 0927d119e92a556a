package gitsource

import (
	"strings"
	"testing"
)

func TestStrategy(t *testing.T) {
	const hash = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name string
		ref  Ref
		want strategy
		err  string
	}{
		{"none is master", Ref{}, strategy{kind: "branch", ref: "refs/heads/master"}, ""},
		{"branch", Ref{Branch: "main"}, strategy{kind: "branch", ref: "refs/heads/main"}, ""},
		{"tag over branch", Ref{Branch: "main", Tag: "v1.0.0"}, strategy{kind: "tag", ref: "refs/tags/v1.0.0"}, ""},
		{"semver over tag", Ref{Tag: "v1.0.0", SemVer: ">=1.0.0"}, strategy{kind: "semver", want: ">=1.0.0"}, ""},
		{"name over semver", Ref{SemVer: ">=1.0.0", Name: "refs/pull/1/head"}, strategy{kind: "name", ref: "refs/pull/1/head"}, ""},
		{"commit over all", Ref{Name: "refs/heads/x", Tag: "v1", Commit: strings.ToUpper(hash)}, strategy{kind: "commit", want: hash}, ""},
		{"commit on a branch", Ref{Branch: "main", Commit: hash}, strategy{kind: "commit", ref: "refs/heads/main", want: hash}, ""},
		{"short commit", Ref{Commit: "0123456"}, strategy{}, "not a full SHA-1"},
		{"bad semver", Ref{SemVer: "not a range"}, strategy{}, "spec.ref.semver"},
		{"short name", Ref{Name: "main"}, strategy{}, "not a full reference name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.ref.strategy()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestRevision(t *testing.T) {
	const h = "0123456789abcdef0123456789abcdef01234567"
	for ref, want := range map[string]string{
		"refs/heads/main":         "main@sha1:" + h,
		"refs/heads/feature/x":    "feature/x@sha1:" + h,
		"refs/tags/v1.2.3":        "v1.2.3@sha1:" + h,
		"refs/pull/420/head":      "420/head@sha1:" + h, // as source-controller writes it
		"":                        "sha1:" + h,
		"refs/merge-requests/1/h": "1/h@sha1:" + h,
	} {
		if got := revision(ref, h); got != want {
			t.Errorf("revision(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestParseAuth(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Auth
		err      string
	}{
		{"env file", "# a token\nusername=git\npassword=s3cr3t-token\n", Auth{Username: "git", Password: "s3cr3t-token"}, ""},
		{"secret data", "apiVersion: v1\nkind: Secret\nmetadata: {name: git}\ndata:\n  username: Z2l0\n  password: czNjcjN0\n", Auth{Username: "git", Password: "s3cr3t"}, ""},
		{"secret stringData", "kind: Secret\nstringData:\n  bearerToken: tok\n", Auth{BearerToken: "tok"}, ""},
		{"ssh", "stringData:\n  identity: |\n    KEY\n  known_hosts: host ssh-ed25519 AAAA\n", Auth{Identity: []byte("KEY\n"), KnownHosts: []byte("host ssh-ed25519 AAAA")}, ""},
		{"unknown key", "username=a\ntoken=b\n", Auth{}, "keys token are not read"},
		{"not a secret", "kind: ConfigMap\ndata: {a: b}\n", Auth{}, "a ConfigMap, not a Secret"},
		{"bad base64", "kind: Secret\ndata:\n  password: '!!'\n", Auth{}, "data.password is not base64"},
		{"bad line", "username=a\nthe-token-itself\n", Auth{}, "line 2 is neither"},
		{"empty", "  \n", Auth{}, "empty"},
		{"half tls", "tls.crt=x\n", Auth{}, "tls.crt and tls.key go together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAuth([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "the-token-itself") {
					t.Fatalf("the error quotes the file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Username != tc.want.Username || got.Password != tc.want.Password || got.BearerToken != tc.want.BearerToken ||
				string(got.Identity) != string(tc.want.Identity) || string(got.KnownHosts) != string(tc.want.KnownHosts) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
