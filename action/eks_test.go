package action

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/eks"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// tokenWebhook is the test's stand-in for the managed clouds' token
// authenticators: the API server of the package's cluster sends it every
// bearer token it does not know (TokenReview v1). Like
// aws-iam-authenticator, it accepts an EKS token only if the presigned
// URL points at the STS the test expects and STS, asked with the
// cluster's name in x-k8s-aws-id, vouches for the caller; the caller's
// ARN becomes the username, in the group eksGroup. Like GKE, it accepts a
// Google access token the test's Google issued (expectGKE), and like AKS
// an Entra ID token the test's Azure issued for AKS's server application
// (expectAKS); the principal becomes the username, in cloudGroup.
type tokenWebhook struct {
	srv *httptest.Server

	mu        sync.Mutex
	stsHost   string // host:port of the STS tokens must point at; "" refuses all
	clusterID string
	google    *kmstest.GCP
	azure     *kmstest.Azure
	accepted  []string // tokens accepted
	refused   []string // why tokens were refused
}

// cloudGroup is the group of GKE and AKS principals.
const cloudGroup = "cloud:deployers"

// expectGKE makes the webhook accept the access tokens g issued, until the
// test ends.
func (w *tokenWebhook) expectGKE(t *testing.T, g *kmstest.GCP) {
	w.mu.Lock()
	w.google, w.accepted, w.refused = g, nil, nil
	w.mu.Unlock()
	t.Cleanup(func() {
		w.mu.Lock()
		w.google = nil
		w.mu.Unlock()
	})
}

// expectAKS makes the webhook accept the tokens a issued for AKS's server
// application, until the test ends.
func (w *tokenWebhook) expectAKS(t *testing.T, a *kmstest.Azure) {
	w.mu.Lock()
	w.azure, w.accepted, w.refused = a, nil, nil
	w.mu.Unlock()
	t.Cleanup(func() {
		w.mu.Lock()
		w.azure = nil
		w.mu.Unlock()
	})
}

// tokens returns the tokens accepted and why others were refused.
func (w *tokenWebhook) tokens() (accepted, refused []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.accepted...), append([]string(nil), w.refused...)
}

const eksGroup = "eks:deployers"

func newTokenWebhook() *tokenWebhook {
	w := &tokenWebhook{}
	w.srv = httptest.NewTLSServer(http.HandlerFunc(w.review))
	return w
}

// config is what the API server needs to call the webhook.
func (w *tokenWebhook) config() *testcluster.Webhook {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.srv.Certificate().Raw})
	return &testcluster.Webhook{URL: w.srv.URL, CA: ca}
}

// expect makes the webhook accept tokens for clusterID vouched for by the
// STS at stsURL, until the test ends.
func (w *tokenWebhook) expect(t *testing.T, stsURL, clusterID string) {
	u, err := url.Parse(stsURL)
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.stsHost, w.clusterID, w.accepted, w.refused = u.Host, clusterID, nil, nil
	w.mu.Unlock()
	t.Cleanup(func() {
		w.mu.Lock()
		w.stsHost, w.clusterID = "", ""
		w.mu.Unlock()
	})
}

func (w *tokenWebhook) review(rw http.ResponseWriter, r *http.Request) {
	var tr authenticationv1.TokenReview
	if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	stsHost, clusterID, google, azure := w.stsHost, w.clusterID, w.google, w.azure
	w.mu.Unlock()
	var user, group, why string
	switch tok := tr.Spec.Token; {
	case strings.HasPrefix(tok, eks.TokenPrefix) || (google == nil && azure == nil):
		user, why = verifyEKSToken(tok, stsHost, clusterID)
		group = eksGroup
	case google != nil:
		var ok bool
		if user, ok = google.Principal(tok); !ok {
			why = "Google knows no such access token"
		}
		group = cloudGroup
	default:
		id, aud, ok := azure.Principal(tok)
		switch {
		case !ok:
			why = "Entra ID issued no such token"
		case aud != kmstest.AKSAudience:
			why = "the token is for " + aud + ", not AKS's server application"
		}
		user, group = "aks:"+id, cloudGroup
	}
	w.mu.Lock()
	if why == "" {
		w.accepted = append(w.accepted, tr.Spec.Token)
		tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: user, Groups: []string{group}}}
	} else {
		if strings.HasPrefix(tr.Spec.Token, eks.TokenPrefix) || google != nil || azure != nil {
			w.refused = append(w.refused, why)
		}
		tr.Status = authenticationv1.TokenReviewStatus{Error: why}
	}
	w.mu.Unlock()
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(tr)
}

// verifyEKSToken checks a token as aws-iam-authenticator does and returns
// the caller's ARN, or why it was refused.
func verifyEKSToken(token, stsHost, clusterID string) (string, string) {
	enc, ok := strings.CutPrefix(token, eks.TokenPrefix)
	if !ok || stsHost == "" {
		return "", "not an EKS token"
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return "", "token is not base64url"
	}
	u, err := url.Parse(string(raw))
	if err != nil || u.Host != stsHost || u.Path != "/" {
		return "", "token is not for the expected STS endpoint"
	}
	q := u.Query()
	if q.Get("Action") != "GetCallerIdentity" || !strings.Contains(q.Get("X-Amz-SignedHeaders"), eks.ClusterIDHeader) {
		return "", "token is not a presigned GetCallerIdentity bound to a cluster"
	}
	req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	req.Header.Set(eks.ClusterIDHeader, clusterID)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "STS: " + err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", "STS refused the token: " + string(body)
	}
	var out struct {
		GetCallerIdentityResponse struct{ GetCallerIdentityResult struct{ Arn string } }
	}
	if err := json.Unmarshal(body, &out); err != nil || out.GetCallerIdentityResponse.GetCallerIdentityResult.Arn == "" {
		return "", "STS answered no ARN"
	}
	return out.GetCallerIdentityResponse.GetCallerIdentityResult.Arn, ""
}

const (
	eksUser   = "AKIAEKSACTIONUSER001"
	eksSecret = "eks-action-user-secret-key"
)

// eksSetup points the AWS SDK at a test STS/EKS that knows the user and
// the cluster clusterName (this package's API server), makes the webhook
// expect tokens for webhookCluster, and lets eksGroup administer the
// cluster for the test.
func eksSetup(t *testing.T, clusterName, webhookCluster string) *kmstest.Server {
	srv := kmstest.New(t)
	srv.AddUser(eksUser, eksSecret)
	srv.Setenv(t)
	kmstest.SetCredentials(t, eksUser, eksSecret)
	srv.AddCluster(clusterName, cluster.Config.Host, cluster.Config.CAData)
	webhook.expect(t, srv.URL(), webhookCluster)

	bindClusterAdmin(t, eksGroup)
	return srv
}

// bindClusterAdmin lets group administer the cluster until the test ends.
func bindClusterAdmin(t *testing.T, group string) {
	t.Helper()
	client := cluster.Client(t)
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "deployers-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: group}},
	}
	crb, err := client.RbacV1().ClusterRoleBindings().Create(t.Context(), crb, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
}

func (u *unitRepo) eksRun(t *testing.T, gh *fakeGitHub, ns, eksCluster string) *runEnv {
	return newRun(t, gh, "push", u.dir, map[string]string{pushed: u.head}).
		input("path", "deploy/web").input("name", "web").input("target-namespace", ns).input("inventory-namespace", ns).
		input("eks-cluster", eksCluster).input("eks-region", kmstest.Region).input("wait", "false")
}

// EKS without a kubeconfig secret, on the wire: DescribeCluster gives the
// endpoint and CA, the presigned GetCallerIdentity token goes to the API
// server, whose token webhook has STS vouch for it.
func TestEKSWithoutKubeconfig(t *testing.T) {
	ns := cluster.Namespace(t)
	srv := eksSetup(t, "prod-eks", "prod-eks")
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.expect(statusCall)
	res := repo.eksRun(t, gh, ns, "prod-eks").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if _, err := cluster.Client(t).AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{}); err != nil {
		t.Fatalf("the deployment was not applied: %v", err)
	}
	if n := srv.Count("EKS.DescribeCluster"); n != 1 {
		t.Errorf("%d DescribeCluster requests, want 1", n)
	}
	webhook.mu.Lock()
	accepted, refused := append([]string(nil), webhook.accepted...), webhook.refused
	webhook.mu.Unlock()
	if len(accepted) == 0 || len(refused) != 0 {
		t.Fatalf("the webhook accepted %d tokens and refused %v", len(accepted), refused)
	}
	if n := srv.Count("STS.GetCallerIdentity"); n < len(accepted) {
		t.Errorf("%d GetCallerIdentity checks for %d tokens", n, len(accepted))
	}
	if st := gh.lastStatus(); st == nil || st["context"] != "kustomize-deploy/prod-eks/web" || st["state"] != "success" {
		t.Errorf("status %v", st)
	}
	all := res.stdout + res.summary + strings.Join(values(res.outputs), "\n")
	for _, tok := range accepted {
		if strings.Contains(all, tok) || strings.Contains(all, strings.TrimPrefix(tok, eks.TokenPrefix)[:40]) {
			t.Error("an EKS token appears in the output")
		}
	}
	if strings.Contains(all, eksSecret) {
		t.Error("the AWS secret key appears in the output")
	}
}

// A token is bound to its cluster: an API server that checks tokens for
// another cluster name rejects it, and the run fails.
func TestEKSTokenForAnotherClusterIsRejected(t *testing.T) {
	ns := cluster.Namespace(t)
	eksSetup(t, "prod-eks", "staging-eks")
	repo := newUnitRepo(t)
	res := repo.eksRun(t, newFakeGitHub(t), ns, "prod-eks").run()
	if res.code != exitFail {
		t.Fatalf("exit %d, want failure\n%s", res.code, res.stdout)
	}
	if !strings.Contains(res.stdout, "the server has asked for the client to provide credentials") {
		t.Errorf("the failure does not say the API server refused the token:\n%s", res.stdout)
	}
	webhook.mu.Lock()
	defer webhook.mu.Unlock()
	if len(webhook.accepted) != 0 || len(webhook.refused) == 0 || !strings.Contains(webhook.refused[0], "SignatureDoesNotMatch") {
		t.Errorf("accepted %d, refused %v", len(webhook.accepted), webhook.refused)
	}
}

func TestEKSInputErrors(t *testing.T) {
	ns := cluster.Namespace(t)
	eksSetup(t, "prod-eks", "prod-eks")
	repo := newUnitRepo(t)
	t.Run("unknown cluster", func(t *testing.T) {
		res := repo.eksRun(t, newFakeGitHub(t), ns, "nope").run()
		if res.code != exitFail || !strings.Contains(res.stdout, "input 'eks-cluster'") || !strings.Contains(res.stdout, "ResourceNotFoundException") {
			t.Errorf("exit %d\n%s", res.code, res.stdout)
		}
	})
	t.Run("and a kubeconfig", func(t *testing.T) {
		res := repo.eksRun(t, newFakeGitHub(t), ns, "prod-eks").input("kubeconfig", cluster.Kubeconfig).run()
		if res.code != exitFail || !strings.Contains(res.stdout, "input 'eks-cluster': 'kubeconfig' is set too") {
			t.Errorf("exit %d\n%s", res.code, res.stdout)
		}
	})
}
