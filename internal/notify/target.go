package notify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// target is a Provider ready to post to: its spec with the values of the
// Secrets it names, as notification-controller reads them
// (createNotifier, extractAuthFromSecret): the secretRef's address wins
// over spec.address, its username over spec.username; token, password
// and headers come from it alone; proxySecretRef wins over the
// secretRef's proxy, which wins over spec.proxy; certSecretRef gives a CA
// and a client certificate.
type target struct {
	p                          *Provider
	address, channel, username string
	token, password            string
	headers                    map[string]string
	client                     *http.Client
	transport                  http.RoundTripper // client's, without retries
	secrets                    []string          // every value to mask
	// gitHubAPI is the job's GitHub API, for a repository of its server;
	// telegram, the Bot API.
	gitHubAPI, telegram string
}

// errJobToken is why a github Provider with no token in its Secret gets
// none: its address is not on the job's GitHub.
var errJobToken = errors.New("no token: give one in the Secret spec.secretRef names (the job's token goes only to repositories of the job's GitHub server)")

// target reads what p needs to post: its Secrets, looked up through
// n.opts.Secret, masked as soon as they are read.
func (n *Notifier) target(ctx context.Context, p *Provider) (*target, error) {
	s := p.Spec
	if s.ServiceAccountName != "" {
		return nil, errors.New("spec.serviceAccountName (workload identity) is not supported: give the credentials in the Secret spec.secretRef names")
	}
	if s.CommitStatusExpr != "" {
		return nil, errors.New("spec.commitStatusExpr (a CEL expression) is not supported")
	}
	t := &target{p: p, address: strings.TrimSpace(s.Address), channel: s.Channel, username: s.Username,
		telegram: n.opts.TelegramAPI}
	proxy := s.Proxy
	if s.SecretRef != nil {
		data, err := n.secret(ctx, p, "spec.secretRef", s.SecretRef.Name)
		if err != nil {
			return nil, err
		}
		if v, ok := data["address"]; ok {
			if len(v) > 2048 {
				return nil, fmt.Errorf("spec.secretRef %s: address exceeds 2048 bytes", s.SecretRef.Name)
			}
			t.address = strings.TrimSpace(v)
		}
		if v, ok := data["username"]; ok {
			t.username = v
		}
		t.token, t.password = strings.TrimSpace(data["token"]), data["password"]
		if v, ok := data["proxy"]; ok {
			proxy = strings.TrimSpace(v)
		}
		if h, ok := data["headers"]; ok {
			if err := yaml.Unmarshal([]byte(h), &t.headers); err != nil {
				return nil, fmt.Errorf("spec.secretRef %s: headers is not a map of header names to values", s.SecretRef.Name)
			}
		}
	}
	if s.ProxySecretRef != nil {
		data, err := n.secret(ctx, p, "spec.proxySecretRef", s.ProxySecretRef.Name)
		if err != nil {
			return nil, err
		}
		u, err := url.Parse(strings.TrimSpace(data["address"]))
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("spec.proxySecretRef %s: address is not a URL", s.ProxySecretRef.Name)
		}
		if data["username"] != "" || data["password"] != "" {
			u.User = url.UserPassword(data["username"], data["password"])
		}
		proxy = u.String()
	}
	var tlsConfig *tls.Config
	if s.CertSecretRef != nil {
		data, err := n.secret(ctx, p, "spec.certSecretRef", s.CertSecretRef.Name)
		if err != nil {
			return nil, err
		}
		if tlsConfig, err = tlsFrom(data); err != nil {
			return nil, fmt.Errorf("spec.certSecretRef %s: %w", s.CertSecretRef.Name, err)
		}
	}
	if gitHubType(s.Type) {
		if sameHost(t.address, n.opts.GitHubServer) {
			t.gitHubAPI = n.opts.GitHubAPI
		}
		if t.token == "" {
			t.token = t.password
		}
		if t.token == "" && n.opts.GitHubToken != "" && sameHost(t.address, n.opts.GitHubServer) {
			t.token = n.opts.GitHubToken
		}
		if t.token == "" {
			return nil, errJobToken
		}
	} else {
		// A webhook's URL is its credential.
		t.secrets = append(t.secrets, t.address)
	}
	t.secrets = append(t.secrets, t.token, t.password, proxy)
	for _, v := range t.headers {
		t.secrets = append(t.secrets, v)
	}
	n.mask(t.secrets)
	transport, err := n.transport(proxy, tlsConfig)
	if err != nil {
		return nil, err
	}
	t.transport = transport
	t.client = &http.Client{Transport: &retrying{next: transport, retries: n.opts.Retries, wait: n.opts.RetryWait}}
	return t, nil
}

// secret reads the Secret named name for p's field, and masks its values.
func (n *Notifier) secret(ctx context.Context, p *Provider, field, name string) (map[string]string, error) {
	if n.opts.Secret == nil {
		return nil, fmt.Errorf("%s %s: no Secret can be read here", field, name)
	}
	data, err := n.opts.Secret(ctx, p, name)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", field, name, err)
	}
	var values []string
	for k, v := range data {
		if k != "username" { // a name, masked it would hide ordinary words
			values = append(values, v)
		}
	}
	n.mask(values)
	return data, nil
}

// transport is the base transport with proxy and TLS settings.
func (n *Notifier) transport(proxy string, tlsConfig *tls.Config) (http.RoundTripper, error) {
	base := n.opts.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if proxy == "" && tlsConfig == nil {
		return base, nil
	}
	tr, ok := base.(*http.Transport)
	if !ok {
		return nil, errors.New("a proxy or certificates cannot be set on this run's HTTP transport")
	}
	tr = tr.Clone()
	if proxy != "" {
		u, err := url.Parse(proxy)
		if err != nil || u.Host == "" {
			return nil, errors.New("the proxy is not a URL")
		}
		tr.Proxy = http.ProxyURL(u)
	}
	if tlsConfig != nil {
		tr.TLSClientConfig = tlsConfig
	}
	return tr, nil
}

// tlsFrom is the TLS configuration of a certSecretRef's Secret: ca.crt
// (or caFile), and tls.crt with tls.key for a client certificate.
func tlsFrom(data map[string]string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	ca := data["ca.crt"]
	if ca == "" {
		ca = data["caFile"]
	}
	if ca != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(ca)) {
			return nil, errors.New("ca.crt holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	crt, key := data["tls.crt"], data["tls.key"]
	if (crt == "") != (key == "") {
		return nil, errors.New("tls.crt and tls.key go together")
	}
	if crt != "" {
		pair, err := tls.X509KeyPair([]byte(crt), []byte(key))
		if err != nil {
			return nil, errors.New("tls.crt and tls.key are not a certificate and its key")
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if cfg.RootCAs == nil && cfg.Certificates == nil {
		return nil, errors.New("it holds neither ca.crt nor tls.crt and tls.key")
	}
	return cfg, nil
}

// gitHubType says whether a Provider type posts to GitHub's API, where
// its address is a repository's URL (not a secret) and the job's token
// may stand in for a Secret's.
func gitHubType(typ string) bool {
	return slices.Contains([]string{"github", "githubdispatch"}, typ)
}

// sameHost says whether address is on server's host (both URLs).
func sameHost(address, server string) bool {
	a, err := url.Parse(address)
	if err != nil || a.Host == "" {
		return false
	}
	s, err := url.Parse(server)
	if err != nil || s.Host == "" {
		return false
	}
	return strings.EqualFold(a.Host, s.Host) && a.Scheme == s.Scheme
}
