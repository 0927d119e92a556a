package kube

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestCheckConfig(t *testing.T) {
	t.Parallel()
	withUser := func(user *clientcmdapi.AuthInfo) clientcmdapi.Config {
		return clientcmdapi.Config{
			Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: "https://k8s.example"}},
			Contexts:       map[string]*clientcmdapi.Context{"x": {Cluster: "c", AuthInfo: "u"}, "other": {Cluster: "c", AuthInfo: "v"}},
			AuthInfos:      map[string]*clientcmdapi.AuthInfo{"u": user, "v": {Token: "t"}},
			CurrentContext: "x",
		}
	}
	exec := func(cmd string) *clientcmdapi.AuthInfo {
		return &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: cmd}}
	}
	installed := func(name string) (string, error) {
		if name == "kubectl-oidc" {
			return "/usr/bin/" + name, nil
		}
		return "", &execError{name}
	}
	for _, tc := range []struct {
		name      string
		raw       clientcmdapi.Config
		context   string
		server    string
		inCluster bool
		want      string // "" is no error
		cluster   string // the managed cluster kind named
	}{
		{name: "nothing at all", raw: clientcmdapi.Config{}, want: "no kubeconfig was found"},
		{name: "nothing, but --server", raw: clientcmdapi.Config{}, server: "https://k8s.example"},
		{name: "nothing, in a pod", raw: clientcmdapi.Config{}, inCluster: true},
		{name: "a token", raw: withUser(&clientcmdapi.AuthInfo{Token: "t"})},
		{name: "an installed plugin", raw: withUser(exec("kubectl-oidc"))},
		{name: "aws missing", raw: withUser(exec("aws")), want: `user "u" gets its token by running "aws"`, cluster: "EKS"},
		{name: "gke plugin missing", raw: withUser(exec("gke-gcloud-auth-plugin")), want: "connect to the GKE cluster by name", cluster: "GKE"},
		{name: "kubelogin missing by path", raw: withUser(exec("/opt/bin/kubelogin")), want: `"/opt/bin/kubelogin", which is not installed`, cluster: "AKS"},
		{name: "an unknown plugin missing", raw: withUser(exec("my-auth")), want: `running "my-auth", which is not installed here (not found in PATH)`},
		{name: "another context's user is used", raw: withUser(exec("aws")), context: "other"},
		{name: "a context that does not exist is client-go's to report", raw: withUser(exec("aws")), context: "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkConfig(tc.raw, tc.context, tc.server, tc.inCluster, installed)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
			if got := Plugin(err); got != tc.cluster {
				t.Errorf("Plugin = %q, want %q", got, tc.cluster)
			}
		})
	}
}

type execError struct{ name string }

func (e *execError) Error() string { return "exec: " + e.name + ": executable file not found in $PATH" }

func TestUnreachableNamesTheCause(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want string // in the message; "" means not an *UnreachableError
	}{
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, "nothing listens there (connection refused): is it reachable from this machine? GitHub-hosted runners reach public endpoints only"},
		{"DNS", &net.DNSError{Err: "no such host", Name: "k8s.internal"}, "its name does not resolve"},
		{"timeout", fmt.Errorf("get: %w", context.DeadlineExceeded), "no answer in time: is it reachable"},
		{"unknown CA", x509.UnknownAuthorityError{}, "not signed by the kubeconfig's certificate authority"},
		{"wrong name", x509.HostnameError{Certificate: &x509.Certificate{}, Host: "k8s"}, "not valid for this name"},
		{"401", apierrors.NewUnauthorized("no"), "refused the kubeconfig's credentials (401 Unauthorized)"},
		{"403 is an answer", apierrors.NewForbidden(schema.GroupResource{}, "version", errors.New("no")), ""},
		{"anything else", errors.New("EOF"), "is it reachable from this machine?"},
	} {
		err := unreachable("https://k8s.example:6443", tc.err)
		var ue *UnreachableError
		switch {
		case tc.want == "" && errors.As(err, &ue):
			t.Errorf("%s: %v is called unreachable", tc.name, err)
		case tc.want != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "https://k8s.example:6443")):
			t.Errorf("%s: %v, want the server and %q", tc.name, err, tc.want)
		}
		if !errors.Is(err, tc.err) && tc.name != "wrong name" && tc.name != "unknown CA" {
			t.Errorf("%s: %v does not wrap the cause", tc.name, err)
		}
	}
}

// Reach asks the server itself: a closed port is unreachable, a server
// that is not Kubernetes is said to be one, an API server answers.
func TestReach(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "{}") }))
	defer web.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"major":"1","minor":"37","gitVersion":"v1.37.2"}`)
	}))
	defer api.Close()
	for host, want := range map[string]string{closed: "connection refused", web.URL: "not as a Kubernetes API server", api.URL: ""} {
		c, err := New(&rest.Config{Host: host}, "default", DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		err = c.Reach(t.Context())
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", host, err, want)
		}
	}
}

// Load refuses a kubeconfig whose plugin is missing before client-go
// would run it, and names the empty configuration.
func TestLoadSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	writeFile(t, path, "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://k8s.example}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: kustomize-deploy-test-no-such-plugin\n")
	if _, err := exec.LookPath("kustomize-deploy-test-no-such-plugin"); err == nil {
		t.Skip("the test's plugin name exists here")
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &path
	var mp *MissingPluginError
	if _, err := Load(Options{Config: flags}); !errors.As(err, &mp) || mp.Command != "kustomize-deploy-test-no-such-plugin" {
		t.Errorf("Load: %v, want the missing plugin named", err)
	}
}

// With no kubeconfig anywhere, Load says so instead of trying
// http://localhost:8080 as client-go would.
func TestLoadWithNoKubeconfig(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := Load(Options{}); !errors.Is(err, ErrNoKubeconfig) {
		t.Errorf("Load: %v, want ErrNoKubeconfig", err)
	}
	server := "https://k8s.example"
	flags := genericclioptions.NewConfigFlags(false)
	flags.APIServer = &server
	if _, err := Load(Options{Config: flags}); err != nil {
		t.Errorf("Load with --server: %v", err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
