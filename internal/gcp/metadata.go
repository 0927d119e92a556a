package gcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// The metadata server of Compute Engine VMs and GKE nodes answers for the
// machine's service account (on GKE with Workload Identity, for the
// Google service account the pod's Kubernetes service account is bound
// to). Google's libraries look for it as cloud.google.com/go's
// metadata.OnGCE does, and so does this package, with the environment
// and the probes injected.
const (
	// MetadataHostEnv names the metadata server (host[:port]); set, it is
	// used without looking further, as Google's libraries do (and their
	// tests, to reach a double).
	MetadataHostEnv = "GCE_METADATA_HOST"
	// MetadataDetectionEnv is Google's client libraries' (gcp-metadata's)
	// override of the detection: assume-present, none, bios-only (the
	// machine's DMI product name only) or ping-only (the DNS probe only).
	MetadataDetectionEnv = "METADATA_SERVER_DETECTION"
	// metadataIP is the server's documented address, which Google's
	// libraries use rather than a name a netgo resolver may not search.
	metadataIP = "169.254.169.254"
	// metadataName resolves to metadataIP on GCE and in GKE pods; the
	// trailing dot keeps search domains out of it.
	metadataName = "metadata.google.internal."
	// probeTimeout bounds the DNS probe: elsewhere (a GitHub-hosted
	// runner) the name does not resolve, at once.
	probeTimeout = time.Second
)

// Metadata reaches the metadata server and looks for it. Its zero value is
// this machine's.
type Metadata struct {
	// Client carries the requests to the metadata server; nil is a direct
	// client (no proxy: the server is link-local) with short timeouts, as
	// Google's metadata package makes one.
	Client *http.Client
	// LookupHost resolves a name, for the DNS probe; nil is the system's
	// resolver.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// ProductName is the machine's DMI product name ("Google Compute
	// Engine" on GCE VMs and GKE nodes); nil reads
	// /sys/class/dmi/id/product_name (Linux; elsewhere, nothing).
	ProductName func() string
}

// defaultMetadataClient is Google's metadata package's: the server is
// link-local, never behind a proxy.
var defaultMetadataClient = &http.Client{
	Transport: &http.Transport{
		DialContext:     (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		IdleConnTimeout: 60 * time.Second,
	},
	Timeout: 5 * time.Second,
}

func (m Metadata) client() *http.Client {
	if m.Client != nil {
		return m.Client
	}
	return defaultMetadataClient
}

func (m Metadata) productName() string {
	if m.ProductName != nil {
		return m.ProductName()
	}
	b, _ := os.ReadFile("/sys/class/dmi/id/product_name")
	return string(b)
}

func (m Metadata) lookupHost(ctx context.Context, host string) ([]string, error) {
	if m.LookupHost != nil {
		return m.LookupHost(ctx, host)
	}
	return net.DefaultResolver.LookupHost(ctx, host)
}

// findMetadata says where the metadata server is and how that is known
// (for messages), or, with host "", why none is used. Nothing is sent to
// the server itself: GCE_METADATA_HOST or METADATA_SERVER_DETECTION
// decide, else the machine's DMI product name, else whether
// metadata.google.internal resolves to the server's address (within
// probeTimeout). cloud.google.com/go's OnGCE also sends a request to
// 169.254.169.254; that is left out, because off Google that address is
// another cloud's metadata service (a GitHub-hosted runner's is Azure's),
// or a black hole.
func findMetadata(ctx context.Context, getenv func(string) string, m Metadata) (host, how string, err error) {
	if h := strings.TrimSpace(getenv(MetadataHostEnv)); h != "" {
		return h, MetadataHostEnv + "=" + h, nil
	}
	mode := strings.TrimSpace(getenv(MetadataDetectionEnv))
	switch mode {
	case "assume-present":
		return metadataIP, MetadataDetectionEnv + "=assume-present", nil
	case "none":
		return "", "not looked for (" + MetadataDetectionEnv + "=none)", nil
	case "", "bios-only", "ping-only":
	default:
		return "", "", fmt.Errorf("%s=%q: want assume-present, none, bios-only or ping-only", MetadataDetectionEnv, mode)
	}
	if mode != "ping-only" {
		if name := strings.TrimSpace(m.productName()); name == "Google" || name == "Google Compute Engine" {
			return metadataIP, "the machine's DMI product name is " + name, nil
		}
		if mode == "bios-only" {
			return "", "not found (the machine's DMI product name is not Google's; " + MetadataDetectionEnv + "=bios-only)", nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if addrs, err := m.lookupHost(ctx, metadataName); err == nil && slices.Contains(addrs, metadataIP) {
		return metadataIP, "metadata.google.internal resolves to " + metadataIP, nil
	}
	return "", "not found (not a Google machine: metadata.google.internal does not resolve; " + MetadataHostEnv + " names the server)", nil
}

// metadataCredentials are the service account's of the metadata server at
// host, found as how says. The account's email is asked for first: it
// names the credentials in messages, and says the server answers.
func metadataCredentials(ctx context.Context, m Metadata, host, how string, scopes []string) (*Credentials, error) {
	src := &metadataTokens{ctx: ctx, client: m.client(), host: host, scopes: scopes}
	email, err := src.get(ctx, "instance/service-accounts/default/email")
	if err != nil {
		return nil, fmt.Errorf("the metadata server (%s): %w", how, err)
	}
	return &Credentials{
		TokenSource: oauth2.ReuseTokenSource(nil, src),
		Source:      fmt.Sprintf("the metadata server's service account %s (%s)", strings.TrimSpace(email), how),
	}, nil
}

// metadataTokens are the default service account's access tokens from the
// metadata server, for scopes (honoured by GKE's server and by GCE's
// within the VM's access scopes).
type metadataTokens struct {
	ctx    context.Context
	client *http.Client
	host   string
	scopes []string
}

func (t *metadataTokens) Token() (*oauth2.Token, error) {
	suffix := "instance/service-accounts/default/token"
	if len(t.scopes) > 0 {
		suffix += "?scopes=" + url.QueryEscape(strings.Join(t.scopes, ","))
	}
	body, err := t.get(t.ctx, suffix)
	if err != nil {
		return nil, err
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		TokenType   string `json:"token_type"`
	}
	if err := json.Unmarshal([]byte(body), &tok); err != nil || tok.AccessToken == "" {
		return nil, errors.New("the metadata server's answer holds no access token")
	}
	out := &oauth2.Token{AccessToken: tok.AccessToken, TokenType: tok.TokenType}
	if tok.ExpiresIn > 0 {
		out.Expiry = time.Now().Add(time.Duration(tok.ExpiresIn) * time.Second)
	}
	return out, nil
}

// get asks the metadata server for /computeMetadata/v1/<suffix>. Errors
// say the server's status and the first line of its answer (plain text:
// "Not Found", a missing scope), never a token.
func (t *metadataTokens) get(ctx context.Context, suffix string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+t.host+"/computeMetadata/v1/"+suffix, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Metadata-Flavor", "Google")
	resp, err := t.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("no answer from %s: %w", t.host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("reading the answer of %s: %w", t.host, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := resp.Status
		if line, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n"); line != "" && len(line) < 200 && !strings.HasPrefix(line, "<") {
			msg += ": " + line
		}
		if resp.StatusCode == http.StatusNotFound && strings.HasSuffix(suffix, "/email") {
			msg += " (the machine has no service account)"
		}
		return "", fmt.Errorf("%s answered %s", t.host, msg)
	}
	return string(body), nil
}
