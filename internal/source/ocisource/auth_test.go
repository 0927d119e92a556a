package ocisource

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

func TestParseAuth(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	config := `{"auths": {"ghcr.io": {"auth": "` + b64("flux:ghp_secret1") + `"}, "https://index.docker.io/v1/": {"username": "me", "password": "hub-secret2"}}}`
	for _, tc := range []struct {
		name    string
		data    string
		hosts   []string
		secrets []string
		err     string
	}{
		{"config.json", config, []string{"ghcr.io", "index.docker.io"}, []string{"ghp_secret1", b64("flux:ghp_secret1"), "hub-secret2", b64("me:hub-secret2")}, ""},
		{"Secret, data", "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\nmetadata: {name: regcred}\ndata:\n  .dockerconfigjson: " + b64(config) + "\n",
			[]string{"ghcr.io", "index.docker.io"}, []string{b64(config), "ghp_secret1", "hub-secret2"}, ""},
		{"Secret, stringData", "kind: Secret\nstringData:\n  .dockerconfigjson: '" + config + "'\n", []string{"ghcr.io", "index.docker.io"}, []string{"ghp_secret1"}, ""},
		{"Secret as JSON", `{"kind": "Secret", "stringData": {".dockerconfigjson": "{\"auths\": {\"r.example.com:5000\": {\"registrytoken\": \"tok-3\"}}}"}}`, []string{"r.example.com:5000"}, []string{"tok-3"}, ""},
		{"an Opaque Secret", "kind: Secret\ntype: Opaque\nstringData: {username: a, password: b}\n", nil, nil, "a Secret of type Opaque"},
		{"other keys", "kind: Secret\nstringData:\n  .dockerconfigjson: '" + config + "'\n  password: x\n", nil, nil, "keys stringData.password are not read"},
		{"no config", "kind: Secret\ndata: {}\n", nil, nil, "the Secret has no .dockerconfigjson"},
		{"not base64", "kind: Secret\ndata:\n  .dockerconfigjson: '%%%'\n", nil, nil, "is not base64"},
		{"a ConfigMap", "kind: ConfigMap\ndata: {a: b}\n", nil, nil, `a "ConfigMap", not`},
		{"credsStore", `{"auths": {}, "credsStore": "desktop"}`, nil, nil, "credsStore and credHelpers are not read"},
		{"an empty entry", `{"auths": {"ghcr.io": {}}}`, nil, nil, "auths entry ghcr.io holds no credentials"},
		{"bad auth", `{"auths": {"ghcr.io": {"auth": "bm9jb2xvbg=="}}}`, nil, nil, "an entry of auths does not read"},
		{"pasted password", "hunter2-pasted\n", nil, nil, "neither a Docker config.json nor a Secret manifest"},
		{"empty", "  \n", nil, nil, "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseAuth([]byte(tc.data))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				for _, s := range []string{"hunter2", "nocolon", "ghp_secret1"} {
					if strings.Contains(err.Error(), s) {
						t.Errorf("the error quotes the file: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Hosts(), tc.hosts) {
				t.Errorf("hosts %v, want %v", a.Hosts(), tc.hosts)
			}
			for _, s := range tc.secrets {
				if !slices.Contains(a.Secrets(), s) {
					t.Errorf("secrets %q lack %q", a.Secrets(), s)
				}
			}
		})
	}
}

// The credentials go to the registry they name, Docker Hub's under any
// of its names; others get none.
func TestAuthResolve(t *testing.T) {
	a, err := ParseAuth([]byte(`{"auths": {"https://index.docker.io/v1/": {"username": "me", "password": "p1"}, "GHCR.io": {"username": "flux", "password": "p2"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{"docker.io/acme/app": "me", "ghcr.io/acme/app": "flux", "quay.io/acme/app": ""} {
		repo, err := name.NewRepository(ref)
		if err != nil {
			t.Fatal(err)
		}
		auth, err := a.Resolve(repo)
		if err != nil {
			t.Fatal(err)
		}
		got, err := authn.Authorization(t.Context(), auth)
		if err != nil || got.Username != want {
			t.Errorf("%s: %+v %v; want user %q", ref, got, err, want)
		}
	}
}
