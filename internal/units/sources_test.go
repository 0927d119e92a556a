package units

import (
	"context"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testfs"
)

func TestParseSource(t *testing.T) {
	t.Parallel()
	ref, dir, err := ParseSource("GitRepository/flux-system/podinfo=../podinfo")
	if err != nil || ref != (config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "podinfo"}) || dir != "../podinfo" {
		t.Errorf("got %v %q %v", ref, dir, err)
	}
	for _, bad := range []string{"GitRepository/podinfo=dir", "GitRepository/flux-system/podinfo", "GitRepository/flux-system/podinfo=", "HelmRepository/a/b=dir", "GitRepository//b=dir", "=dir"} {
		if _, _, err := ParseSource(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A unit whose source cannot be resolved is mapped (so it fails when run,
// nothing built), not a problem of the whole configuration.
func TestUnitOfAnUnresolvedSourceFailsAlone(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testfs.Write(t, root, map[string]string{"istio/cm.yaml": "x"})
	set := &config.Set{
		Units: []*config.Unit{{Name: "istio", Ref: config.Ref{Namespace: "flux-system", Name: "istio"}, File: "istio.yaml", Line: 1, Path: "istio",
			Source: config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "istio"}}},
		Sources: []*config.Source{{Kind: "GitRepository", Ref: config.Ref{Namespace: "flux-system", Name: "istio"}, URL: "https://github.com/stefanprodan/gitops-istio"}},
	}
	c := Config{Set: set, Root: root, Identity: source.Identity{Remote: "https://github.com/acme/fleet"},
		Cluster: Clusters(func(string) (*kube.Clients, error) { return nil, nil })}
	list, err := c.Units(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("units %v, error %v", list, err)
	}
	if list[0].Err == nil || list[0].Options.Dir.Path != "" {
		t.Errorf("unit %+v: want an error and no directory to build", list[0])
	}
	res := unbuildable(list[0], "apply")
	if res.Reason != "ArtifactFailed" || !res.Failed() || res.Fix != string(source.FixMapSource) || strings.Contains(res.Message, "--source") {
		t.Errorf("result: %+v", res)
	}
	if err := CheckPaths(root, set); err != nil {
		t.Errorf("CheckPaths checked the path of another repository's unit: %v", err)
	}
}

// A source's Secret not given by name is read where Secrets are: the
// configuration's files, else the cluster (none without one).
func TestSecretLookup(t *testing.T) {
	t.Parallel()
	set := &config.Set{Values: []*config.Values{
		{Kind: "Secret", Ref: config.Ref{Namespace: "flux-system", Name: "git-auth"}, File: "clusters/prod/auth.yaml", Line: 1, Data: map[string]string{"username": "git", "password": "tok"}},
		{Kind: "Secret", Ref: config.Ref{Namespace: "flux-system", Name: "twice"}, File: "a.yaml", Line: 1, Data: map[string]string{}},
		{Kind: "Secret", Ref: config.Ref{Namespace: "flux-system", Name: "twice"}, File: "b.yaml", Line: 3, Data: map[string]string{}},
	}}
	c := Config{Set: set, Cluster: Clusters(func(string) (*kube.Clients, error) { return nil, nil })}
	data, found, err := c.secretLookup(t.Context(), "flux-system", "git-auth")
	if err != nil || !found || data["password"] != "tok" {
		t.Errorf("from the configuration: %v %v %v", data, found, err)
	}
	if _, found, err := c.secretLookup(t.Context(), "flux-system", "nowhere"); err != nil || found {
		t.Errorf("nowhere, no cluster: %v %v", found, err)
	}
	if _, _, err := c.secretLookup(t.Context(), "flux-system", "twice"); err == nil || !strings.Contains(err.Error(), "a.yaml:1, b.yaml:3") {
		t.Errorf("defined twice: %v", err)
	}
}
