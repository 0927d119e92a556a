package ecr_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/ecr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

const userID, userSecret = "AKIAECRTESTUSER00001", "ecr-test-secret-key-0000000000000000000"

// An OCIRepository with provider aws pulls its chart from a registry that
// takes only ECR's token: the token comes from ecr:GetAuthorizationToken,
// signed with the environment's AWS credentials, at the endpoint the
// environment names, as on a runner with aws-actions/configure-aws-credentials.
func TestProviderAWSPullsWithAnECRToken(t *testing.T) {
	srv := kmstest.New(t)
	srv.Setenv(t)
	srv.AddUser(userID, userSecret)
	kmstest.SetCredentials(t, userID, userSecret)
	reg := helmtest.NewRegistryWithAuth(t, "AWS", srv.ECRToken())
	reg.Push("charts", helmtest.Chart{Dir: "../../testdata/charts/web", Version: "1.0.0", AppVersion: "1.0"})

	var objs []*unstructured.Unstructured
	sources := map[object.ID]string{}
	for _, doc := range []string{
		"apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: web, namespace: apps}\nspec:\n  insecure: true\n  provider: aws\n  url: oci://" + reg.Host + "/charts/web\n  ref: {tag: 1.0.0}\n",
		"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: apps}\nspec:\n  interval: 10m\n  chartRef: {kind: OCIRepository, name: web}\n",
	} {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
		sources[object.IDOf(u)] = "apps/web/release.yaml"
	}
	out, err := helm.Expand(t.Context(), objs, sources, helm.Options{Fetcher: &helm.Fetcher{CacheDir: t.TempDir(), AWS: ecr.Login}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Charts) != 1 || out.Charts[0].Version != "1.0.0" {
		t.Fatalf("charts %+v", out.Charts)
	}
	if n := srv.Count("ECR.GetAuthorizationToken"); n != 1 {
		t.Errorf("GetAuthorizationToken called %d times", n)
	}

	// Without credentials, ECR refuses, and the error says so.
	kmstest.SetCredentials(t, "AKIAUNKNOWNUSER00001", "wrong")
	_, err = helm.Expand(t.Context(), objs, sources, helm.Options{Fetcher: &helm.Fetcher{CacheDir: t.TempDir(), AWS: ecr.Login}})
	if err == nil || !strings.Contains(err.Error(), "spec.provider aws: ECR registry "+reg.Host+": GetAuthorizationToken") || !strings.Contains(err.Error(), "UnrecognizedClient") {
		t.Errorf("with unknown credentials: %v", err)
	}
}
