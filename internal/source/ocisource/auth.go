package ocisource

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"sigs.k8s.io/yaml"
)

// DockerConfigKey is the key of a Secret of type
// kubernetes.io/dockerconfigjson: what an OCIRepository's spec.secretRef
// names (flux create secret oci writes one).
const DockerConfigKey = ".dockerconfigjson"

// Auth is the registry credentials a dockerconfigjson Secret holds, by
// registry host. The zero Auth is anonymous.
type Auth struct {
	registries map[string]authn.AuthConfig
	// secrets are the values never to show.
	secrets []string
}

// Hosts are the registries a holds credentials for, sorted.
func (a Auth) Hosts() []string {
	var out []string
	for h := range a.registries {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// Secrets are the values of a that must never be shown, for a mask:
// passwords, tokens, and their base64 forms as the config holds them.
func (a Auth) Secrets() []string { return slices.Clone(a.secrets) }

// Merge returns a's registries and b's, a's first where both name a
// host: several pull secrets of one account, read in their order.
func (a Auth) Merge(b Auth) Auth {
	out := Auth{registries: map[string]authn.AuthConfig{}, secrets: slices.Concat(a.secrets, b.secrets)}
	for h, c := range b.registries {
		out.registries[h] = c
	}
	for h, c := range a.registries {
		out.registries[h] = c
	}
	return out
}

// ParseAuth reads what stands in for an OCIRepository's spec.secretRef:
// a Docker config.json ({"auths": {"host": {"auth": ...}}}, as docker
// login or flux create secret oci --export writes it) or a Secret
// manifest of type kubernetes.io/dockerconfigjson holding one under
// .dockerconfigjson (data, base64-encoded, or stringData). Credential
// stores and helpers are refused by name: the config must hold the
// credentials.
func ParseAuth(data []byte) (Auth, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return Auth{}, errors.New("empty")
	}
	var a Auth
	var secret struct {
		Kind       string            `json:"kind"`
		Type       string            `json:"type"`
		Data       map[string]string `json:"data"`
		StringData map[string]string `json:"stringData"`
	}
	if err := yaml.Unmarshal(trimmed, &secret); err != nil {
		// The error may quote the file: it is not repeated.
		return Auth{}, errors.New("neither a Docker config.json nor a Secret manifest")
	}
	if secret.Kind != "" || secret.Data != nil || secret.StringData != nil {
		if secret.Kind != "Secret" {
			return Auth{}, fmt.Errorf("a %q, not a Docker config.json nor a Secret", secret.Kind)
		}
		if secret.Type != "" && secret.Type != "kubernetes.io/dockerconfigjson" {
			return Auth{}, fmt.Errorf("a Secret of type %s: an OCIRepository's Secret is of type kubernetes.io/dockerconfigjson", secret.Type)
		}
		var unknown []string
		for k := range secret.Data {
			if k != DockerConfigKey {
				unknown = append(unknown, "data."+k)
			}
		}
		for k := range secret.StringData {
			if k != DockerConfigKey {
				unknown = append(unknown, "stringData."+k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return Auth{}, fmt.Errorf("keys %s are not read: the Secret holds %s alone", strings.Join(unknown, ", "), DockerConfigKey)
		}
		switch v, ok := secret.StringData[DockerConfigKey]; {
		case ok:
			trimmed = []byte(v)
		case secret.Data[DockerConfigKey] != "":
			enc := secret.Data[DockerConfigKey]
			a.secrets = append(a.secrets, enc)
			b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
			if err != nil {
				return a, fmt.Errorf("data.%s is not base64 (put the plain config under stringData)", DockerConfigKey)
			}
			trimmed = b
		default:
			return Auth{}, fmt.Errorf("the Secret has no %s (data or stringData)", DockerConfigKey)
		}
	}
	return parseConfig(a, trimmed)
}

// AuthFromValues reads a Secret's data (decoded) as source-controller
// reads an OCIRepository's spec.secretRef: a docker config under
// .dockerconfigjson.
func AuthFromValues(values map[string]string) (Auth, error) {
	var unknown []string
	for k := range values {
		if k != DockerConfigKey {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return Auth{}, fmt.Errorf("keys %s are not read: the Secret holds %s alone", strings.Join(unknown, ", "), DockerConfigKey)
	}
	v, ok := values[DockerConfigKey]
	if !ok {
		return Auth{}, fmt.Errorf("the Secret has no %s", DockerConfigKey)
	}
	return parseConfig(Auth{}, bytes.TrimSpace([]byte(v)))
}

// parseConfig reads a docker config's auths into a.
func parseConfig(a Auth, trimmed []byte) (Auth, error) {
	var cfg struct {
		Auths       map[string]authn.AuthConfig `json:"auths"`
		CredsStore  string                      `json:"credsStore"`
		CredHelpers map[string]string           `json:"credHelpers"`
	}
	if err := json.Unmarshal(trimmed, &cfg); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return a, fmt.Errorf("%s is not JSON (at byte %d)", DockerConfigKey, se.Offset)
		}
		// An auth that is not base64 of user:password, a wrong type:
		// the message names no value.
		return a, fmt.Errorf("%s is not a Docker config: an entry of auths does not read (auth is base64 of username:password)", DockerConfigKey)
	}
	a.registries = map[string]authn.AuthConfig{}
	for host, c := range cfg.Auths {
		for _, v := range []string{c.Password, c.Auth, c.IdentityToken, c.RegistryToken} {
			if v != "" {
				a.secrets = append(a.secrets, v)
			}
		}
		if c.Username != "" && c.Password != "" {
			a.secrets = append(a.secrets, base64.StdEncoding.EncodeToString([]byte(c.Username+":"+c.Password)))
		}
		if c.Username == "" && c.Password == "" && c.IdentityToken == "" && c.RegistryToken == "" {
			return a, fmt.Errorf("auths entry %s holds no credentials (a credential store keeps them: write a config of its own, e.g. flux create secret oci --export)", host)
		}
		a.registries[registryHost(host)] = c
	}
	if len(a.registries) == 0 {
		why := "no auths"
		if cfg.CredsStore != "" || len(cfg.CredHelpers) > 0 {
			why = "no auths: credsStore and credHelpers are not read (a credential store keeps the credentials: write a config of its own, e.g. flux create secret oci --export)"
		}
		return a, errors.New(why)
	}
	return a, nil
}

// BasicAuth is a username and password for registry host alone (a
// cloud provider's registry login).
func BasicAuth(host, username, password string) Auth {
	return Auth{
		registries: map[string]authn.AuthConfig{registryHost(host): {Username: username, Password: password}},
		secrets:    []string{password, base64.StdEncoding.EncodeToString([]byte(username + ":" + password))},
	}
}

// registryHost is a config.json's auths key as a registry host: Docker
// writes "https://index.docker.io/v1/" for Docker Hub, others
// "host[:port]", sometimes with a scheme or path.
func registryHost(key string) string {
	key = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(key), "https://"), "http://")
	key, _, _ = strings.Cut(key, "/")
	key = strings.ToLower(key)
	if key == "docker.io" || key == "registry-1.docker.io" {
		return "index.docker.io"
	}
	return key
}

// Resolve is a as an authn.Keychain: the credentials for the resource's
// registry, anonymous for one it does not name.
func (a Auth) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if c, ok := a.registries[registryHost(r.RegistryStr())]; ok {
		return authn.FromConfig(c), nil
	}
	return authn.Anonymous, nil
}

var _ authn.Keychain = Auth{}
