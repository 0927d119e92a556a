package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// build --config renders every unit of a Flux repository without a
// cluster: one stream, each unit after its "# unit:" line, or one file per
// unit and their digests (a release snapshot); a unit that does not render
// is named and fails the command, the others still written.
func TestBuildConfigRendersEveryUnit(t *testing.T) {
	c := newCLI(t)
	repo := fluxRepo(t, c.ns)
	o := c.runAsIs("build", "--config", filepath.Join(repo, "clusters", "local"))
	if o.code != exitOK {
		t.Fatalf("exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	for _, unit := range []string{"flux-system", "webapp-common", "webapp-backend", "webapp-frontend", "monitoring", "istio"} {
		if !strings.Contains(o.stdout, "# unit: "+unit+"\n") {
			t.Errorf("the stream lacks unit %s:\n%s", unit, o.stdout)
		}
	}
	if !strings.Contains(o.stdout, "kind: Deployment") {
		t.Errorf("no objects rendered:\n%s", o.stdout)
	}

	snapshot := filepath.Join(t.TempDir(), "snapshot")
	if o := c.runAsIs("build", "--config", filepath.Join(repo, "clusters", "local"), "--output-dir", snapshot); o.code != exitOK {
		t.Fatalf("exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	sums, err := os.ReadFile(filepath.Join(snapshot, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	if len(lines) != 6 {
		t.Errorf("SHA256SUMS:\n%s", sums)
	}
	for _, l := range lines {
		sum, file, _ := strings.Cut(l, "  ")
		data, err := os.ReadFile(filepath.Join(snapshot, file))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: digest %s, file sums to %x", file, sum, got)
		}
	}

	writeFile(t, filepath.Join(repo, "apps", "backend", "kustomization.yaml"), "resources: [missing.yaml]\n")
	broken := c.runAsIs("build", "--config", filepath.Join(repo, "clusters", "local"))
	if broken.code == exitOK || !strings.Contains(broken.stderr, "unit webapp-backend") || !strings.Contains(broken.stdout, "# unit: webapp-frontend") {
		t.Errorf("a unit that does not render: exit %d\n%s%s", broken.code, broken.stdout, broken.stderr)
	}
	if o := c.runAsIs("build", "--path", repo, "--output-dir", snapshot); o.code != exitUsage {
		t.Errorf("--output-dir without --config: exit %d", o.code)
	}
}

// test --config says pass or fail per Kustomization without a cluster,
// and the dangers of what a unit creates: a binding to cluster-admin.
func TestTestConfigPassOrFailPerUnit(t *testing.T) {
	c := newCLI(t)
	repo := fluxRepo(t, c.ns)
	config := filepath.Join(repo, "clusters", "local")
	o := c.runAsIs("test", "--config", config)
	if o.code != exitOK || !strings.Contains(o.stdout, "6 of 6 unit(s) passed") {
		t.Fatalf("exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	writeFile(t, filepath.Join(repo, "apps", "frontend", "admin.yaml"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: frontend-admin}\n"+
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: frontend, namespace: default}]\n")
	writeFile(t, filepath.Join(repo, "apps", "backend", "kustomization.yaml"), "resources: [missing.yaml]\n")
	o = c.runAsIs("test", "--config", config)
	if o.code != exitFail {
		t.Errorf("exit %d, want a failure\n%s%s", o.code, o.stdout, o.stderr)
	}
	for _, want := range []string{"FAIL    webapp-backend", "PASS    webapp-frontend", "warning: unit webapp-frontend: ClusterRoleBinding/frontend-admin roleRef: binds cluster-admin", "5 of 6 unit(s) passed"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, o.stdout)
		}
	}
	js := c.runAsIs("test", "--config", config, "-o", "json")
	if set := decodeSet(t, js); js.code != exitFail || set.Ready || len(set.Units) != 6 {
		t.Errorf("json: exit %d, %+v", js.code, set)
	}
}
