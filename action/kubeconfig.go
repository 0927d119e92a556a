package action

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfig resolves the kubeconfig input: a path to a file, or the file's
// contents, written 0600 under RUNNER_TEMP and removed by cleanup. Its
// credentials are masked. With no input, $KUBECONFIG is used if set; an
// empty path means no cluster access.
func (r *runner) kubeconfig() (string, func(), error) {
	noop := func() {}
	v := r.in.Kubeconfig
	if v == "" {
		if p := r.env.Getenv("KUBECONFIG"); p != "" {
			return p, noop, r.maskKubeconfig(p)
		}
		return "", noop, nil
	}
	if !strings.Contains(v, "\n") {
		if _, err := os.Stat(v); err == nil {
			return v, noop, r.maskKubeconfig(v)
		}
		if !strings.Contains(v, "apiVersion") {
			return "", noop, fmt.Errorf("input 'kubeconfig': %q is neither a readable file nor kubeconfig contents", v)
		}
	}
	cfg, err := clientcmd.Load([]byte(v))
	if err != nil {
		return "", noop, fmt.Errorf("input 'kubeconfig' is not a valid kubeconfig: %w", err)
	}
	r.maskConfig(cfg.AuthInfos)
	f, err := os.CreateTemp(r.env.Getenv("RUNNER_TEMP"), "kustomize-deploy-kubeconfig-*")
	if err != nil {
		return "", noop, err
	}
	cleanup := func() { _ = os.Remove(f.Name()) }
	if err := f.Chmod(0o600); err == nil {
		_, err = f.WriteString(v)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return "", noop, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return f.Name(), cleanup, nil
}

func (r *runner) maskKubeconfig(path string) error {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	r.maskConfig(cfg.AuthInfos)
	return nil
}

func (r *runner) maskConfig(auths map[string]*clientcmdapi.AuthInfo) {
	for _, a := range auths {
		r.maskValues(a.Token, a.Password, string(a.ClientKeyData))
	}
}

// kubeFlags locates the cluster as the CLI's flags do, from a kubeconfig
// file and a context (empty: the current one).
func kubeFlags(kubeconfig, context string) *genericclioptions.ConfigFlags {
	f := genericclioptions.NewConfigFlags(true)
	f.KubeConfig, f.Context = &kubeconfig, &context
	return f
}
