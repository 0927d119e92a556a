package kube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// What a first contact with a cluster gets wrong most often, each said
// in words a user can act on: no kubeconfig at all (client-go would try
// http://localhost:8080 without a word), a kubeconfig whose credentials
// come from an executable that is not installed, and an API server that
// cannot be reached.

// ErrNoKubeconfig is returned by Load when nothing names a cluster: no
// kubeconfig file, no --server and not inside a cluster. Front ends add
// their own words for what to set.
var ErrNoKubeconfig = errors.New("no cluster to connect to: no kubeconfig was found ($KUBECONFIG is not set and ~/.kube/config does not exist), no server was named, and this is not a pod of a cluster")

// MissingPluginError is a kubeconfig user whose token comes from an
// executable (an exec credential plugin) that is not installed here.
type MissingPluginError struct {
	User    string
	Command string
}

func (e *MissingPluginError) Error() string {
	msg := fmt.Sprintf("the kubeconfig's user %q gets its token by running %q, which is not installed here (not found in PATH)", e.User, e.Command)
	if managed := pluginCluster(e.Command); managed != "" {
		msg += fmt.Sprintf(": install it in an earlier step, or connect to the %s cluster by name, which runs no executable", managed)
	}
	return msg
}

// pluginCluster is the managed cluster kind whose credential plugin cmd
// is: EKS, GKE or AKS; "" for others.
func pluginCluster(cmd string) string {
	base := strings.TrimSuffix(strings.ToLower(cmd[strings.LastIndexAny(cmd, `/\`)+1:]), ".exe")
	switch base {
	case "aws", "aws-iam-authenticator":
		return "EKS"
	case "gke-gcloud-auth-plugin", "gcloud":
		return "GKE"
	case "kubelogin", "az":
		return "AKS"
	}
	return ""
}

// Plugin is the managed cluster kind (EKS, GKE, AKS) an error's missing
// credential plugin belongs to, for front ends to name their option; ""
// when err is not a *MissingPluginError of one.
func Plugin(err error) string {
	var mp *MissingPluginError
	if errors.As(err, &mp) {
		return pluginCluster(mp.Command)
	}
	return ""
}

// checkConfig says what is wrong with raw, the merged kubeconfig, before
// client-go acts on it: nothing at all (and no server override and no
// in-cluster environment), or an exec plugin of the context's user that
// lookPath does not find.
func checkConfig(raw clientcmdapi.Config, context, server string, inCluster bool, lookPath func(string) (string, error)) error {
	if len(raw.Clusters) == 0 && len(raw.Contexts) == 0 && server == "" && !inCluster {
		return ErrNoKubeconfig
	}
	name := context
	if name == "" {
		name = raw.CurrentContext
	}
	ctx, ok := raw.Contexts[name]
	if !ok {
		return nil // client-go says which context is missing
	}
	user, ok := raw.AuthInfos[ctx.AuthInfo]
	if !ok || user.Exec == nil || user.Exec.Command == "" {
		return nil
	}
	if _, err := lookPath(user.Exec.Command); err != nil {
		return &MissingPluginError{User: ctx.AuthInfo, Command: user.Exec.Command}
	}
	return nil
}

// inCluster reports whether this process runs in a pod, as client-go's
// in-cluster configuration decides.
func inCluster() bool {
	if os.Getenv("KUBERNETES_SERVICE_HOST") == "" || os.Getenv("KUBERNETES_SERVICE_PORT") == "" {
		return false
	}
	_, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/token")
	return err == nil
}

// lookPath finds an executable as client-go's exec plugin runner does.
var lookPath = exec.LookPath

// UnreachableError is an API server this process could not talk to.
type UnreachableError struct {
	Host string
	// Cause says what went wrong and what to check, in a user's words.
	Cause string
	Err   error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the Kubernetes API server %s: %s (%v)", e.Host, e.Cause, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// privateEndpoint is what to check when the network does not lead to the
// API server.
const privateEndpoint = "is it reachable from this machine? GitHub-hosted runners reach public endpoints only: a cluster with a private endpoint needs a self-hosted runner inside its network, or this runner's address among its authorized networks; check firewalls and HTTPS_PROXY too"

// Reach asks the API server for its version, so that a cluster out of
// reach is named as such, with its likely cause, before any unit runs
// (and not as a failure to take a unit's lock).
func (c *Clients) Reach(ctx context.Context) error {
	dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", c.Config.Host, err)
	}
	// ServerVersion takes no context: bound it by ctx through the REST
	// client's request.
	body, err := dc.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return unreachable(c.Config.Host, err)
	}
	if !strings.Contains(string(body), "gitVersion") {
		return &UnreachableError{Host: c.Config.Host, Cause: "it answered, but not as a Kubernetes API server: is the kubeconfig's server the cluster's API endpoint?", Err: errors.New("no version in the answer to /version")}
	}
	return nil
}

// unreachable explains err, met asking host for its version.
func unreachable(host string, err error) error {
	var dnsErr *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var recordHeader tls.RecordHeaderError
	var netErr net.Error
	cause := ""
	switch {
	case errors.As(err, &dnsErr):
		cause = "its name does not resolve; a private cluster's name resolves only inside its network: " + privateEndpoint
	case errors.Is(err, syscall.ECONNREFUSED):
		cause = "nothing listens there (connection refused): " + privateEndpoint
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		cause = "the network refused the connection: " + privateEndpoint
	case errors.As(err, &unknownCA):
		cause = "its certificate is not signed by the kubeconfig's certificate authority (certificate-authority-data): is the kubeconfig the cluster's current one?"
	case errors.As(err, &hostname):
		cause = "its certificate is not valid for this name: is the kubeconfig's server the cluster's API endpoint?"
	case errors.As(err, &invalid):
		cause = "its certificate is not valid (expired or not yet valid?)"
	case errors.As(err, &recordHeader):
		cause = "it does not speak TLS there: is the server's URL right (https:// and the API port)?"
	case apierrors.IsUnauthorized(err):
		cause = "it refused the kubeconfig's credentials (401 Unauthorized): has the token expired?"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		cause = "no answer in time: " + privateEndpoint
	default:
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			// It answered: reached, whatever it said.
			return fmt.Errorf("asking the Kubernetes API server %s for its version: %w", host, err)
		}
		cause = privateEndpoint
	}
	return &UnreachableError{Host: host, Cause: cause, Err: err}
}
