package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// images lists every container's image of the workloads a unit renders,
// init containers and CronJobs included, an --image override applied, a
// custom resource's image field not guessed, and a chart's objects with
// their HelmRelease; an image a SOPS file decrypted is ***.
func TestImagesListsEveryContainer(t *testing.T) {
	c := newCLI(t)
	key := newKey(t)
	c.env["SOPS_AGE_KEY"] = key.Identity
	charts := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	chartUnit(t, dir, c.ns, charts.URL, "1.0.0", "    greeting: hello\n")
	writeFile(t, filepath.Join(dir, "api.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  selector: {matchLabels: {app: api}}\n"+
		"  template:\n    metadata: {labels: {app: api}}\n    spec:\n      initContainers: [{name: migrate, image: 'registry.example/api:1'}]\n      containers: [{name: api, image: 'registry.example/api:1'}]\n"+
		"---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {name: backup}\nspec:\n  schedule: '@daily'\n  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: backup, image: 'registry.example/backup:2'}]}}}}\n"+
		"---\napiVersion: example.com/v1\nkind: Database\nmetadata: {name: db}\nspec: {image: 'registry.example/db:16'}\n")
	encryptFile(t, key, filepath.Join(dir, "private.enc.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: private}\nspec:\n  containers: [{name: private, image: 'registry.internal/secret-tool:7'}]\n", formats.Yaml, "^image$")
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [repository.yaml, release.yaml, api.yaml, private.enc.yaml]\n")

	o := c.run("images", "--path", dir, "--chart-cache", t.TempDir(), "--image", "registry.example/backup=:3", "-o", "json")
	if o.code != exitOK {
		t.Fatalf("exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	var list []result.Image
	if err := json.Unmarshal([]byte(o.stdout), &list); err != nil {
		t.Fatalf("%v\n%s", err, o.stdout)
	}
	type row struct{ Image, Container, Object, Release string }
	var got []row
	for _, im := range list {
		container := im.Container
		if im.Init {
			container += " (init)"
		}
		got = append(got, row{im.Image, container, im.Object.String(), im.Release})
	}
	want := []row{
		{"registry.example/web:1.0", "web", "Deployment/" + c.ns + "/web", "HelmRelease/" + c.ns + "/web"},
		{"registry.example/api:1", "migrate (init)", "Deployment/api", ""},
		{"registry.example/api:1", "api", "Deployment/api", ""},
		{"registry.example/backup:3", "backup", "CronJob/backup", ""},
		{"***", "private", "Pod/private", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	text := c.run("images", "--path", dir, "--chart-cache", t.TempDir())
	if text.code != exitOK || !strings.Contains(text.stdout, "migrate (init)") || strings.Contains(text.stdout, "secret-tool") {
		t.Errorf("exit %d:\n%s%s", text.code, text.stdout, text.stderr)
	}
}

// --resolve-images pins each image to the digest its tag names in the
// registry (served in the test): images lists it, build prints it and
// apply deploys it; a tag the registry lacks fails the apply, naming the
// object and container, and nothing is applied.
func TestResolveImagesPinsDigests(t *testing.T) {
	c := newCLI(t)
	reg := helmtest.NewRegistry(t)
	digest := ocitest.Push(t, reg.Host+"/shop/web:1.4", ocitest.Flux(t, map[string]string{"a": "b"}, "src", "rev"), "", "", nil)
	dir := t.TempDir()
	deployment := func(tag string) {
		writeFile(t, filepath.Join(dir, "web.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n"+
			"  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: '"+reg.Host+"/shop/web:"+tag+"'}]\n")
	}
	deployment("1.4")
	pinned := reg.Host + "/shop/web:1.4@" + digest

	if o := c.run("images", "--path", dir, "--resolve-images"); o.code != exitOK || !strings.Contains(o.stdout, pinned) {
		t.Errorf("images: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if o := c.run("build", "--path", dir, "--resolve-images"); o.code != exitOK || !strings.Contains(o.stdout, "image: "+pinned) {
		t.Errorf("build: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if o := c.run("build", "--path", dir); strings.Contains(o.stdout, digest) {
		t.Errorf("build without --resolve-images pinned the image:\n%s", o.stdout)
	}
	o, res := c.apply("--name", "web", "--path", dir, "--target-namespace", c.ns, "--wait=false", "--resolve-images")
	if o.code != exitOK || !res.Ready {
		t.Fatalf("apply: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	live, err := cluster.Client(t).AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || live.Spec.Template.Spec.Containers[0].Image != pinned {
		t.Fatalf("the live image: %v %v", err, live)
	}

	deployment("9.9")
	o, res = c.apply("--name", "web", "--path", dir, "--target-namespace", c.ns, "--wait=false", "--resolve-images")
	if o.code == exitOK || !strings.Contains(res.Message, "Deployment/"+c.ns+"/web: container web: resolving image "+reg.Host+"/shop/web:9.9") {
		t.Errorf("apply of a missing tag: exit %d, %q\n%s", o.code, res.Message, o.stderr)
	}
	if live, _ := cluster.Client(t).AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{}); live.Spec.Template.Spec.Containers[0].Image != pinned {
		t.Errorf("a failed resolution changed the live image to %s", live.Spec.Template.Spec.Containers[0].Image)
	}
}

// With --config, --resolve-images asks a registry that wants credentials
// with those of the Secret the pod's imagePullSecrets name, as
// --oci-secret maps it (the credential model of OCI sources); without the
// mapping the unit fails, naming the object, the container and the
// refusal, and shows no credential.
func TestResolveImagesWithPullSecrets(t *testing.T) {
	c := newCLI(t)
	reg := helmtest.NewRegistryWithAuth(t, "robot", "pull-s3cret")
	digest := ocitest.Push(t, reg.Host+"/shop/web:1.4", ocitest.Flux(t, map[string]string{"a": "b"}, "src", "rev"), "robot", "pull-s3cret", nil)
	repo := t.TempDir()
	// Flux's own sync, as flux bootstrap writes it: its GitRepository is
	// this checkout.
	writeFile(t, filepath.Join(repo, "clusters", "local", "flux-system", "gotk-sync.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\n"+
		"spec: {interval: 1m, url: 'ssh://git@github.com/acme/fleet', ref: {branch: main}}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux-system, namespace: flux-system}\n"+
		"spec: {interval: 10m, path: ./clusters/local, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n")
	writeFile(t, filepath.Join(repo, "clusters", "local", "flux-system", "kustomization.yaml"), "resources: [gotk-sync.yaml]\n")
	writeFile(t, filepath.Join(repo, "clusters", "local", "web.yaml"), "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: web, namespace: flux-system}\n"+
		"spec: {interval: 10m, path: ./app, prune: true, targetNamespace: "+c.ns+", sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}}\n")
	writeFile(t, filepath.Join(repo, "app", "web.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n"+
		"  template:\n    metadata: {labels: {app: web}}\n    spec:\n      imagePullSecrets: [{name: regcred}]\n      containers: [{name: web, image: '"+reg.Host+"/shop/web:1.4'}]\n")
	for _, a := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "web"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, a...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", a, err, out)
		}
	}
	creds := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, creds, dockerConfig(reg.Host, "robot", "pull-s3cret"))
	args := []string{"apply", "--config", filepath.Join(repo, "clusters", "local"), "--root", repo, "--inventory-namespace", c.ns, "--resolve-images"}

	o := c.run(args...)
	if o.code == exitOK || !strings.Contains(o.stdout+o.stderr, "Deployment/"+c.ns+"/web: container web: resolving image "+reg.Host+"/shop/web:1.4") ||
		!strings.Contains(o.stdout+o.stderr, "no credentials for its registry were given") {
		t.Errorf("without --oci-secret: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	o = c.run(append(args, "--oci-secret", "regcred="+creds)...)
	if o.code != exitOK {
		t.Fatalf("with --oci-secret: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	live, err := cluster.Client(t).AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || live.Spec.Template.Spec.Containers[0].Image != reg.Host+"/shop/web:1.4@"+digest {
		t.Fatalf("the live image: %v %v", err, live)
	}
	if strings.Contains(o.stdout+o.stderr, "pull-s3cret") {
		t.Errorf("the output shows the registry password")
	}
}
