package build

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// chunkFixture writes a plain directory (nested, no kustomization) with the
// kinds whose transformations could look across objects: RoleBindings to
// ServiceAccounts, webhooks naming Services, a cluster-scoped CRD and its
// custom resources, workloads with images.
func chunkFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Cluster
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`,
		"ns.yaml":  "apiVersion: v1\nkind: Namespace\nmetadata: {name: extra}\n",
		"sa.yaml":  "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: runner}\n",
		"rb.yaml":  "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: runner}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: runner}\nsubjects:\n- {kind: ServiceAccount, name: runner, namespace: default}\n- {kind: ServiceAccount, name: other}\n",
		"crb.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: runner}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\nsubjects:\n- {kind: ServiceAccount, name: runner, namespace: default}\n",
		"hook.yaml": `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: hook}
webhooks:
- name: hook.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {service: {name: hook, namespace: default}}
`,
	}
	for i := range 12 {
		files[fmt.Sprintf("apps/app-%02d/deploy.yaml", i)] = fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app-%02d}\nspec:\n  selector: {matchLabels: {app: app-%02d}}\n  template:\n    metadata: {labels: {app: app-%02d}}\n    spec:\n      serviceAccountName: runner\n      containers: [{name: app, image: registry.example/app:1.0}]\n", i, i, i)
		files[fmt.Sprintf("apps/app-%02d/svc.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: app-%02d}\nspec: {selector: {app: app-%02d}, ports: [{port: 80}]}\n", i, i)
		files[fmt.Sprintf("config/cm-%02d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%02d}\ndata: {index: \"%d\"}\n---\napiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: gadget-%02d}\n", i, i, i)
	}
	for name, content := range files {
		writeFile(t, filepath.Join(root, name), content)
	}
	return root
}

// A plain directory built in chunks gives exactly what one kustomize run
// gives: same objects, same order, same sources. (The fixture's bindings
// and webhooks are what caught a namespace leaking across chunks.)
func TestChunkedBuildMatchesOneRun(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]Options{
		"no transformations": {},
		"images, labels and annotations": {
			Images:      []Image{{Name: "registry.example/app", NewTag: "2.0"}},
			Labels:      map[string]string{"team": "shop"},
			Annotations: map[string]string{"owner": "shop@example.com"},
		},
		// Moving objects to another namespace updates references to them
		// (the ServiceAccount subjects of bindings): built in one run.
		"target namespace": {TargetNamespace: "shop"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			buildWith := func(size int) string {
				root := chunkFixture(t)
				opts.Root, opts.Path, opts.chunkSize = root, root, size
				return render(t, mustBuild(t, opts))
			}
			one, chunked := buildWith(1000), buildWith(5)
			if diff := cmp.Diff(one, chunked); diff != "" {
				t.Errorf("chunked build mismatch (-one run +chunked):\n%s", diff)
			}
		})
	}
}

func TestChunkedBuildRefusesDuplicatesAcrossChunks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\n")
	writeFile(t, filepath.Join(root, "b.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\n")
	_, err := build(t, Options{Root: root, Path: root, chunkSize: 1})
	wantErr(t, err, "ConfigMap/same is defined twice", "a.yaml", "b.yaml")
}
