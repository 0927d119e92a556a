package action

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfig resolves the kubeconfig input: a path to a file, or the file's
// contents, written 0600 in a directory of its own in Env.TempDir and
// removed by cleanup. Its credentials are masked. With no input,
// $KUBECONFIG is used if set; an empty path means no cluster access.
//
// Nothing of the input's contents is ever printed: a kubeconfig that does
// not parse is reported by line number only, since parser errors quote the
// value they choke on, which may be a token.
func (a access) kubeconfig() (string, func(), error) {
	noop := func() {}
	v := a.in.Kubeconfig
	if v == "" {
		if p := a.getenv("KUBECONFIG"); p != "" {
			return p, noop, a.maskKubeconfig(p, "KUBECONFIG")
		}
		return "", noop, nil
	}
	return a.kubeconfigFile(v, "input 'kubeconfig'")
}

// kubeconfigFile is the kubeconfig v, a path or contents, as a file (see
// kubeconfig); from names where v came from in errors.
func (a access) kubeconfigFile(v, from string) (string, func(), error) {
	noop := func() {}
	if !strings.Contains(v, "\n") {
		if _, err := os.Stat(v); err == nil {
			return v, noop, a.maskKubeconfig(v, from)
		}
		if !strings.Contains(v, "apiVersion") {
			return "", noop, fmt.Errorf("%s is neither a readable file nor kubeconfig contents (one line of %d characters; not shown, it may hold credentials)", from, len(v))
		}
	}
	cfg, err := clientcmd.Load([]byte(v))
	if err != nil {
		return "", noop, fmt.Errorf("%s is not a valid kubeconfig: %s", from, parseProblem(err))
	}
	a.maskConfig(cfg.AuthInfos)
	dir, err := os.MkdirTemp(a.tempDir, "kustomize-deploy-kubeconfig-*") // 0700
	if err != nil {
		return "", noop, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	path := dir + string(os.PathSeparator) + "kubeconfig"
	if err := os.WriteFile(path, []byte(v), 0o600); err != nil {
		cleanup()
		return "", noop, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return path, cleanup, nil
}

// maskKubeconfig masks the credentials in the kubeconfig file at path,
// named by from (the input or KUBECONFIG) in errors.
func (a access) maskKubeconfig(path, from string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return fmt.Errorf("%s: %s is not a valid kubeconfig: %s", from, path, parseProblem(err))
	}
	a.maskConfig(cfg.AuthInfos)
	return nil
}

// maskConfig masks every credential a kubeconfig user can hold.
func (a access) maskConfig(auths map[string]*clientcmdapi.AuthInfo) {
	for _, u := range auths {
		a.mask(u.Token, u.Password, string(u.ClientKeyData))
		if u.AuthProvider != nil {
			for _, v := range u.AuthProvider.Config {
				a.mask(v)
			}
		}
		if u.Exec != nil {
			for _, e := range u.Exec.Env {
				a.mask(e.Value)
			}
		}
	}
}

var lineNumber = regexp.MustCompile(`line (\d+)`)

// parseProblem describes a kubeconfig parse error without quoting the
// input: the line, if the parser named one.
func parseProblem(err error) string {
	if m := lineNumber.FindStringSubmatch(err.Error()); m != nil {
		return "YAML error at line " + m[1] + " (contents not shown, they may hold credentials)"
	}
	return "not YAML or JSON of a kubeconfig (contents not shown, they may hold credentials)"
}

// kubeFlags locates the cluster as the CLI's flags do, from a kubeconfig
// file and a context (empty: the current one).
func kubeFlags(kubeconfig, context string) *genericclioptions.ConfigFlags {
	f := genericclioptions.NewConfigFlags(true)
	f.KubeConfig, f.Context = &kubeconfig, &context
	return f
}
