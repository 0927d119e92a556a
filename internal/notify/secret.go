package notify

import (
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gitsource"
)

// Secret stands in for a Secret a Provider names (spec.secretRef,
// proxySecretRef, certSecretRef): its keys and values (address, token,
// username, password, headers, proxy, ca.crt, tls.crt, tls.key).
type Secret map[string]string

// ParseSecret reads a Secret manifest (data, base64-encoded, or
// stringData) or KEY=VALUE lines, as --git-secret files are read.
func ParseSecret(data []byte) (Secret, error) {
	values, err := gitsource.SecretValues(data)
	return Secret(values), err
}

// Secrets are the values to mask: all but a username, which would hide
// ordinary words.
func (s Secret) Secrets() []string {
	var out []string
	for k, v := range s {
		if k != "username" {
			out = append(out, v)
		}
	}
	return out
}
