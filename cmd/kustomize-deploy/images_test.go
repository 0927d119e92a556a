package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
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
