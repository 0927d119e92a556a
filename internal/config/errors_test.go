package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readCase reads testdata/cases/name, a file or a directory, with
// testdata/cases as the repository root.
func readCase(t *testing.T, name string) (*Set, error) {
	t.Helper()
	root := testRoot(t, "cases")
	return Read(root, filepath.Join(root, name))
}

func mustReadCase(t *testing.T, name string) *Set {
	t.Helper()
	set, err := readCase(t, name)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestReadErrors checks every problem Read reports, word for word: a
// user fixes a repository from these lines alone.
func TestReadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string // under testdata/cases
		want []string
	}{
		// Unknown fields anywhere, each named by its path; every one is reported, with what else is wrong.
		{"unknown-fields.yaml", []string{
			"unknown-fields.yaml:13: Kustomization flux-system/apps: spec.sourceRef.namespase: unknown field",
			"unknown-fields.yaml:16: Kustomization flux-system/apps: spec.dependsOn[1].nmae: unknown field",
			"unknown-fields.yaml:16: Kustomization flux-system/apps: spec.dependsOn[1].name: required",
			"unknown-fields.yaml:18: Kustomization flux-system/apps: spec.healthChecks[0].kind: required",
			"unknown-fields.yaml:19: Kustomization flux-system/apps: spec.healthChecks[0].kindd: unknown field",
			"unknown-fields.yaml:27: Kustomization flux-system/apps: spec.patches[0].target.lableSelector: unknown field",
			"unknown-fields.yaml:30: Kustomization flux-system/apps: spec.images[0].newname: unknown field",
			"unknown-fields.yaml:34: Kustomization flux-system/apps: spec.decryption.secretRef.name: required",
			"unknown-fields.yaml:34: Kustomization flux-system/apps: spec.decryption.secretRef.nam: unknown field",
			"unknown-fields.yaml:36: Kustomization flux-system/apps: spec.postBuild.substitutez: unknown field",
			"unknown-fields.yaml:38: Kustomization flux-system/apps: spec.driftIgnoreRules: unknown field (Flux's drift ignore rules are spec.ignore)",
			"unknown-fields.yaml:40: Kustomization flux-system/apps: specs: unknown field",
		}},
		// The per-unit helm-controller switch takes true or false.
		{"helm-controller-bad.yaml", []string{
			"helm-controller-bad.yaml:6: Kustomization flux-system/apps: metadata.annotations[kustomize-deploy.dev/helm-controller]: want \"true\" or \"false\", got \"yes\"",
		}},
		// Tags are letters, digits, '.', '_' and '-'.
		{"tags-bad.yaml", []string{
			"tags-bad.yaml:6: Kustomization flux-system/apps: metadata.annotations[kustomize-deploy.dev/tags]: tag \"two words\": want letters, digits, '.', '_' and '-', starting and ending with a letter or digit",
		}},
		// ArtifactGenerators: what would make another artifact than Flux's
		// is refused, each named.
		{"artifact-generator.yaml", []string{
			"artifact-generator.yaml:7: ArtifactGenerator flux-system/split: spec.pathPattern: not supported: kustomize-deploy does not discover artifacts from a source's directories yet; list them in spec.artifacts",
			"artifact-generator.yaml:12: ArtifactGenerator flux-system/split: spec.sources[1].alias: \"Repo!\" is not an alias: lower-case letters, digits, - and _",
			"artifact-generator.yaml:17: ArtifactGenerator flux-system/split: spec.artifacts[0].revision: \"@nowhere\" names no alias of spec.sources (write \"@alias\")",
			"artifact-generator.yaml:19: ArtifactGenerator flux-system/split: spec.artifacts[0].copy[0].from: \"@other/apps/**\" names no alias of spec.sources",
			"artifact-generator.yaml:22: ArtifactGenerator flux-system/split: spec.artifacts[0].copy[1].to: \"artifact/charts/\" is not @artifact/path",
			"artifact-generator.yaml:24: ArtifactGenerator flux-system/split: spec.artifacts[1].copy: required",
			"artifact-generator.yaml:26: ArtifactGenerator: apiVersion: \"source.extensions.fluxcd.io/v1beta2\" is not a version kustomize-deploy reads: use source.extensions.fluxcd.io/v1beta1",
		}},
		// CEL health checks need a kind and a current expression.
		{"cel.yaml", []string{
			"cel.yaml:17: Kustomization flux-system/apps: spec.healthCheckExprs[0].kind: required",
			"cel.yaml:17: Kustomization flux-system/apps: spec.healthCheckExprs[0].current: required",
			"cel.yaml:19: Kustomization flux-system/apps: spec.healthCheckExprs[1].apiVersion: required",
			"cel.yaml:21: Kustomization flux-system/apps: spec.healthCheckExprs[1].curent: unknown field",
		}},
		// Fields Flux has that kustomize-deploy cannot honour.
		{"unsupported.yaml", []string{
			"unsupported.yaml:22: Kustomization flux-system/apps: spec.decryption.serviceAccountName: not supported: cloud workload identity is not available to kustomize-deploy; AWS KMS keys are used with the ambient AWS credentials, other keys come from spec.decryption.secretRef or kustomize-deploy's own options",
			"unsupported.yaml:24: Kustomization flux-system/apps: spec.kubeConfig.configMapRef: not supported: secret-less access to remote clusters (workload identity) is not available to kustomize-deploy; use spec.kubeConfig.secretRef",
			"unsupported.yaml:40: Kustomization flux-system/vault: spec.decryption.provider: \"vault\" is not supported: the only provider is \"sops\"",
		}},
		// v1beta1 has neither the fields added since nor the {name, namespace} serviceAccount dropped before it.
		{"v1beta1-old-fields.yaml", []string{
			"v1beta1-old-fields.yaml:13: Kustomization flux-system/apps: spec.serviceAccount: unknown field (Flux's field is spec.serviceAccountName)",
			"v1beta1-old-fields.yaml:16: Kustomization flux-system/apps: spec.wait: unknown field in kustomize.toolkit.fluxcd.io/v1beta1 (only v1beta2 and v1 have it)",
			"v1beta1-old-fields.yaml:17: Kustomization flux-system/apps: spec.components: unknown field in kustomize.toolkit.fluxcd.io/v1beta1 (only v1beta2 and v1 have it)",
			"v1beta1-old-fields.yaml:19: Kustomization flux-system/apps: spec.commonMetadata: unknown field in kustomize.toolkit.fluxcd.io/v1beta1 (only v1beta2 and v1 have it)",
			"v1beta1-old-fields.yaml:22: Kustomization flux-system/apps: spec.deletionPolicy: unknown field in kustomize.toolkit.fluxcd.io/v1beta1 (only v1 has it)",
			"v1beta1-old-fields.yaml:26: Kustomization flux-system/apps: spec.kubeConfig.secretRef.key: unknown field in kustomize.toolkit.fluxcd.io/v1beta1 (only v1beta2 and v1 have it)",
			"v1beta1-old-fields.yaml:31: Kustomization flux-system/apps: spec.postBuild.substituteFrom[0].optional: unknown field in kustomize.toolkit.fluxcd.io/v1beta1 (only v1beta2 and v1 have it)",
		}},
		// v1 dropped validation and the old patch fields.
		{"v1-old-fields.yaml", []string{
			"v1-old-fields.yaml:13: Kustomization flux-system/apps: spec.validation: unknown field in kustomize.toolkit.fluxcd.io/v1 (only v1beta1 and v1beta2 have it)",
			"v1-old-fields.yaml:14: Kustomization flux-system/apps: spec.patchesStrategicMerge: unknown field in kustomize.toolkit.fluxcd.io/v1 (only v1beta1 and v1beta2 have it; v1 has spec.patches)",
			"v1-old-fields.yaml:19: Kustomization flux-system/apps: spec.patchesJson6902: unknown field in kustomize.toolkit.fluxcd.io/v1 (only v1beta1 and v1beta2 have it; v1 has spec.patches)",
		}},
		// v1beta2 lacks v1's newer fields.
		{"v1beta2-fields.yaml", []string{
			"v1beta2-fields.yaml:13: Kustomization flux-system/apps: spec.namePrefix: unknown field in kustomize.toolkit.fluxcd.io/v1beta2 (only v1 has it)",
			"v1beta2-fields.yaml:14: Kustomization flux-system/apps: spec.ignore: unknown field in kustomize.toolkit.fluxcd.io/v1beta2 (only v1 has it)",
			"v1beta2-fields.yaml:17: Kustomization flux-system/apps: spec.postBuild.substituteStrategy: unknown field in kustomize.toolkit.fluxcd.io/v1beta2 (only v1 has it)",
		}},
		// A Flux version this reader does not know is not silently skipped.
		{"unknown-version.yaml", []string{
			"unknown-version.yaml:1: Kustomization default/apps: apiVersion: \"kustomize.toolkit.fluxcd.io/v2\" is not a version kustomize-deploy reads: use kustomize.toolkit.fluxcd.io/v1, v1beta2 or v1beta1",
		}},
		// A Kustomization of an API this reader does not read, or another
		// kind in Flux's group, is refused by name: skipped, its unit would
		// be garbage-collected.
		{"refused-apis.yaml", []string{
			"refused-apis.yaml:2: Kustomization default/webapp-backend: apiVersion: \"kustomize.fluxcd.io/v1beta1\" is not read: kustomize.fluxcd.io is the Kustomization API of Flux's prototype, before kustomize.toolkit.fluxcd.io, whose only version is kustomize.fluxcd.io/v1alpha1; write that, or kustomize.toolkit.fluxcd.io/v1",
			"refused-apis.yaml:13: Kustomization flux-system/typo-group: apiVersion: \"kustomize.toolkit.flux.io/v1\" is not an API kustomize-deploy reads: a Flux Kustomization is kustomize.toolkit.fluxcd.io/v1 (or v1beta2, v1beta1), kustomize's own kustomization is kustomize.config.k8s.io",
			"refused-apis.yaml:20: Kustomisation flux-system/typo-kind: kind: \"Kustomisation\" is not a kind of kustomize.toolkit.fluxcd.io, whose only kind is Kustomization",
			"refused-apis.yaml:25: Kustomization flux-system/no-version: apiVersion: required: a Flux Kustomization is kustomize.toolkit.fluxcd.io/v1 (or v1beta2, v1beta1)",
		}},
		// The prototype's v1alpha1, checked as its CRD did.
		{"v1alpha1-bad.yaml", []string{
			"v1alpha1-bad.yaml:6: Kustomization default/webapp-backend: spec.sourceRef: required",
			"v1alpha1-bad.yaml:6: Kustomization default/webapp-backend: spec.interval: required",
			"v1alpha1-bad.yaml:8: Kustomization default/webapp-backend: spec.path: \"webapp/backend\" must start with ./ (the API's pattern)",
			"v1alpha1-bad.yaml:9: Kustomization default/webapp-backend: spec.prune: must be a string (quote it)",
			"v1alpha1-bad.yaml:11: Kustomization default/webapp-backend: spec.healthChecks[0].kind: \"Pod\" is not one of \"Deployment\", \"DaemonSet\" or \"StatefulSet\"",
			"v1alpha1-bad.yaml:14: Kustomization default/webapp-backend: spec.serviceAccount.namespace: required",
			"v1alpha1-bad.yaml:15: Kustomization default/webapp-backend: spec.serviceAccountName: unknown field",
		}},
		// Values checked as Flux's CRD does, and paths kept inside the repository.
		{"invalid-values.yaml", []string{
			"invalid-values.yaml:7: Kustomization flux-system/apps: spec.interval: \"5 minutes\" is not a duration such as 30s, 5m or 1h30m",
			"invalid-values.yaml:8: Kustomization flux-system/apps: spec.retryInterval: \"1d\" is not a duration such as 30s, 5m or 1h30m",
			"invalid-values.yaml:9: Kustomization flux-system/apps: spec.timeout: must be a duration such as 30s, 5m or 1h30m, as a string",
			"invalid-values.yaml:10: Kustomization flux-system/apps: spec.prune: must be true or false",
			"invalid-values.yaml:11: Kustomization flux-system/apps: spec.wait: must be true or false",
			"invalid-values.yaml:12: Kustomization flux-system/apps: spec.path: \"../outside\" leaves the repository root",
			"invalid-values.yaml:14: Kustomization flux-system/apps: spec.sourceRef.kind: \"HelmRepository\" is not one of \"OCIRepository\", \"GitRepository\", \"Bucket\" or \"ExternalArtifact\"",
			"invalid-values.yaml:17: Kustomization flux-system/apps: spec.dependsOn[0].name: required",
			"invalid-values.yaml:18: Kustomization flux-system/apps: spec.deletionPolicy: \"Sometimes\" is not one of \"MirrorPrune\", \"Delete\", \"WaitForTermination\" or \"Orphan\"",
			"invalid-values.yaml:19: Kustomization flux-system/apps: spec.targetNamespace: \"Web_Apps\" is not a valid namespace: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
			"invalid-values.yaml:21: Kustomization flux-system/apps: spec.components[0]: \"../../../elsewhere\" leaves the repository root",
			"invalid-values.yaml:22: Kustomization flux-system/apps: spec.components[1]: must be relative to spec.path (like ../ingress), not absolute",
			"invalid-values.yaml:24: Kustomization flux-system/apps: spec.images[0].name: required",
			"invalid-values.yaml:26: Kustomization flux-system/apps: spec.images[1].newTag: must be a string (quote it)",
			"invalid-values.yaml:28: Kustomization flux-system/apps: spec.healthChecks[0].kind: required",
			"invalid-values.yaml:28: Kustomization flux-system/apps: spec.healthChecks[0].name: required",
			"invalid-values.yaml:32: Kustomization flux-system/apps: spec.postBuild.substitute[cluster-name]: not a valid variable name: use letters, digits and '_', not starting with a digit",
			"invalid-values.yaml:34: Kustomization flux-system/apps: spec.postBuild.substituteFrom[0].kind: \"Pod\" is not one of \"ConfigMap\" or \"Secret\"",
			"invalid-values.yaml:38: Kustomization flux-system/apps: spec.buildMetadata[1]: \"everything\" is not one of \"originAnnotations\" or \"transformerAnnotations\"",
			"invalid-values.yaml:48: Kustomization flux-system/legacy: spec.path: must be relative to the repository root (like ./apps), not absolute",
			"invalid-values.yaml:49: Kustomization flux-system/legacy: spec.validation: \"strict\" is not one of \"none\", \"client\" or \"server\"",
			"invalid-values.yaml:60: Kustomization flux-system/micro: spec.interval: \"120000000us\" is not a duration such as 30s, 5m or 1h30m",
		}},
		// Required fields, and an object without a name.
		{"missing-required.yaml", []string{
			"missing-required.yaml:4: Kustomization: metadata.name: required",
			"missing-required.yaml:6: Kustomization: spec.interval: required",
			"missing-required.yaml:6: Kustomization: spec.prune: required",
			"missing-required.yaml:8: Kustomization: spec.sourceRef.kind: required",
			"missing-required.yaml:10: Kustomization: spec.decryption.provider: required",
			"missing-required.yaml:12: Kustomization: spec.kubeConfig.secretRef: required",
			"missing-required.yaml:14: Kustomization: spec.patches[0].patch: required",
			"missing-required.yaml:17: Kustomization flux-system/nospec: spec: required",
		}},
		// A YAML error names the file and the line in it, not in the document.
		{"syntax-error.yaml", []string{
			"syntax-error.yaml:20: YAML: mapping values are not allowed in this context",
		}},
		// A Secret's problems name its keys, never their values.
		{"secret-problems.yaml", []string{
			"secret-problems.yaml:7: Secret web/db: data[password]: not valid base64",
			"secret-problems.yaml:10: Secret web/db: stringData[pin]: must be a string (quote it)",
			"secret-problems.yaml:18: YAML: found unexpected end of stream",
		}},
		// The same Kustomization twice names both places.
		{"duplicate", []string{
			"duplicate/b.yaml:2: Kustomization flux-system/apps: defined again: first in duplicate/a.yaml:1",
		}},
		// A name that cannot name a unit.
		{"names-invalid.yaml", []string{
			"names-invalid.yaml:1: Kustomization flux-system/apps.v2: metadata.name: unit name \"apps.v2\" is not valid: use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit",
		}},
		// A shared name needs the namespace, which makes it too long.
		{"names-too-long", []string{
			"names-too-long/a.yaml:1: Kustomization a-namespace-whose-name-is-long-enough/applications-of-the-platform: shares its name with Kustomization b/applications-of-the-platform (names-too-long/b.yaml:1), so its unit needs the namespace: unit name \"a-namespace-whose-name-is-long-enough-applications-of-the-platform\" is not valid: use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit",
		}},
		// A namespace-qualified name that another unit already has.
		{"names-collide", []string{
			"names-collide/apps.yaml:11: Kustomization default/team-a-apps: unit name \"team-a-apps\" is also the unit name of Kustomization team-a/apps (names-collide/apps.yaml:1): rename one of them",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			set, err := readCase(t, tt.name)
			if err == nil {
				// Problems of one Kustomization refuse its unit, not
				// the configuration.
				err = set.Refusals()
			} else if set != nil {
				t.Error("a Set came back with the error")
			}
			if err == nil {
				t.Fatalf("no error; read %d units", len(set.Units))
			}
			var got []string
			for _, p := range Problems(err) {
				got = append(got, p.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems mismatch (-want +got):\n%s", diff)
			}
			if len(got) != len(strings.Split(err.Error(), "\n")) {
				t.Errorf("Problems found %d of the errors in %q", len(got), err)
			}
		})
	}
}
