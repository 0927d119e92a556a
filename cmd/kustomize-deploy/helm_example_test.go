package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// commitAll commits the working tree of the git repository dir.
func commitAll(t *testing.T, dir, message string) {
	t.Helper()
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", message}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// The repository Flux's guides send people to, as it was laid out before
// Flux 2.7 (testdata/helm-example), runs with `apply --config` from an
// empty cluster with no Flux CRDs or controllers: the infrastructure's
// charts (one with a CRD and a pre-install hook), a custom resource of
// that CRD in the next unit, an app chart whose values come from a SOPS
// Secret, in dependency order; a re-run writes nothing; a values change
// and a chart bump show as the rendered Deployment's change; a
// HelmRelease that leaves Git is pruned.
func TestConfigRunsTheHelmExample(t *testing.T) {
	c := newCLI(t)
	charts := filepath.Join("..", "..", "testdata", "charts")
	repo := helmtest.NewRepository(t,
		helmtest.Chart{Dir: filepath.Join(charts, "ingress")},
		helmtest.Chart{Dir: filepath.Join(charts, "certs")},
		helmtest.Chart{Dir: filepath.Join(charts, "web"), Version: "1.0.0", AppVersion: "1.0"},
		helmtest.Chart{Dir: filepath.Join(charts, "web"), Version: "1.1.0", AppVersion: "1.1"})
	dir := gitFixture(t, "helm-example", "NAMESPACE", c.ns, "REPO_URL", repo.URL)
	key := newKey(t)
	password := "helm-example-pw-" + c.ns[len(c.ns)-5:]
	encryptFile(t, key, filepath.Join(dir, "apps", "local", "web-values.enc.yaml"),
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: web-values\nstringData:\n  values.yaml: |\n    password: "+password+"\n",
		formats.Yaml, sopstest.K8sSecretRegex)
	commitAll(t, dir, "app values")
	c.env["SOPS_AGE_KEY"] = key.Identity
	k := cluster.Client(t)
	dyn := dynamic.NewForConfigOrDie(cluster.Config)
	issuers := schema.GroupVersionResource{Group: "certs.helm-example.test", Version: "v1", Resource: "clusterissuers"}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, suffix := range []string{"-ingress", "-certs", "-apps"} {
			_ = k.CoreV1().Namespaces().Delete(ctx, c.ns+suffix, metav1.DeleteOptions{})
		}
		_ = dyn.Resource(issuers).Delete(ctx, c.ns+"-selfsigned", metav1.DeleteOptions{})
		_ = k.NetworkingV1().IngressClasses().Delete(ctx, "nginx-"+c.ns+"-ingress", metav1.DeleteOptions{})
	})
	config := []string{"--config", filepath.Join(dir, "clusters", "local"), "--chart-cache", t.TempDir()}

	o, s := c.runConfig(append([]string{"apply"}, config...)...)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	for _, name := range []string{"infra-controllers", "infra-configs", "apps"} {
		if r := got[name]; r == nil || r.Reason != result.ReasonApplySucceed {
			t.Fatalf("unit %s: %+v", name, r)
		}
	}
	if got["infra-controllers"].StartedAt.After(got["infra-configs"].StartedAt) || got["infra-configs"].StartedAt.After(got["apps"].StartedAt) {
		t.Error("the units did not run in dependency order")
	}
	var hooks []string
	for _, e := range got["infra-controllers"].Entries {
		if e.Stage == result.StageHooks {
			hooks = append(hooks, e.Object.String()+" "+string(e.Action))
		}
	}
	if want := "Job/" + c.ns + "-certs/certs-apicheck created"; len(hooks) != 1 || hooks[0] != want {
		t.Errorf("hooks of infra-controllers: %q, want %q", hooks, want)
	}
	if _, err := k.BatchV1().Jobs(c.ns+"-certs").Get(t.Context(), "certs-apicheck", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the hook-succeeded apicheck Job is still there: %v", err)
	}
	ingress, err := k.AppsV1().Deployments(c.ns+"-ingress").Get(t.Context(), "ingress-controller", metav1.GetOptions{})
	if err != nil || *ingress.Spec.Replicas != 2 {
		t.Errorf("the ingress chart's Deployment (values replicas: 2): %v %v", err, ingress)
	}
	if _, err := dyn.Resource(issuers).Get(t.Context(), c.ns+"-selfsigned", metav1.GetOptions{}); err != nil {
		t.Errorf("infra-configs' ClusterIssuer, a kind the certs chart's CRD defines: %v", err)
	}
	web, err := k.AppsV1().Deployments(c.ns+"-apps").Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the app chart's Deployment: %v", err)
	}
	if env := web.Spec.Template.Spec.Containers[0].Env; *web.Spec.Replicas != 2 || len(env) != 1 || env[0].Value != password {
		t.Errorf("the app chart's Deployment: replicas %d (the overlay's patch says 2), env from the SOPS Secret's values %v", *web.Spec.Replicas, env != nil)
	}
	noPlaintext(t, map[string]string{"stdout": o.stdout, "stderr": o.stderr}, password)

	o, s = c.runConfig(append([]string{"apply"}, config...)...)
	for _, r := range s.Units {
		if r.Changed() || !r.Ready {
			t.Errorf("re-run: %s changed or not ready: %s %s %+v", r.Unit, r.Reason, r.Message, r.Counts)
		}
		for _, e := range r.Entries {
			if e.Stage == result.StageHooks {
				t.Errorf("re-run: %s ran hook %s", r.Unit, e.Object)
			}
		}
	}

	patch := filepath.Join(dir, "apps", "local", "release-patch.yaml")
	writeFile(t, patch, strings.Replace(readFile(t, patch), "replicas: 2", "replicas: 3", 1))
	release := filepath.Join(dir, "apps", "base", "web", "release.yaml")
	writeFile(t, release, strings.Replace(readFile(t, release), `version: "1.0.0"`, `version: "1.1.0"`, 1))
	commitAll(t, dir, "scale and bump the app")
	o = c.run(append([]string{"diff"}, config...)...)
	contains(t, "the diff of a values change and a chart bump", o.stdout,
		"Deployment/"+c.ns+"-apps/web", "-  replicas: 2\n+  replicas: 3", "-        image: registry.example/web:1.0\n+        image: registry.example/web:1.1")
	noPlaintext(t, map[string]string{"diff stdout": o.stdout, "diff stderr": o.stderr}, password)

	controllers := filepath.Join(dir, "infrastructure", "controllers", "kustomization.yaml")
	writeFile(t, controllers, strings.Replace(readFile(t, controllers), "- ingress.yaml\n", "", 1))
	if err := os.Remove(filepath.Join(dir, "infrastructure", "controllers", "ingress.yaml")); err != nil {
		t.Fatal(err)
	}
	commitAll(t, dir, "drop the ingress controller")
	o, s = c.runConfig(append([]string{"apply", "--force-prune"}, config...)...)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("apply without the ingress HelmRelease: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if _, err := k.AppsV1().Deployments(c.ns+"-ingress").Get(t.Context(), "ingress-controller", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ingress chart's Deployment after its HelmRelease left Git: %v", err)
	}
	if _, err := k.AppsV1().Deployments(c.ns+"-certs").Get(t.Context(), "certs", metav1.GetOptions{}); err != nil {
		t.Errorf("the certs chart's Deployment went with the ingress: %v", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
