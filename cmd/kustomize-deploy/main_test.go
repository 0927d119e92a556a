package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

var cluster *testcluster.Cluster

// asCommand, set in a process's environment, makes the test binary run as
// the command itself (see command): tests that send signals need a
// process of its own.
const asCommand = "KUSTOMIZE_DEPLOY_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asCommand) == "1" {
		main()
	}
	os.Exit(testcluster.Main(m, &cluster))
}

// cli runs the command line in-process against the test cluster and returns
// exit code, stdout and stderr. env adds environment variables.
type cli struct {
	t   *testing.T
	ns  string
	env map[string]string
	// cloud reaches the clouds' doubles (kmstest.Client); nil reaches none.
	cloud *http.Client
	// sigstore is the trust keyless signatures are verified against.
	sigstore ocisource.Sigstore
}

func newCLI(t *testing.T) *cli {
	return &cli{t: t, ns: cluster.Namespace(t), env: map[string]string{}}
}

type outcome struct {
	code           int
	stdout, stderr string
}

func (c *cli) run(args ...string) outcome {
	c.t.Helper()
	if len(args) > 0 && clusterCommands[args[0]] {
		args = append(args, c.clusterFlags()...)
	}
	return c.runAsIs(args...)
}

// clusterCommands take the test cluster's flags.
var clusterCommands = map[string]bool{"drift": true, "diff": true, "apply": true, "delete": true, "status": true, "history": true, "rollback": true, "suspend": true, "resume": true, "pin": true, "unpin": true}

// clusterFlags point a command at the test cluster and namespace.
func (c *cli) clusterFlags() []string {
	return []string{"--kubeconfig", cluster.Kubeconfig, "--inventory-namespace", c.ns}
}

// runAsIs runs the command line exactly as given.
func (c *cli) runAsIs(args ...string) outcome {
	c.t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdout: &out, stderr: &errOut, getenv: func(k string) string { return c.env[k] }, masker: mask.New(), cloud: c.cloud, sigstore: c.sigstore}
	code := runWith(context.Background(), args, e)
	return outcome{code, out.String(), errOut.String()}
}

// apply runs apply --output json and decodes the result.
func (c *cli) apply(args ...string) (outcome, *result.Result) {
	c.t.Helper()
	o := c.run(append([]string{"apply", "--output", "json", "--timeout", "60s"}, args...)...)
	var r result.Result
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		c.t.Fatalf("apply printed no JSON result (exit %d): %v\nstdout:\n%s\nstderr:\n%s", o.code, err, o.stdout, o.stderr)
	}
	return o, &r
}

// fixture copies testdata/name to a temp dir and returns its path, so tests
// can edit it and nothing is ever written to the repository.
func fixture(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	src := filepath.Join("testdata", name)
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func actions(r *result.Result) map[string]result.Action {
	m := map[string]result.Action{}
	for _, e := range r.Entries {
		m[e.Object.String()] = e.Action
	}
	return m
}

func wantActions(t *testing.T, r *result.Result, want map[string]result.Action) {
	t.Helper()
	got := actions(r)
	for id, a := range want {
		if got[id] != a {
			t.Errorf("%s: action %q, want %q (all: %v)", id, got[id], a, got)
		}
	}
}

func contains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not mention %q:\n%s", what, sub, s)
		}
	}
}

func runtimeClient(t *testing.T) client.Client {
	t.Helper()
	c, err := kube.New(cluster.Config, "default", kube.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c.Client
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
