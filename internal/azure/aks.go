package azure

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"golang.org/x/oauth2"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/transport"
)

const (
	// armEndpoint is Azure Resource Manager's, in Azure's public cloud;
	// ARMEndpointEnv names another (a sovereign cloud's).
	armEndpoint = "https://management.azure.com"
	// ARMEndpointEnv overrides armEndpoint
	// (https://management.usgovcloudapi.net, say).
	ARMEndpointEnv = "AZURE_RESOURCE_MANAGER_ENDPOINT"
	// aksAPIVersion is the managedClusters API version asked for.
	aksAPIVersion = "2024-05-01"
	// AKSServerApp is the AAD server application of AKS-managed Entra ID
	// integration, the same for every cluster: its API servers accept
	// tokens for it (kubelogin's --server-id).
	AKSServerApp = "6dae42f8-4368-4678-94ff-3960e28e3630"
)

// clusterID is an AKS cluster's ARM resource ID.
var clusterID = regexp.MustCompile(`(?i)^/?subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.ContainerService/managedClusters/([^/]+)$`)

// ClusterID turns SUBSCRIPTION/RESOURCE_GROUP/NAME, or an ARM resource ID
// (with or without its leading slash), into the cluster's ARM resource ID
// and its name.
func ClusterID(s string) (id, name string, err error) {
	s = strings.TrimSpace(s)
	if m := clusterID.FindStringSubmatch(s); m != nil {
		return "/" + strings.TrimPrefix(s, "/"), m[3], nil
	}
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", fmt.Errorf("%q: want SUBSCRIPTION/RESOURCE_GROUP/NAME or subscriptions/SUBSCRIPTION/resourceGroups/RESOURCE_GROUP/providers/Microsoft.ContainerService/managedClusters/NAME", s)
	}
	return "/subscriptions/" + parts[0] + "/resourceGroups/" + parts[1] + "/providers/Microsoft.ContainerService/managedClusters/" + parts[2], parts[2], nil
}

// AKSOptions say which cluster, and how to reach it.
type AKSOptions struct {
	Options
	// Cluster is SUBSCRIPTION/RESOURCE_GROUP/NAME or the ARM resource ID.
	Cluster string
	// Mask, if set, is called with every access token before it is used.
	Mask func(token string)
}

// AKSConfig returns a client configuration for an AKS cluster with
// Microsoft Entra ID integration, without a kubeconfig, the az CLI or
// kubelogin: the API server and its CA from ARM's
// listClusterUserCredential (whose kubeconfig is read for them and for
// the server application kubelogin would ask a token for; its user, the
// kubelogin exec plugin, is not run), and bearer tokens for that
// application from the Entra ID credential NewCredential picks (GitHub
// OIDC or workload identity federation, a client secret, a managed
// identity, the az CLI's session). The application (or identity) needs the "Azure Kubernetes Service Cluster
// User Role" (listClusterUserCredential) and Kubernetes RBAC. ctx bounds
// every later token request.
func AKSConfig(ctx context.Context, opts AKSOptions) (*rest.Config, error) {
	id, _, err := ClusterID(opts.Cluster)
	if err != nil {
		return nil, fmt.Errorf("AKS cluster %w", err)
	}
	cred, err := NewCredential(opts.Options)
	if err != nil {
		return nil, fmt.Errorf("AKS cluster %s: %w", opts.Cluster, err)
	}
	arm := armEndpoint
	if opts.Getenv != nil {
		if e := strings.TrimSpace(opts.Getenv(ARMEndpointEnv)); e != "" {
			arm = strings.TrimSuffix(e, "/")
		}
	}
	armTokens := tokens{ctx: ctx, cred: cred, scope: arm + "/.default", mask: opts.Mask}
	armToken, err := armTokens.Token()
	if err != nil {
		return nil, fmt.Errorf("AKS cluster %s: %w", opts.Cluster, err)
	}
	uc, err := userCredential(ctx, opts.HTTPClient, arm+id, armToken.AccessToken)
	if err != nil {
		return nil, fmt.Errorf("AKS cluster %s: listClusterUserCredential: %w", opts.Cluster, err)
	}
	if uc.serverApp == "" {
		return nil, fmt.Errorf("AKS cluster %s does not use Microsoft Entra ID authentication (its user credential is not kubelogin's): give a kubeconfig instead", opts.Cluster)
	}
	ts := oauth2.ReuseTokenSource(nil, tokens{ctx: ctx, cred: cred, scope: uc.serverApp + "/.default", mask: opts.Mask})
	if _, err := ts.Token(); err != nil {
		return nil, fmt.Errorf("AKS cluster %s: %w", opts.Cluster, err)
	}
	return &rest.Config{
		Host:            uc.server,
		TLSClientConfig: rest.TLSClientConfig{CAData: uc.ca},
		WrapTransport:   transport.TokenSourceWrapTransport(ts),
	}, nil
}

// clusterUser is what a cluster's user kubeconfig says: where the API
// server is, its CA, and the server application of its Entra ID
// integration ("" for a cluster with local accounts).
type clusterUser struct {
	server    string
	ca        []byte
	serverApp string
}

// userCredential asks ARM for the cluster's user kubeconfig (at url, the
// cluster's ARM URL) and reads it.
func userCredential(ctx context.Context, client *http.Client, url, token string) (*clusterUser, error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/listClusterUserCredential?api-version="+aksAPIVersion, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error.Code != "" {
			return nil, fmt.Errorf("ARM %d %s: %s", resp.StatusCode, e.Error.Code, e.Error.Message)
		}
		return nil, fmt.Errorf("ARM %s", resp.Status)
	}
	var out struct {
		Kubeconfigs []struct {
			Value string `json:"value"`
		} `json:"kubeconfigs"`
	}
	if err := json.Unmarshal(body, &out); err != nil || len(out.Kubeconfigs) == 0 {
		return nil, errors.New("the answer holds no kubeconfig")
	}
	raw, err := base64.StdEncoding.DecodeString(out.Kubeconfigs[0].Value)
	if err != nil {
		return nil, errors.New("the kubeconfig is not base64")
	}
	// Errors below never quote the kubeconfig: a cluster with local
	// accounts puts credentials in it.
	kc, err := clientcmd.Load(raw)
	if err != nil {
		return nil, errors.New("the kubeconfig does not parse")
	}
	c, ok := kc.Contexts[kc.CurrentContext]
	if !ok {
		return nil, errors.New("the kubeconfig has no current context")
	}
	cl, ok := kc.Clusters[c.Cluster]
	if !ok || cl.Server == "" || len(cl.CertificateAuthorityData) == 0 {
		return nil, errors.New("the kubeconfig names no API server and CA")
	}
	uc := &clusterUser{server: cl.Server, ca: cl.CertificateAuthorityData}
	if u, ok := kc.AuthInfos[c.AuthInfo]; ok && u.Exec != nil {
		uc.serverApp = AKSServerApp
		for i, a := range u.Exec.Args {
			if v, ok := strings.CutPrefix(a, "--server-id="); ok {
				uc.serverApp = v
			} else if a == "--server-id" && i+1 < len(u.Exec.Args) {
				uc.serverApp = u.Exec.Args[i+1]
			}
		}
	}
	return uc, nil
}

// tokens are Entra ID tokens for one scope, each handed to mask first.
type tokens struct {
	ctx   context.Context
	cred  *Credential
	scope string
	mask  func(string)
}

func (t tokens) Token() (*oauth2.Token, error) {
	tok, err := t.cred.GetToken(t.ctx, policy.TokenRequestOptions{Scopes: []string{t.scope}})
	if err != nil {
		return nil, fmt.Errorf("no token from the %s: %s", t.cred.Source, TokenError(err))
	}
	if t.mask != nil {
		t.mask(tok.Token)
	}
	return &oauth2.Token{AccessToken: tok.Token, TokenType: "Bearer", Expiry: tok.ExpiresOn}, nil
}
