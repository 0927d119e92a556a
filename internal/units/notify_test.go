package units

import (
	"context"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/notify"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// A Provider's Secret is what the run was given by name first, then the
// configuration's Secret of that name in the Provider's namespace (a
// SOPS-encrypted one decrypted with the decryption Secrets' keys), then
// the cluster's; one defined twice in the configuration is refused,
// naming both places.
func TestNotificationSecretLookupOrder(t *testing.T) {
	key, err := sopstest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := sopstest.Encrypt(key.Recipient, []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: sealed, namespace: flux-system}\nstringData:\n  token: from-sops\n"), formats.Yaml, sopstest.K8sSecretRegex)
	if err != nil {
		t.Fatal(err)
	}
	set := &config.Set{Values: []*config.Values{
		{Kind: "Secret", Ref: config.Ref{Namespace: "flux-system", Name: "plain"}, File: "clusters/prod/plain.yaml", Line: 1, Data: map[string]string{"token": "from-the-file"}},
		{Kind: "Secret", Ref: config.Ref{Namespace: "flux-system", Name: "given"}, File: "clusters/prod/given.yaml", Line: 1, Data: map[string]string{"token": "from-the-file"}},
		{Kind: "Secret", Ref: config.Ref{Namespace: "flux-system", Name: "sealed"}, File: "clusters/prod/sealed.enc.yaml", Line: 1, Encrypted: true, Raw: sealed},
		{Kind: "Secret", Ref: config.Ref{Namespace: "apps", Name: "elsewhere"}, File: "apps/elsewhere.yaml", Line: 1, Data: map[string]string{"token": "another-namespace"}},
		{Kind: "Secret", Ref: config.Ref{Namespace: "flux-system", Name: "twice"}, File: "a.yaml", Line: 3, Data: map[string]string{}},
		{Kind: "Secret", Ref: config.Ref{Namespace: "flux-system", Name: "twice"}, File: "b.yaml", Line: 5, Data: map[string]string{}},
	}}
	c := Config{Set: set, DecryptionKeys: map[string][]string{"sops-age": {key.Identity}},
		Cluster: func(*config.KubeConfig) (*kube.Clients, string, error) { return nil, "", nil }}
	lookup := c.notificationSecret(map[string]notify.Secret{"given": {"token": "given-to-the-run"}})
	provider := &notify.Provider{Ref: config.Ref{Namespace: "flux-system", Name: "slack"}}
	tests := []struct{ name, token, err string }{
		{"given", "given-to-the-run", ""},
		{"plain", "from-the-file", ""},
		{"sealed", "from-sops", ""},
		{"elsewhere", "", "not in the configuration's files, and there is no cluster to read it from"},
		{"twice", "", "defined more than once in the configuration (a.yaml:3, b.yaml:5)"},
	}
	for _, tt := range tests {
		data, err := lookup(context.Background(), provider, tt.name)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
		case tt.err == "" && (err != nil || data["token"] != tt.token):
			t.Errorf("%s: %v, %v; want token %q", tt.name, data, err, tt.token)
		}
	}
}
