package gcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"golang.org/x/oauth2"
	"google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// ContainerEndpointEnv is gcloud's override of GKE's API endpoint (a
// Private Service Connect endpoint, say); it is honoured here too.
const ContainerEndpointEnv = "CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER"

// gkeScopes are what gke-gcloud-auth-plugin asks for: GKE's API server
// takes a Google access token with them as the principal's identity.
var gkeScopes = []string{CloudPlatformScope, "https://www.googleapis.com/auth/userinfo.email"}

// clusterName is a GKE cluster's full name.
var clusterName = regexp.MustCompile(`^projects/[^/]+/locations/[^/]+/clusters/[^/]+$`)

// CheckClusterName says what is wrong with a GKE cluster's name, if
// anything.
func CheckClusterName(name string) error {
	if !clusterName.MatchString(name) {
		return fmt.Errorf("%q: want projects/PROJECT/locations/LOCATION/clusters/NAME", name)
	}
	return nil
}

// GKEOptions say which cluster, and how to reach it.
type GKEOptions struct {
	Options
	// Cluster is projects/PROJECT/locations/LOCATION/clusters/NAME.
	Cluster string
	// Mask, if set, is called with every access token before it is used.
	Mask func(token string)
}

// GKEConfig returns a client configuration for a GKE cluster without a
// kubeconfig or gke-gcloud-auth-plugin: its endpoint and CA from GKE's
// clusters.get, and bearer tokens from Google's application default
// credentials (TokenSource: as google-github-actions/auth sets them up
// with Workload Identity Federation, or, on a self-hosted runner on a GCE
// VM or in a GKE pod, the metadata server's service account), which GKE
// takes as gke-gcloud-auth-plugin's. ctx bounds
// every later token refresh.
func GKEConfig(ctx context.Context, opts GKEOptions) (*rest.Config, error) {
	if err := CheckClusterName(opts.Cluster); err != nil {
		return nil, fmt.Errorf("GKE cluster %w", err)
	}
	creds, err := TokenSource(ctx, opts.Options, gkeScopes...)
	if err != nil {
		return nil, fmt.Errorf("GKE cluster %s: %w", opts.Cluster, err)
	}
	var ts oauth2.TokenSource = creds
	if opts.Mask != nil {
		ts = maskedTokens{creds, opts.Mask}
	}
	ts = oauth2.ReuseTokenSource(nil, ts)
	// The token first: Google's credential code flattens its errors into
	// text, which the API call's error would bury.
	if _, err := ts.Token(); err != nil {
		return nil, fmt.Errorf("GKE cluster %s: no token from %s: %s", opts.Cluster, creds.Source, TokenError(err))
	}
	c, err := getCluster(ctx, opts, ts)
	if err != nil {
		return nil, fmt.Errorf("GKE cluster %s: clusters.get: %w", opts.Cluster, err)
	}
	if c.Endpoint == "" || c.MasterAuth == nil || c.MasterAuth.ClusterCaCertificate == "" {
		return nil, fmt.Errorf("GKE cluster %s has no endpoint or CA yet (status %s)", opts.Cluster, c.Status)
	}
	ca, err := base64.StdEncoding.DecodeString(c.MasterAuth.ClusterCaCertificate)
	if err != nil {
		return nil, fmt.Errorf("GKE cluster %s: the CA certificate is not base64: %w", opts.Cluster, err)
	}
	host := c.Endpoint
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	return &rest.Config{
		Host:            host,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		WrapTransport:   transport.TokenSourceWrapTransport(ts),
	}, nil
}

// getCluster calls clusters.get with the token source's tokens, through
// opts.HTTPClient's transport.
func getCluster(ctx context.Context, opts GKEOptions, ts oauth2.TokenSource) (*container.Cluster, error) {
	base := opts.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	co := []option.ClientOption{option.WithHTTPClient(&http.Client{
		Transport: &oauth2.Transport{Source: ts, Base: base.Transport},
		Timeout:   base.Timeout,
	})}
	if opts.Getenv != nil {
		if o := strings.TrimSpace(opts.Getenv(ContainerEndpointEnv)); o != "" {
			co = append(co, option.WithEndpoint(strings.TrimSuffix(o, "/")+"/"))
		}
	}
	svc, err := container.NewService(ctx, co...)
	if err != nil {
		return nil, err
	}
	c, err := svc.Projects.Locations.Clusters.Get(opts.Cluster).Context(ctx).Do()
	if err != nil {
		return nil, googleError(err)
	}
	return c, nil
}

// googleError is Google's answer, by HTTP status, status name and
// message ("Google 403 PERMISSION_DENIED: <message>": they name the
// resource and the permission, never a token), or err as it is.
func googleError(err error) error {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return err
	}
	var body struct {
		Error struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	status := ""
	if json.Unmarshal([]byte(ge.Body), &body) == nil && body.Error.Status != "" {
		status = " " + body.Error.Status
	}
	if ge.Message == "" {
		return fmt.Errorf("Google %d%s", ge.Code, status)
	}
	return fmt.Errorf("Google %d%s: %s", ge.Code, status, ge.Message)
}

// maskedTokens hands every token to mask before it is used.
type maskedTokens struct {
	src  oauth2.TokenSource
	mask func(string)
}

func (m maskedTokens) Token() (*oauth2.Token, error) {
	t, err := m.src.Token()
	if err == nil {
		m.mask(t.AccessToken)
	}
	return t, err
}

// TokenError says why no token came from Google's credential code: the
// OAuth error a token endpoint answered ("invalid_grant: <description>";
// they name audiences and accounts, never the credentials), else the
// message. Google's external account code flattens the endpoint's answer
// into its message, so it is looked for there too.
func TokenError(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			return strings.TrimSuffix(re.ErrorCode+": "+re.ErrorDescription, ": ")
		}
		if re.Response != nil {
			return "HTTP " + re.Response.Status
		}
	}
	msg := strings.TrimSpace(err.Error())
	if i := strings.Index(msg, `{"error"`); i >= 0 {
		var body struct {
			Error            string `json:"error"`
			ErrorDescription string `json:"error_description"`
		}
		if json.NewDecoder(strings.NewReader(msg[i:])).Decode(&body) == nil && body.Error != "" {
			return strings.TrimSuffix(body.Error+": "+body.ErrorDescription, ": ")
		}
	}
	return msg
}
