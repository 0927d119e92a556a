package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A Kustomization whose GitRepository is another repository, served by a
// local Git server that wants a token, is fetched at its spec.ref and
// deployed from that tree with its revision: without the Secret's
// credentials it fails naming the flag that gives them, nothing applied
// and nothing of this checkout built in its stead; with them, the tagged
// tree lands and the tag's revision is recorded. The token never shows.
func TestConfigFetchesGitRepository(t *testing.T) {
	c := newCLI(t)
	const token = "gitsrc-token-7f3a9c"
	srv := gittest.NewServer(t)
	podinfo := srv.Repo("podinfo")
	cm := func(name, v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: " + c.ns + "\ndata:\n  version: \"" + v + "\"\n"
	}
	podinfo.Commit("one", map[string]string{"deploy/podinfo.yaml": cm("podinfo", "1.0.0")})
	tagged := podinfo.Commit("two", map[string]string{"deploy/podinfo.yaml": cm("podinfo", "1.1.0")})
	podinfo.Tag("v1.1.0", true)
	podinfo.Commit("three", map[string]string{"deploy/podinfo.yaml": cm("podinfo", "2.0.0-unreleased")})
	srv.RequireAuth("podinfo", "git", token)

	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "deploy/wrong-tree.yaml"), cm("wrong-tree", "0"))
	writeFile(t, filepath.Join(repo, "clusters/local/units.yaml"), `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: podinfo
  namespace: `+c.ns+`
spec:
  interval: 5m
  url: `+podinfo.URL+`
  ref:
    semver: ">=1.0.0 <2.0.0"
  secretRef:
    name: podinfo-auth
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: podinfo
  namespace: `+c.ns+`
spec:
  interval: 10m
  sourceRef:
    kind: GitRepository
    name: podinfo
  path: ./deploy
  prune: true
`)
	initRepo(t, repo, "git@github.com:acme/fleet.git")
	config := filepath.Join(repo, "clusters/local")
	k := cluster.Client(t)

	// The Secret not given: the unit fails, naming it and the flag.
	o, s := c.runConfig("apply", "--config", config)
	if o.code != exitFail || s.Ready {
		t.Fatalf("no --git-secret: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	r := unitsByName(s)["podinfo"]
	if r == nil || r.Reason != result.ReasonArtifactFailed || len(r.Entries) != 0 {
		t.Fatalf("no --git-secret: %+v", r)
	}
	contains(t, "its message", r.Message, "GitRepository "+c.ns+"/podinfo (clusters/local/units.yaml:1, "+podinfo.URL+" at semver >=1.0.0 <2.0.0)",
		"spec.secretRef names Secret podinfo-auth")
	contains(t, "its hint", o.stderr, "hint: --git-secret NAME=FILE")

	// A wrong token: refused by the server, said so.
	wrong := filepath.Join(t.TempDir(), "wrong.env")
	writeFile(t, wrong, "username=git\npassword=gitsrc-wrong-0000\n")
	o, s = c.runConfig("apply", "--config", config, "--git-secret", "podinfo-auth="+wrong)
	if r := unitsByName(s)["podinfo"]; o.code != exitFail || r == nil || r.Reason != result.ReasonArtifactFailed {
		t.Fatalf("wrong token: exit %d %+v\n%s", o.code, r, o.stderr)
	} else {
		contains(t, "its message", r.Message, "the credentials given for spec.secretRef were refused", "give the credentials of Secret podinfo-auth")
		contains(t, "its hint", o.stderr, "hint: --git-secret NAME=FILE")
	}
	if strings.Contains(o.stdout+o.stderr, "gitsrc-wrong-0000") {
		t.Errorf("the wrong token shows:\n%s\n%s", o.stdout, o.stderr)
	}
	if inv, _ := inventory.Load(t.Context(), runtimeClient(t), c.ns, "podinfo"); inv != nil {
		t.Errorf("an inventory was written for the unit that built nothing: %+v", inv)
	}

	// With the token (a Secret manifest): the highest release in range.
	secret := filepath.Join(t.TempDir(), "podinfo-auth.yaml")
	writeFile(t, secret, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: podinfo-auth\nstringData:\n  username: git\n  password: "+token+"\n")
	o, s = c.runConfig("apply", "--config", config, "--git-secret", "podinfo-auth="+secret, "--verbose")
	if o.code != exitOK || !s.Ready {
		t.Fatalf("with --git-secret: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	want := "v1.1.0@sha1:" + tagged
	if r := unitsByName(s)["podinfo"]; r.Revision != want || !slices.Equal(entryIDs(s)["podinfo"], []string{"ConfigMap/" + c.ns + "/podinfo"}) {
		t.Errorf("revision %q (want %s), objects %q", r.Revision, want, entryIDs(s)["podinfo"])
	}
	contains(t, "the notes", o.stderr, "fetched from "+podinfo.URL+": revision "+want)
	got, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "podinfo", metav1.GetOptions{})
	if err != nil || got.Data["version"] != "1.1.0" {
		t.Errorf("podinfo: %v %v; want the tagged tree's", err, got)
	}
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "wrong-tree", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("this checkout's ./deploy was applied: %v", err)
	}
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "podinfo")
	if err != nil || inv == nil || inv.Status.LastAppliedRevision != want {
		t.Errorf("inventory: %v %+v; want revision %s", err, inv, want)
	}
	if strings.Contains(o.stdout+o.stderr, token) {
		t.Errorf("the token shows:\n%s\n%s", o.stdout, o.stderr)
	}

	// Not fetched when told so: failing as any source that cannot be had.
	o, s = c.runConfig("apply", "--config", config, "--fetch-sources=false")
	if r := unitsByName(s)["podinfo"]; o.code != exitFail || r == nil || r.Reason != result.ReasonArtifactFailed {
		t.Errorf("--fetch-sources=false: exit %d %+v", o.code, r)
	}
}

// A --git-secret, --oci-secret or --secret that does not read is a usage
// error naming the flag and the Secret, never quoting the file (all go
// through credentialFiles, each with its own parser).
func TestCredentialFlagErrors(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "clusters/local/units.yaml"), "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: a, namespace: "+c.ns+"}\nspec:\n  interval: 1m\n  sourceRef: {kind: GitRepository, name: flux-system}\n  path: ./a\n  prune: true\n")
	writeFile(t, filepath.Join(dir, "a/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: "+c.ns+"}\n")
	initRepo(t, dir, "git@github.com:acme/fleet.git")
	file := func(name, content string) string {
		p := filepath.Join(t.TempDir(), name)
		writeFile(t, p, content)
		return p
	}
	unknown := file("unknown.env", "username=git\ntoken=flag-secret-42\n")
	pastedToken := file("pasted.env", "flag-secret-43\n")
	opaque := file("opaque.yaml", "kind: Secret\ntype: Opaque\nstringData: {password: flag-secret-44}\n")
	pastedPassword := file("pasted.txt", "flag-secret-45\n")
	for _, tc := range []struct {
		flag, arg, want string
	}{
		{"--git-secret", "no-equals", `--git-secret "no-equals": want NAME=FILE`},
		{"--git-secret", "auth=" + filepath.Join(dir, "missing.env"), "--git-secret auth: open"},
		{"--git-secret", "auth=" + unknown, "--git-secret auth: keys token are not read"},
		{"--git-secret", "auth=" + pastedToken, "--git-secret auth: line 1 is neither KEY=VALUE nor part of a Secret manifest"},
		{"--oci-secret", "no-equals", `--oci-secret "no-equals": want NAME=FILE`},
		{"--oci-secret", "regcred=" + filepath.Join(dir, "missing.json"), "--oci-secret regcred: open"},
		{"--oci-secret", "regcred=" + opaque, "--oci-secret regcred: a Secret of type Opaque"},
		{"--oci-secret", "regcred=" + pastedPassword, "--oci-secret regcred: neither a Docker config.json nor a Secret manifest"},
		{"--secret", "no-equals", `--secret "no-equals": want NAME=FILE`},
		{"--secret", "slack=" + filepath.Join(dir, "missing.env"), "--secret slack: open"},
		{"--secret", "slack=" + pastedToken, "--secret slack: line 1 is neither KEY=VALUE nor part of a Secret manifest"},
		{"--secret", "slack=" + opaque + "x", "--secret slack: open"},
	} {
		o := c.run("apply", "--config", filepath.Join(dir, "clusters/local"), tc.flag, tc.arg)
		if o.code != exitUsage || !strings.Contains(o.stderr, tc.want) {
			t.Errorf("%s %s: exit %d, want %d saying %q\n%s", tc.flag, tc.arg, o.code, exitUsage, tc.want, o.stderr)
		}
		if strings.Contains(o.stdout+o.stderr, "flag-secret-") {
			t.Errorf("%s %s: the file's value shows:\n%s", tc.flag, tc.arg, o.stderr)
		}
	}
}
