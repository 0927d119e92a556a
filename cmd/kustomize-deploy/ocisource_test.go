package main

import (
	"encoding/base64"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// dockerConfig is a Docker config.json holding username:password for
// host.
func dockerConfig(host, username, password string) string {
	return `{"auths": {"` + host + `": {"auth": "` + base64.StdEncoding.EncodeToString([]byte(username+":"+password)) + `"}}}`
}

// A Kustomization whose source is an OCIRepository (flux push artifact),
// at a local registry that wants credentials, is pulled at its spec.ref
// and deployed from the artifact with its revision: without the
// Secret's credentials it fails naming the flag that gives them, nothing
// applied and nothing of this checkout built in its stead; with wrong
// ones the registry's refusal is said; with them, the highest release in
// range lands and its revision is recorded. The password never shows.
func TestConfigPullsOCIRepository(t *testing.T) {
	c := newCLI(t)
	const password = "ocisrc-pw-2b7d1e"
	reg := helmtest.NewRegistryWithAuth(t, "flux", password)
	cm := func(name, v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: " + c.ns + "\ndata:\n  version: \"" + v + "\"\n"
	}
	push := func(tag, v string) string {
		return ocitest.Push(t, reg.Host+"/manifests/podinfo:"+tag, ocitest.Flux(t, map[string]string{"deploy/podinfo.yaml": cm("podinfo", v)},
			"https://github.com/acme/podinfo", "v"+v+"@sha1:0123456789abcdef0123456789abcdef01234567"), "flux", password, nil)
	}
	push("1.0.0", "1.0.0")
	digest := push("1.1.0", "1.1.0")
	push("2.0.0", "2.0.0")
	push("latest", "2.0.0")

	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "deploy/wrong-tree.yaml"), cm("wrong-tree", "0"))
	url := "oci://" + reg.Host + "/manifests/podinfo"
	writeFile(t, filepath.Join(repo, "clusters/local/units.yaml"), `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: podinfo
  namespace: `+c.ns+`
spec:
  interval: 5m
  url: `+url+`
  ref:
    semver: ">=1.0.0 <2.0.0"
  secretRef:
    name: regcred
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: podinfo
  namespace: `+c.ns+`
spec:
  interval: 10m
  sourceRef:
    kind: OCIRepository
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
		t.Fatalf("no --oci-secret: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	r := unitsByName(s)["podinfo"]
	if r == nil || r.Reason != result.ReasonArtifactFailed || len(r.Entries) != 0 {
		t.Fatalf("no --oci-secret: %+v", r)
	}
	contains(t, "its message", r.Message, "OCIRepository "+c.ns+"/podinfo (clusters/local/units.yaml:1, "+url+" at semver >=1.0.0 <2.0.0)",
		"spec.secretRef names Secret regcred")
	contains(t, "its hint", o.stderr, "hint: --oci-secret NAME=FILE")

	// A wrong password: refused by the registry, said so.
	wrong := filepath.Join(t.TempDir(), "wrong.json")
	writeFile(t, wrong, dockerConfig(reg.Host, "flux", "ocisrc-wrong-0000"))
	o, s = c.runConfig("apply", "--config", config, "--oci-secret", "regcred="+wrong)
	if r := unitsByName(s)["podinfo"]; o.code != exitFail || r == nil || r.Reason != result.ReasonArtifactFailed {
		t.Fatalf("wrong password: exit %d %+v\n%s", o.code, r, o.stderr)
	} else {
		contains(t, "its message", r.Message, "the credentials given for spec.secretRef were refused", "give the credentials of Secret regcred")
		contains(t, "its hint", o.stderr, "hint: --oci-secret NAME=FILE")
	}
	if strings.Contains(o.stdout+o.stderr, "ocisrc-wrong-0000") {
		t.Errorf("the wrong password shows:\n%s\n%s", o.stdout, o.stderr)
	}
	if inv, _ := inventory.Load(t.Context(), runtimeClient(t), c.ns, "podinfo"); inv != nil {
		t.Errorf("an inventory was written for the unit that built nothing: %+v", inv)
	}

	// With the password (a dockerconfigjson Secret manifest): the highest
	// release in range.
	secret := filepath.Join(t.TempDir(), "regcred.yaml")
	writeFile(t, secret, "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\nmetadata:\n  name: regcred\ndata:\n  .dockerconfigjson: "+
		base64.StdEncoding.EncodeToString([]byte(dockerConfig(reg.Host, "flux", password)))+"\n")
	o, s = c.runConfig("apply", "--config", config, "--oci-secret", "regcred="+secret, "--verbose")
	if o.code != exitOK || !s.Ready {
		t.Fatalf("with --oci-secret: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	want := "1.1.0@" + digest
	if r := unitsByName(s)["podinfo"]; r.Revision != want || !slices.Equal(entryIDs(s)["podinfo"], []string{"ConfigMap/" + c.ns + "/podinfo"}) {
		t.Errorf("revision %q (want %s), objects %q", r.Revision, want, entryIDs(s)["podinfo"])
	}
	contains(t, "the notes", o.stderr, "is pulled from "+url+": revision "+want+" (origin revision v1.1.0@sha1:0123456789abcdef0123456789abcdef01234567 of https://github.com/acme/podinfo)")
	got, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "podinfo", metav1.GetOptions{})
	if err != nil || got.Data["version"] != "1.1.0" {
		t.Errorf("podinfo: %v %v; want the 1.1.0 artifact's", err, got)
	}
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "wrong-tree", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("this checkout's ./deploy was applied: %v", err)
	}
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "podinfo")
	if err != nil || inv == nil || inv.Status.LastAppliedRevision != want {
		t.Errorf("inventory: %v %+v; want revision %s", err, inv, want)
	}
	if strings.Contains(o.stdout+o.stderr, password) {
		t.Errorf("the password shows:\n%s\n%s", o.stdout, o.stderr)
	}

	// Not pulled when told so: failing as any source that cannot be had.
	o, s = c.runConfig("apply", "--config", config, "--fetch-sources=false")
	if r := unitsByName(s)["podinfo"]; o.code != exitFail || r == nil || r.Reason != result.ReasonArtifactFailed || r.Fix != "fetch-sources" || !strings.Contains(o.stderr, "hint: --fetch-sources") {
		t.Errorf("--fetch-sources=false: exit %d %+v", o.code, r)
	}
}

// An OCIRepository with spec.serviceAccountName (d2-fleet's tenants) logs
// in with the pull secrets of that account, read from the cluster as
// source-controller reads them; the password shows nowhere.
func TestConfigPullsOCIRepositoryAsItsServiceAccount(t *testing.T) {
	c := newCLI(t)
	const password = "ocisa-pw-7f3a21"
	reg := helmtest.NewRegistryWithAuth(t, "flux", password)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: infra\n  namespace: " + c.ns + "\ndata:\n  from: artifact\n"
	ocitest.Push(t, reg.Host+"/d2-infra/tenant:latest", ocitest.Flux(t, map[string]string{"deploy/cm.yaml": cm},
		"https://github.com/acme/d2-infra", "main@sha1:0123456789abcdef0123456789abcdef01234567"), "flux", password, nil)
	k := cluster.Client(t)
	if _, err := k.CoreV1().Secrets(c.ns).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ghcr-auth"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{".dockerconfigjson": []byte(dockerConfig(reg.Host, "flux", password))}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.CoreV1().ServiceAccounts(c.ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "flux"},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "ghcr-auth"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "clusters/local/units.yaml"), `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: infra
  namespace: `+c.ns+`
spec:
  interval: 5m
  serviceAccountName: flux
  url: oci://`+reg.Host+`/d2-infra/tenant
  ref:
    tag: latest
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: infra
  namespace: `+c.ns+`
spec:
  interval: 10m
  sourceRef:
    kind: OCIRepository
    name: infra
  path: ./deploy
  prune: true
`)
	initRepo(t, repo, "git@github.com:acme/fleet.git")
	o, s := c.runConfig("apply", "--config", filepath.Join(repo, "clusters/local"))
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if got, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "infra", metav1.GetOptions{}); err != nil || got.Data["from"] != "artifact" {
		t.Errorf("the artifact's ConfigMap: %v %v", err, got)
	}
	if strings.Contains(o.stdout+o.stderr, password) {
		t.Error("the password shows")
	}
}
