package eks_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/kustomize-deploy/kustomize-deploy/internal/eks"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
)

const (
	userID     = "AKIAEKSDEPLOYER00001"
	userSecret = "eks-deployer-secret-access-key"
	caPEM      = "-----BEGIN CERTIFICATE-----\nMIIBdummy\n-----END CERTIFICATE-----\n"
)

func setup(t *testing.T) *kmstest.Server {
	t.Helper()
	srv := kmstest.New(t)
	srv.AddUser(userID, userSecret)
	srv.Setenv(t)
	kmstest.SetCredentials(t, userID, userSecret)
	srv.AddCluster("prod", "https://prod.eks.example:443", []byte(caPEM))
	return srv
}

// capture records the request a transport would send.
type capture struct{ req *http.Request }

func (c *capture) RoundTrip(r *http.Request) (*http.Response, error) {
	c.req = r
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Header: http.Header{}, Request: r}, nil
}

// bearer is the token cfg's transport sends.
func bearer(t *testing.T, wrap func(http.RoundTripper) http.RoundTripper) string {
	t.Helper()
	c := &capture{}
	req, _ := http.NewRequest("GET", "https://prod.eks.example/api", nil)
	if _, err := wrap(c).RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	tok, ok := strings.CutPrefix(c.req.Header.Get("Authorization"), "Bearer ")
	if !ok {
		t.Fatalf("no bearer token: %v", c.req.Header)
	}
	return tok
}

// presignedURL decodes a token into the STS URL it carries.
func presignedURL(t *testing.T, token string) *url.URL {
	t.Helper()
	enc, ok := strings.CutPrefix(token, eks.TokenPrefix)
	if !ok {
		t.Fatalf("token %q lacks %s", token, eks.TokenPrefix)
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// callerIdentity sends the token's request as the cluster's authenticator
// does, for the cluster named clusterID.
func callerIdentity(t *testing.T, u *url.URL, clusterID string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u.String(), nil)
	req.Header.Set(eks.ClusterIDHeader, clusterID)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestConfigFromDescribeCluster(t *testing.T) {
	srv := setup(t)
	cfg, err := eks.Config(context.Background(), eks.Options{Cluster: "prod", Region: kmstest.Region})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://prod.eks.example:443" || string(cfg.CAData) != caPEM {
		t.Errorf("host %q, CA %q", cfg.Host, cfg.CAData)
	}
	if n := srv.Count("EKS.DescribeCluster"); n != 1 {
		t.Errorf("%d DescribeCluster requests", n)
	}

	u := presignedURL(t, bearer(t, cfg.WrapTransport))
	q := u.Query()
	if q.Get("Action") != "GetCallerIdentity" || q.Get("X-Amz-Expires") != "60" || !strings.Contains(q.Get("X-Amz-SignedHeaders"), eks.ClusterIDHeader) {
		t.Errorf("presigned URL %s", u)
	}
	if u.Host != strings.TrimPrefix(srv.URL(), "http://") {
		t.Errorf("the token is for STS at %s, want the test STS %s", u.Host, srv.URL())
	}
	if strings.Contains(u.String(), userSecret) {
		t.Error("the token holds the secret access key")
	}

	status, body := callerIdentity(t, u, "prod")
	var out struct {
		GetCallerIdentityResponse struct{ GetCallerIdentityResult struct{ Arn string } }
	}
	_ = json.Unmarshal([]byte(body), &out)
	if status != 200 || out.GetCallerIdentityResponse.GetCallerIdentityResult.Arn != "arn:aws:iam::111122223333:user/"+userID {
		t.Errorf("GetCallerIdentity: %d %s", status, body)
	}
}

// The cluster's name is signed into the token: replayed against another
// cluster's authenticator, STS refuses it.
func TestTokenIsBoundToItsCluster(t *testing.T) {
	setup(t)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := eks.Token(context.Background(), cfg, "prod")
	if err != nil {
		t.Fatal(err)
	}
	u := presignedURL(t, tok)
	if status, body := callerIdentity(t, u, "staging"); status != 403 || !strings.Contains(body, "SignatureDoesNotMatch") {
		t.Errorf("another cluster's check: %d %s", status, body)
	}
	q := u.Query()
	q.Set("X-Amz-Expires", "3600")
	u.RawQuery = q.Encode()
	if status, _ := callerIdentity(t, u, "prod"); status != 403 {
		t.Errorf("a token with a tampered expiry: %d, want 403", status)
	}
}

func TestConfigErrorsNameTheCluster(t *testing.T) {
	setup(t)
	_, err := eks.Config(context.Background(), eks.Options{Cluster: "nope", Region: kmstest.Region})
	if err == nil || !strings.Contains(err.Error(), "EKS cluster nope") || !strings.Contains(err.Error(), "ResourceNotFoundException") {
		t.Errorf("error %v", err)
	}
	kmstest.Unsetenv(t, "AWS_REGION")
	_, err = eks.Config(context.Background(), eks.Options{Cluster: "prod"})
	if err == nil || !strings.Contains(err.Error(), "no AWS region") {
		t.Errorf("without a region: %v", err)
	}
}

func TestConfigWithoutCredentials(t *testing.T) {
	setup(t)
	kmstest.Unsetenv(t, "AWS_ACCESS_KEY_ID")
	kmstest.Unsetenv(t, "AWS_SECRET_ACCESS_KEY")
	_, err := eks.Config(context.Background(), eks.Options{Cluster: "prod", Region: kmstest.Region})
	if err == nil || !strings.Contains(err.Error(), "DescribeCluster") {
		t.Errorf("error %v", err)
	}
}
