package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// diff --offline on a laptop gives what a pull request without cluster
// access gets from the Action: the working tree's rendered manifests
// against a commit's, for one unit or a whole configuration, with no
// cluster at all (the kubeconfig named does not exist).
func TestDiffOfflineAgainstABase(t *testing.T) {
	c := newCLI(t)
	repo := fluxRepo(t, "shop")
	writeFile(t, filepath.Join(repo, "apps", "frontend", "configmap.yaml"),
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: frontend\ndata:\n  page: home.html\n")
	noCluster := []string{"--kubeconfig", filepath.Join(t.TempDir(), "none")}

	o := c.runAsIs(append([]string{"diff", "--config", filepath.Join(repo, "clusters", "local"), "--base", "HEAD", "--offline", "-o", "json"}, noCluster...)...)
	set := decodeSet(t, o)
	if o.code != exitOK || !set.Ready {
		t.Fatalf("diff --config --offline: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	byName := unitsByName(set)
	front := byName["webapp-frontend"]
	if front == nil || front.Reason != result.ReasonOfflineDiffSucceed || front.Counts.Configured != 1 {
		t.Fatalf("webapp-frontend: %+v", front)
	}
	if d := front.Entries[0].Diff; !strings.Contains(d, "-  page: index.html\n+  page: home.html") {
		t.Errorf("frontend diff:\n%s", d)
	}
	for name, r := range byName {
		if name != "webapp-frontend" && r.Changed() {
			t.Errorf("unit %s changed offline although only the frontend did: %+v", name, r.Counts)
		}
	}

	o = c.runAsIs(append([]string{"diff", "--name", "frontend", "--path", filepath.Join(repo, "apps", "frontend"), "--base", "HEAD", "--offline"}, noCluster...)...)
	if o.code != exitOK || !strings.Contains(o.stdout, "+  page: home.html") {
		t.Errorf("diff --path --offline: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}

	o = c.runAsIs(append([]string{"diff", "--name", "frontend", "--path", filepath.Join(repo, "apps", "frontend"), "--offline"}, noCluster...)...)
	if o.code != exitUsage || !strings.Contains(o.stderr, "--offline needs --base") {
		t.Errorf("--offline without --base: exit %d\n%s", o.code, o.stderr)
	}
}

// decodeSet decodes a --config command's JSON output.
func decodeSet(t *testing.T, o outcome) *result.Set {
	t.Helper()
	var s result.Set
	if err := json.Unmarshal([]byte(o.stdout), &s); err != nil {
		t.Fatalf("no JSON set (exit %d): %v\nstdout:\n%s\nstderr:\n%s", o.code, err, o.stdout, o.stderr)
	}
	return &s
}
