package gitsource

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"sigs.k8s.io/yaml"
)

// Auth is what a GitRepository's spec.secretRef Secret holds, as
// source-controller reads it: username and password (basic auth: a
// hosting service's token is the password) or bearerToken for HTTPS,
// identity and known_hosts (and the identity's password) for SSH;
// ca.crt (or caFile) to trust, tls.crt and tls.key for mutual TLS.
type Auth struct {
	Username, Password string
	BearerToken        string
	Identity           []byte
	KnownHosts         []byte
	CA                 []byte
	TLSCert, TLSKey    []byte
}

// Secrets are the values of a that must never be shown, for a mask.
func (a Auth) Secrets() []string {
	var out []string
	for _, v := range []string{a.Password, a.BearerToken, string(a.Identity), string(a.TLSKey)} {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		out = append(out, v)
		if strings.Contains(v, "\n") { // a key block: each line too, as logs may wrap
			for _, l := range strings.Split(v, "\n") {
				if l = strings.TrimSpace(l); len(l) >= 8 && !strings.HasPrefix(l, "-----") {
					out = append(out, l)
				}
			}
		}
	}
	return out
}

// ParseAuth reads a Secret standing in for a GitRepository's
// spec.secretRef: a Kubernetes Secret manifest (data, base64-encoded, or
// stringData) or an env file of KEY=VALUE lines (username=...,
// password=...). Keys it does not know are refused by name.
func ParseAuth(data []byte) (Auth, error) {
	values, err := secretValues(data)
	if err != nil {
		return Auth{}, err
	}
	return AuthFromValues(values)
}

// AuthFromValues reads a Secret's data (decoded) as source-controller
// reads a GitRepository's spec.secretRef: the same keys as ParseAuth.
func AuthFromValues(values map[string]string) (Auth, error) {
	var a Auth
	var unknown []string
	for k, v := range values {
		switch k {
		case "username":
			a.Username = v
		case "password":
			a.Password = v
		case "bearerToken":
			a.BearerToken = v
		case "identity":
			a.Identity = []byte(v)
		case "known_hosts":
			a.KnownHosts = []byte(v)
		case "ca.crt":
			a.CA = []byte(v)
		case "caFile":
			if a.CA == nil { // ca.crt wins, as in source-controller
				a.CA = []byte(v)
			}
		case "tls.crt":
			a.TLSCert = []byte(v)
		case "tls.key":
			a.TLSKey = []byte(v)
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return a, fmt.Errorf("keys %s are not read: a Git Secret holds username and password, bearerToken, identity and known_hosts (and password), ca.crt, tls.crt and tls.key", strings.Join(unknown, ", "))
	}
	if (a.TLSCert == nil) != (a.TLSKey == nil) {
		return a, errors.New("tls.crt and tls.key go together")
	}
	if a.BearerToken != "" && (a.Username != "" || a.Password != "") && a.Identity == nil {
		return a, errors.New("bearerToken and username/password are two ways to authenticate: give one")
	}
	return a, nil
}

// SecretValues reads what stands in for a Secret: a Secret manifest's
// data (base64) and stringData, else KEY=VALUE lines. Errors never quote
// a value.
func SecretValues(data []byte) (map[string]string, error) { return secretValues(data) }

// secretValues reads a Secret manifest's data and stringData, else
// KEY=VALUE lines.
func secretValues(data []byte) (map[string]string, error) {
	var secret struct {
		Kind       string            `json:"kind"`
		Data       map[string]string `json:"data"`
		StringData map[string]string `json:"stringData"`
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("empty")
	}
	if err := yaml.Unmarshal(data, &secret); err == nil && (secret.Kind != "" || secret.Data != nil || secret.StringData != nil) {
		if secret.Kind != "" && secret.Kind != "Secret" {
			return nil, fmt.Errorf("a %s, not a Secret", secret.Kind)
		}
		out := map[string]string{}
		for k, v := range secret.Data {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return nil, fmt.Errorf("data.%s is not base64 (put plain values under stringData)", k)
			}
			out[k] = string(b)
		}
		for k, v := range secret.StringData {
			out[k] = v
		}
		return out, nil
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			// The line is not quoted: it may be a secret.
			return nil, fmt.Errorf("line %d is neither KEY=VALUE nor part of a Secret manifest", n)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// method is the go-git authentication for rawURL: none without a
// Secret; basic or bearer for HTTP(S); a key for SSH, checked against
// known_hosts (written into tmp).
func (a *Auth) method(rawURL, tmp string) (transport.AuthMethod, error) {
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil {
		return nil, fmt.Errorf("spec.url is not a Git URL: %w", err)
	}
	switch ep.Protocol {
	case "http", "https":
		if ep.Protocol == "http" && a != nil && (a.Username != "" || a.Password != "" || a.BearerToken != "") && !loopback(ep.Host) {
			return nil, errors.New("spec.url is http://: credentials are never sent in the clear, use https://")
		}
		switch {
		case a == nil:
			return nil, nil
		case a.BearerToken != "":
			return &githttp.TokenAuth{Token: a.BearerToken}, nil
		case a.Username != "" || a.Password != "":
			return &githttp.BasicAuth{Username: a.Username, Password: a.Password}, nil
		}
		return nil, nil
	case "ssh":
		if a == nil || len(a.Identity) == 0 || len(a.KnownHosts) == 0 {
			return nil, errors.New("an SSH URL needs a Secret with identity and known_hosts (spec.secretRef)")
		}
		user := ep.User
		if user == "" {
			user = "git"
		}
		keys, err := gitssh.NewPublicKeys(user, a.Identity, a.Password)
		if err != nil {
			return nil, fmt.Errorf("the Secret's identity: %w", err)
		}
		file := filepath.Join(tmp, "known_hosts")
		if err := os.WriteFile(file, a.KnownHosts, 0o600); err != nil {
			return nil, err
		}
		if keys.HostKeyCallback, err = gitssh.NewKnownHostsCallback(file); err != nil {
			return nil, fmt.Errorf("the Secret's known_hosts: %w", err)
		}
		return keys, nil
	}
	return nil, CheckURL(rawURL)
}

// loopback says whether host is this machine (a test's or a port
// forward's server), where plain HTTP carries credentials nowhere.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
