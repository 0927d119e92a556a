package ecr_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ecr"
)

const userID, userSecret = "AKIAECRTESTUSER00001", "ecr-test-secret-key-0000000000000000000"

// ecrHost is the registry's host as its OCIRepository names it; the
// test's registry answers for it (see reaching).
const ecrHost = kmstest.AccountID + ".dkr.ecr." + kmstest.Region + ".amazonaws.com"

// reaching is a client that reaches addr whatever host a request names.
func reaching(addr string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

func TestRegion(t *testing.T) {
	for host, want := range map[string]string{
		"123456789012.dkr.ecr.eu-west-1.amazonaws.com":          "eu-west-1",
		"123456789012.dkr.ecr.eu-west-1.amazonaws.com:443":      "eu-west-1",
		"123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com": "us-gov-west-1",
		"123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn":      "cn-north-1",
		"123456789012.DKR.ECR.eu-west-1.amazonaws.com":          "eu-west-1",
		"127.0.0.1:5000":       "",
		"registry.example.com": "",
		"123456789012.dkr.ecr.eu-west-1.amazonaws.com.attacker.example": "",
		"123456789012.dkr.ecr.eu-west-1.amazonaws.com:8443":             "",
		"attacker.example/123456789012.dkr.ecr.eu-west-1.amazonaws.com": "",
		"12345.dkr.ecr.eu-west-1.amazonaws.com":                         "",
	} {
		got, err := ecr.Region(host)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("%s: %q, %v; want %q", host, got, err, want)
		}
		if err != nil && !strings.Contains(err.Error(), host+" is not an Amazon ECR registry") {
			t.Errorf("%s: %v", host, err)
		}
	}
}

func objsOf(t *testing.T, docs ...string) ([]*unstructured.Unstructured, map[object.ID]string) {
	var objs []*unstructured.Unstructured
	sources := map[object.ID]string{}
	for _, doc := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
		sources[object.IDOf(u)] = "apps/web/release.yaml"
	}
	return objs, sources
}

func release(host string) []string {
	return []string{
		"apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: web, namespace: apps}\nspec:\n  insecure: true\n  provider: aws\n  url: oci://" + host + "/charts/web\n  ref: {tag: 1.0.0}\n",
		"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: apps}\nspec:\n  interval: 10m\n  chartRef: {kind: OCIRepository, name: web}\n",
	}
}

// An OCIRepository with provider aws pulls its chart from a registry that
// takes only ECR's token: the token comes from ecr:GetAuthorizationToken,
// signed with the environment's AWS credentials, at the endpoint the
// environment names, as on a runner with aws-actions/configure-aws-credentials.
func TestProviderAWSPullsWithAnECRToken(t *testing.T) {
	srv := kmstest.New(t)
	srv.Setenv(t)
	srv.AddUser(userID, userSecret)
	kmstest.SetCredentials(t, userID, userSecret)
	reg := helmtest.NewRegistryWithAuth(t, "AWS", srv.ECRToken())
	reg.Push("charts", helmtest.Chart{Dir: "../../../testdata/charts/web", Version: "1.0.0", AppVersion: "1.0"})
	fetcher := func() *helm.Fetcher {
		return &helm.Fetcher{CacheDir: t.TempDir(), AWS: ecr.Login, Client: reaching(reg.Host)}
	}
	objs, sources := objsOf(t, release(ecrHost)...)
	out, err := helm.Expand(t.Context(), objs, sources, helm.Options{Fetcher: fetcher()})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Charts) != 1 || out.Charts[0].Version != "1.0.0" {
		t.Fatalf("charts %+v", out.Charts)
	}
	if n := srv.Count("ECR.GetAuthorizationToken"); n != 1 {
		t.Errorf("GetAuthorizationToken called %d times", n)
	}

	// Without credentials, ECR refuses, and the error says so.
	kmstest.SetCredentials(t, "AKIAUNKNOWNUSER00001", "wrong")
	_, err = helm.Expand(t.Context(), objs, sources, helm.Options{Fetcher: fetcher()})
	if err == nil || !strings.Contains(err.Error(), "spec.provider aws: ECR registry "+ecrHost+": GetAuthorizationToken") || !strings.Contains(err.Error(), "UnrecognizedClient") {
		t.Errorf("with unknown credentials: %v", err)
	}
}

// A source with provider aws whose URL names another host gets no token:
// none is minted, and none is sent there.
func TestProviderAWSOtherHostGetsNoToken(t *testing.T) {
	srv := kmstest.New(t)
	srv.Setenv(t)
	srv.AddUser(userID, userSecret)
	kmstest.SetCredentials(t, userID, userSecret)
	var authorized atomic.Int64
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			authorized.Add(1)
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(attacker.Close)
	host := strings.TrimPrefix(attacker.URL, "http://")
	objs, sources := objsOf(t, release(host)...)
	_, err := helm.Expand(t.Context(), objs, sources, helm.Options{Fetcher: &helm.Fetcher{CacheDir: t.TempDir(), AWS: ecr.Login}})
	if err == nil || !strings.Contains(err.Error(), "spec.provider aws: "+host+" is not an Amazon ECR registry") {
		t.Errorf("error %v", err)
	}
	if _, _, err := ecr.Login(t.Context(), host, ecr.Options{}); err == nil {
		t.Error("ecr.Login logged in for another host")
	}
	if n := srv.Count("ECR.GetAuthorizationToken"); n != 0 {
		t.Errorf("GetAuthorizationToken called %d times", n)
	}
	if n := authorized.Load(); n != 0 {
		t.Errorf("the other host was sent credentials %d times", n)
	}
}

// imds serves EC2 instance metadata: the instance role's credentials, as
// a self-hosted runner on EC2 has them. It counts its requests.
func imds(t *testing.T, accessKeyID, secret string) (string, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/latest/api/token":
			w.Header().Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", "21600")
			_, _ = w.Write([]byte("imds-token"))
		case r.URL.Path == "/latest/meta-data/iam/security-credentials/":
			_, _ = w.Write([]byte("runner-role"))
		case r.URL.Path == "/latest/meta-data/iam/security-credentials/runner-role":
			_ = json.NewEncoder(w).Encode(map[string]string{
				"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": accessKeyID, "SecretAccessKey": secret, "Token": "session-token",
				"Expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "LastUpdated": time.Now().UTC().Format(time.RFC3339),
			})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

// On a runner with an instance role and no credentials in the
// environment, a deploy logs in with the role, as Flux does; an offline
// diff (a pull request's, perhaps a fork's) mints nothing from it.
func TestOfflineLoginTakesNoInstanceRole(t *testing.T) {
	srv := kmstest.New(t)
	srv.Setenv(t)
	srv.AddUser(userID, userSecret)
	endpoint, hits := imds(t, userID, userSecret)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", endpoint)

	_, _, err := ecr.Login(t.Context(), ecrHost, ecr.Options{EnvironmentOnly: true})
	if err == nil || !strings.Contains(err.Error(), "no AWS credentials in the environment, and an offline diff takes none from the runner's own identity") {
		t.Errorf("offline: %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("offline: the instance metadata service was asked %d times", n)
	}
	if n := srv.Count("ECR.GetAuthorizationToken"); n != 0 {
		t.Errorf("offline: GetAuthorizationToken called %d times", n)
	}

	user, pass, err := ecr.Login(t.Context(), ecrHost, ecr.Options{})
	if err != nil || user != "AWS" || pass != srv.ECRToken() {
		t.Fatalf("with the instance role: %q, %v", user, err)
	}
	if hits.Load() == 0 {
		t.Error("the instance role was not used")
	}

	// Credentials the workflow put in the environment serve offline too.
	kmstest.SetCredentials(t, userID, userSecret)
	hits.Store(0)
	if _, pass, err := ecr.Login(t.Context(), ecrHost, ecr.Options{EnvironmentOnly: true}); err != nil || pass != srv.ECRToken() {
		t.Errorf("offline, with the environment's credentials: %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("offline: the instance metadata service was asked %d times", n)
	}
}
