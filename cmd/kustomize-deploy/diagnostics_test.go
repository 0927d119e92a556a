package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// A Deployment no node can take and one whose container crashes: the text
// and the JSON name the scheduler's FailedScheduling with its message, the
// container's state, exit code and restarts, and its last lines of log
// (served by the test cluster's kwok kubelet: the lines are the test's).
func TestHealthCheckFailureSaysWhy(t *testing.T) {
	c := newCLI(t)
	cluster.ServeLogs(t, c.ns, testcluster.ContainerLog{Container: "api", Previous: []string{"connecting to db:5432", "fatal: password authentication failed"}})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [web.yaml, api.yaml]\n")
	writeFile(t, filepath.Join(dir, "web.yaml"), deploymentYAML("web", "", "      nodeSelector: {disktype: nowhere}\n"))
	writeFile(t, filepath.Join(dir, "api.yaml"), deploymentYAML("api", "        "+testcluster.CrashLabel+": \"3\"\n", ""))
	args := []string{"apply", "--name", "why", "--path", dir, "--target-namespace", c.ns, "--timeout", "10s"}

	o := c.run(args...)
	if o.code != exitFail {
		t.Fatalf("exit %d, want %d\n%s\n%s", o.code, exitFail, o.stdout, o.stderr)
	}
	contains(t, "the text", o.stdout, string(result.ReasonHealthCheckFailed),
		"Warning FailedScheduling", "didn't match Pod's node affinity/selector",
		"container api: waiting CrashLoopBackOff", "exit code 3", "3 restarts",
		"log of Pod/api-", "container api (previous instance), last 2 lines:", "  | fatal: password authentication failed")
	contains(t, "the progress", o.stderr, "warning: Deployment/"+c.ns+"/web: FailedScheduling on Pod/web-")

	js := c.run(append(args, "--output", "json")...)
	var r result.Result
	if err := json.Unmarshal([]byte(js.stdout), &r); err != nil {
		t.Fatalf("no JSON result: %v\n%s", err, js.stdout)
	}
	byName := map[string]result.Diagnostic{}
	for _, d := range r.Diagnostics {
		byName[d.Object.Name] = d
	}
	if web := byName["web"]; len(web.Events) == 0 || web.Events[0].Reason != "FailedScheduling" {
		t.Errorf("web's diagnostic = %+v, want FailedScheduling", web)
	}
	api := byName["api"]
	if len(api.Logs) == 0 || !api.Logs[0].Previous || strings.Join(api.Logs[0].Lines, "\n") != "connecting to db:5432\nfatal: password authentication failed" {
		t.Errorf("api's logs = %+v", api.Logs)
	}
	if len(api.Containers) == 0 || api.Containers[0].LastExitCode == nil || *api.Containers[0].LastExitCode != 3 {
		t.Errorf("api's containers = %+v", api.Containers)
	}
}

// deploymentYAML is a one-replica Deployment with extra pod labels and
// pod spec lines.
func deploymentYAML(name, labels, spec string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
spec:
  replicas: 1
  selector:
    matchLabels: {app: ` + name + `}
  template:
    metadata:
      labels:
        app: ` + name + `
` + labels + `    spec:
` + spec + `      containers:
      - name: ` + name + `
        image: registry.example/` + name + `:1
`
}

// A hook Job whose container fails: the failure says how (exit code)
// and what it printed, read before the hook's pods could go.
func TestFailedHookSaysWhy(t *testing.T) {
	c := newCLI(t)
	cluster.ServeLogs(t, c.ns, testcluster.ContainerLog{Container: "migrate", Lines: []string{"applying 0042_orders.sql", "ERROR: relation \"orders\" already exists"}})
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "hooked"), Version: "0.1.0"})
	dir := t.TempDir()
	hookedUnit(t, dir, c.ns, repo.URL, "    crashMigration: 2\n")
	o, r := c.apply("--name", "web", "--path", dir, "--chart-cache", t.TempDir())
	if o.code != exitFail {
		t.Fatalf("exit %d: %s %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "the message", r.Message, "pre-install hook Job/"+c.ns+"/web-migrate", "container migrate: terminated Error, exit code 2")
	if len(r.Diagnostics) != 1 || len(r.Diagnostics[0].Logs) != 1 || r.Diagnostics[0].Logs[0].Lines[1] != `ERROR: relation "orders" already exists` {
		t.Errorf("diagnostics = %+v, want the migration's log", r.Diagnostics)
	}
}
