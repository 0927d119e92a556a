package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/notify"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gitsource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

// access is how this run reaches its clusters.
func (r *runner) access() access {
	return access{in: r.in, mode: r.mode, getenv: r.env.Getenv, cloud: r.env.CloudClient, tempDir: r.env.TempDir, workspace: r.ev.WorkspaceDir, log: r.log, mask: r.maskValues,
		requests: r.env.Requests}
}

// access reaches the clusters the inputs name, and masks the credentials
// it finds on the way.
type access struct {
	in        Inputs
	mode      result.Mode
	getenv    func(string) string
	cloud     *http.Client // Env.CloudClient
	tempDir   string       // Env.TempDir
	workspace string       // relative paths in inputs are relative to it
	log       io.Writer
	mask      func(values ...string)
	requests  *kube.RequestCounter // Env.Requests
}

// connect reaches the cluster the inputs name: a managed cluster by name
// (eks-cluster, gke-cluster, aks-cluster: endpoint, CA and tokens from
// the job's cloud credentials, no kubeconfig, no CLI or exec plugin; each
// token is masked), else the kubeconfig input or $KUBECONFIG, else
// kubectl's defaults (in-cluster, ~/.kube/config). In diff mode with
// neither a managed cluster nor a kubeconfig it returns no clients: the
// diff is offline. cleanup removes what connect wrote.
func (a access) connect(ctx context.Context) (*kube.Clients, func(), error) {
	noop := func() {}
	if set := a.in.Cluster.Set(); len(set) > 0 {
		input := string(set[0])
		cfg, err := a.in.Cluster.Config(ctx, spec.Connect{
			Getenv: a.getenv, HTTPClient: a.cloud,
			Mask: func(token string) { a.mask(token) },
		})
		if err != nil {
			var oe *spec.OptionError
			if errors.As(err, &oe) {
				err = oe.Err
			}
			return nil, noop, fmt.Errorf("connecting to the cluster (input '%s'): %w", input, err)
		}
		clients, err := a.reached(ctx)(kube.New(cfg, "default", kube.Options{QPS: a.in.QPS, Burst: a.in.Burst, Requests: a.requests}))
		if err != nil {
			return nil, noop, fmt.Errorf("connecting to the cluster (input '%s'): %w", input, err)
		}
		fmt.Fprintf(a.log, "%s: %s\n", a.in.Cluster, cfg.Host)
		return clients, noop, nil
	}
	kc, cleanup, err := a.kubeconfig()
	if err != nil {
		return nil, noop, err
	}
	if a.mode == result.ModeDiff && kc == "" {
		return nil, cleanup, nil
	}
	clients, err := a.reached(ctx)(kube.Load(kube.Options{Config: kubeFlags(kc, a.in.Context), QPS: a.in.QPS, Burst: a.in.Burst, Requests: a.requests}))
	if err != nil {
		cleanup()
		return nil, noop, fmt.Errorf("connecting to the cluster (input 'kubeconfig'): %w", err)
	}
	return clients, cleanup, nil
}

// reached checks that the clients' API server answers, and says in the
// Action's words what to set when no cluster or no credential plugin was
// found.
func (a access) reached(ctx context.Context) func(*kube.Clients, error) (*kube.Clients, error) {
	return func(c *kube.Clients, err error) (*kube.Clients, error) {
		switch {
		case errors.Is(err, kube.ErrNoKubeconfig):
			return nil, fmt.Errorf("%w: set the input 'kubeconfig', or name a managed cluster with the input '%s', '%s' or '%s'",
				err, spec.OptEKSCluster, spec.OptGKECluster, spec.OptAKSCluster)
		case kube.Plugin(err) != "":
			return nil, fmt.Errorf("%w (input '%s')", err, spec.ClusterOption(kube.Plugin(err)))
		case err != nil:
			return nil, err
		}
		if err := c.Reach(ctx); err != nil {
			return nil, err
		}
		return c, nil
	}
}

// named connects to the cluster whose kubeconfig stands in for the
// kubeConfig Secret name: a kubeconfig-secrets line NAME=FILE (relative to
// the workspace) or NAME=$VARIABLE (the step's env holding the
// kubeconfig's contents or path).
func (a access) named(ctx context.Context, name string) (*kube.Clients, func(), error) {
	noop := func() {}
	v, ok := a.in.KubeconfigSecrets[name]
	if !ok {
		return nil, noop, fmt.Errorf("spec.kubeConfig names Secret %s: give its kubeconfig in the input 'kubeconfig-secrets' (%s=$VARIABLE or %s=FILE)", name, name, name)
	}
	v, from, err := a.secretLine("kubeconfig-secrets", name, v)
	if err != nil {
		return nil, noop, err
	}
	path, cleanup, err := a.kubeconfigFile(v, from)
	if err != nil {
		return nil, noop, err
	}
	c, err := a.reached(ctx)(kube.Load(kube.Options{Config: kubeFlags(path, ""), QPS: a.in.QPS, Burst: a.in.Burst, Requests: a.requests}))
	if err != nil {
		cleanup()
		return nil, noop, fmt.Errorf("connecting to the cluster (%s): %w", from, err)
	}
	return c, cleanup, nil
}

// secretLine resolves the value of line NAME=VALUE of input: VALUE is
// $VARIABLE (the step's env holding the contents, or for a kubeconfig a
// path) or a path relative to the workspace. from names it in errors,
// never quoting the value.
func (a access) secretLine(input, name, v string) (value, from string, err error) {
	from = fmt.Sprintf("input '%s' %s", input, name)
	if variable, ok := strings.CutPrefix(v, "$"); ok {
		if v = a.getenv(variable); v == "" {
			return "", from, fmt.Errorf("%s: the environment variable %s is empty or not set (set it in the step's env)", from, variable)
		}
		return v, from + " ($" + variable + ")", nil
	}
	if !filepath.IsAbs(v) && a.workspace != "" {
		v = filepath.Join(a.workspace, v)
	}
	return v, from, nil
}

// decryptionKeys are the private keys (age identities, PGP key blocks) of
// each decryption-secrets line, masked: a $VARIABLE holds them, a FILE is
// read.
func (a access) decryptionKeys() (map[string][]string, error) {
	out := map[string][]string{}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(a.in.DecryptionSecrets)) {
		v, from, err := a.secretContents("decryption-secrets", name, a.in.DecryptionSecrets[name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		keys, err := decrypt.ParseKeys([]byte(v))
		a.mask(keys...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", from, err))
			continue
		}
		out[name] = keys
	}
	return out, errors.Join(errs...)
}

// secretContents is what line of input holds for Secret name: the value
// of a $VARIABLE, or the contents of a FILE; from names it in errors.
func (a access) secretContents(input, name, line string) (v, from string, err error) {
	v, from, err = a.secretLine(input, name, line)
	if err != nil || strings.HasPrefix(line, "$") {
		return v, from, err
	}
	data, err := os.ReadFile(v)
	if err != nil {
		return "", from, fmt.Errorf("%s: %w", from, err)
	}
	return string(data), from, nil
}

// gitSecrets are the credentials of each git-secrets line, masked: a
// $VARIABLE holds them, a FILE is read; either is a Secret manifest or
// KEY=VALUE lines (gitsource.ParseAuth).
func (a access) gitSecrets() (map[string]gitsource.Auth, error) {
	return credentialsOf(a, "git-secrets", a.in.GitSecrets, gitsource.ParseAuth)
}

// ociSecrets are the registry credentials of each oci-secrets line,
// masked: a $VARIABLE holds them, a FILE is read; either is a Docker
// config.json or a dockerconfigjson Secret manifest
// (ocisource.ParseAuth).
func (a access) ociSecrets() (map[string]ocisource.Auth, error) {
	return credentialsOf(a, "oci-secrets", a.in.OCISecrets, ocisource.ParseAuth)
}

// secrets are the values of each secrets line, masked, standing in for
// the Secrets notification Providers name: a $VARIABLE holds them, a
// FILE is read; either is a Secret manifest or KEY=VALUE lines
// (notify.ParseSecret).
func (a access) secrets() (map[string]notify.Secret, error) {
	return credentialsOf(a, "secrets", a.in.Secrets, notify.ParseSecret)
}

// credentialsOf parses the credentials each line of input (NAME=$VARIABLE
// or NAME=FILE, lines by name) gives, masking their secrets as soon as
// parse finds them, even when it then refuses them.
func credentialsOf[T interface{ Secrets() []string }](a access, input string, lines map[string]string, parse func([]byte) (T, error)) (map[string]T, error) {
	out := map[string]T{}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(lines)) {
		v, from, err := a.secretContents(input, name, lines[name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		auth, err := parse([]byte(v))
		a.mask(auth.Secrets()...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", from, err))
			continue
		}
		out[name] = auth
	}
	return out, errors.Join(errs...)
}
