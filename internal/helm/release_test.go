package helm

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func helmRelease(t *testing.T, apiVersion, spec string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	doc := "apiVersion: helm.toolkit.fluxcd.io/" + apiVersion + "\nkind: HelmRelease\nmetadata: {name: podinfo, namespace: apps}\nspec:\n" + spec
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const chartSpec = "  chart:\n    spec:\n      chart: podinfo\n      version: \">=6.0.0 <7.0.0\"\n      sourceRef: {kind: HelmRepository, name: podinfo, namespace: flux-system}\n"

// What each HelmRelease field becomes, across the versions read.
func TestReadRelease(t *testing.T) {
	long := strings.Repeat("a", 50)
	for _, tc := range []struct {
		name, version, spec string
		want                Release
	}{
		{name: "defaults", version: "v2", spec: chartSpec,
			want: Release{Name: "podinfo", Namespace: "apps", StorageNamespace: "apps", ReleaseName: "podinfo", ReleaseNamespace: "apps", CRDs: CRDsCreate, UpgradeCRDs: CRDsSkip,
				Chart: &ChartSpec{Chart: "podinfo", Version: ">=6.0.0 <7.0.0", SourceRef: Reference{Kind: "HelmRepository", Name: "podinfo", Namespace: "flux-system"}}}},
		{name: "targetNamespace names the release", version: "v2", spec: chartSpec + "  targetNamespace: web\n  install: {createNamespace: true, crds: CreateReplace}\n",
			want: Release{Name: "podinfo", Namespace: "apps", StorageNamespace: "apps", ReleaseName: "web-podinfo", ReleaseNamespace: "web", CreateNamespace: true, CRDs: CRDsCreateReplace, UpgradeCRDs: CRDsSkip,
				Chart: &ChartSpec{Chart: "podinfo", Version: ">=6.0.0 <7.0.0", SourceRef: Reference{Kind: "HelmRepository", Name: "podinfo", Namespace: "flux-system"}}}},
		{name: "a long release name is shortened as helm-controller does", version: "v2", spec: chartSpec + "  releaseName: " + long + "-and-more\n",
			want: Release{Name: "podinfo", Namespace: "apps", StorageNamespace: "apps", ReleaseName: ShortenName(long + "-and-more"), ReleaseNamespace: "apps", CRDs: CRDsCreate, UpgradeCRDs: CRDsSkip,
				Chart: &ChartSpec{Chart: "podinfo", Version: ">=6.0.0 <7.0.0", SourceRef: Reference{Kind: "HelmRepository", Name: "podinfo", Namespace: "flux-system"}}}},
		{name: "v2beta1's valuesFile and skipCRDs", version: "v2beta1", spec: chartSpec + "      valuesFile: values-prod.yaml\n  install: {skipCRDs: true}\n  timeout: 3m\n  dependsOn: [{name: cert-manager}]\n",
			want: Release{Name: "podinfo", Namespace: "apps", StorageNamespace: "apps", ReleaseName: "podinfo", ReleaseNamespace: "apps", CRDs: CRDsSkip, UpgradeCRDs: CRDsSkip, Timeout: 3 * time.Minute,
				DependsOn: []Reference{{Kind: "HelmRelease", Name: "cert-manager", Namespace: "apps"}},
				Chart:     &ChartSpec{Chart: "podinfo", Version: ">=6.0.0 <7.0.0", ValuesFiles: []string{"values-prod.yaml"}, SourceRef: Reference{Kind: "HelmRepository", Name: "podinfo", Namespace: "flux-system"}}}},
		{name: "upgrade.crds", version: "v2", spec: chartSpec + "  upgrade: {crds: CreateReplace, remediation: {retries: 3}}\n",
			want: Release{Name: "podinfo", Namespace: "apps", StorageNamespace: "apps", ReleaseName: "podinfo", ReleaseNamespace: "apps", CRDs: CRDsCreate, UpgradeCRDs: CRDsCreateReplace, UpgradeCRDsSet: true,
				Chart: &ChartSpec{Chart: "podinfo", Version: ">=6.0.0 <7.0.0", SourceRef: Reference{Kind: "HelmRepository", Name: "podinfo", Namespace: "flux-system"}}}},
		{name: "valuesFrom defaults its key", version: "v2beta2", spec: chartSpec + "  valuesFrom:\n  - {kind: ConfigMap, name: web}\n  - {kind: Secret, name: db, valuesKey: pw, targetPath: db.password, optional: true}\n",
			want: Release{Name: "podinfo", Namespace: "apps", StorageNamespace: "apps", ReleaseName: "podinfo", ReleaseNamespace: "apps", CRDs: CRDsCreate, UpgradeCRDs: CRDsSkip,
				ValuesFrom: []ValuesReference{{Kind: "ConfigMap", Name: "web", ValuesKey: "values.yaml"}, {Kind: "Secret", Name: "db", ValuesKey: "pw", TargetPath: "db.password", Optional: true}},
				Chart:      &ChartSpec{Chart: "podinfo", Version: ">=6.0.0 <7.0.0", SourceRef: Reference{Kind: "HelmRepository", Name: "podinfo", Namespace: "flux-system"}}}},
		{name: "who installs it, where, and to which cluster", version: "v2", spec: chartSpec + "  serviceAccountName: dev-team\n  storageNamespace: helm\n  kubeConfig: {secretRef: {name: spoke, key: config}}\n",
			want: Release{Name: "podinfo", Namespace: "apps", ReleaseName: "podinfo", ReleaseNamespace: "apps", StorageNamespace: "helm", CRDs: CRDsCreate, UpgradeCRDs: CRDsSkip,
				ServiceAccountName: "dev-team", KubeConfig: &KubeConfig{SecretName: "spoke", Key: "config"},
				Chart: &ChartSpec{Chart: "podinfo", Version: ">=6.0.0 <7.0.0", SourceRef: Reference{Kind: "HelmRepository", Name: "podinfo", Namespace: "flux-system"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ReadRelease(helmRelease(t, tc.version, tc.spec))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tc.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Release{}, "Notes", "Install", "Upgrade", "Test")); diff != "" {
				t.Errorf("release mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Fields this tool cannot honour are refused by name; fields that mean
// nothing without a controller are noted.
func TestReadReleaseRefusesAndNotes(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{chartSpec + "  chartRef: {kind: OCIRepository, name: podinfo}\n", "spec.chartRef: set together with spec.chart"},
		{"  interval: 5m\n", "spec.chart: required (or spec.chartRef)"},
		{chartSpec + "      verify: {provider: notation, secretRef: {name: trust}}\n", `spec.chart.spec.verify: provider "notation" is not verified by kustomize-deploy (cosign is)`},
		{chartSpec + "      verify: {provider: cosign, matchOIDCIdentity: [{issuer: \"(\"}]}\n", "spec.chart.spec.verify: matchOIDCIdentity[0].issuer: not a regular expression"},
		{chartSpec + "      verify: {provider: cosign, keyless: true}\n", `spec.chart.spec.verify: json: unknown field "keyless"`},
		{chartSpec + "  install: {crds: Always}\n", `spec.install.crds: want Skip, Create or CreateReplace, got "Always"`},
		{chartSpec + "  upgrade: {crds: Always}\n", `spec.upgrade.crds: want Skip, Create or CreateReplace, got "Always"`},
		{chartSpec + "  postRenderStrategy: Separate\n", "spec.postRenderStrategy"},
		{chartSpec + "  kubeConfig: {configMapRef: {name: remote}}\n", "spec.kubeConfig.configMapRef: secret-less access to remote clusters"},
		{chartSpec + "  kubeConfig: {secretRef: {key: value}}\n", "spec.kubeConfig.secretRef.name: required"},
		{chartSpec + "  valuesFrom: [{kind: Bucket, name: x}]\n", "spec.valuesFrom[0].kind: want ConfigMap or Secret"},
		{chartSpec + "  values:\n    a: 1\n  vaules: {}\n", "spec: vaules is not a HelmRelease field this tool knows"},
		{chartSpec + "  dependsOn: [{name: db, readyExpr: 'true'}]\n", "spec.dependsOn[0].readyExpr"},
		{chartSpec + "  upgrade: {remediation: {strategy: revert}}\n", `spec.upgrade.remediation.strategy: want rollback or uninstall, got "revert"`},
		{chartSpec + "  install: {remediation: {strategy: rollback}}\n", "spec.install.remediation.strategy: not a field of an install's remediation"},
		{chartSpec + "  upgrade: {remediation: {retries: many}}\n", "spec.upgrade.remediation"},
	} {
		_, err := ReadRelease(helmRelease(t, "v2", tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.spec, err, tc.want)
		}
	}
	r, err := ReadRelease(helmRelease(t, "v2", chartSpec+"  interval: 5m\n  install:\n    remediation: {retries: 3}\n  maxHistory: 3\n  test: {enable: true}\n  upgrade: {crds: Create, force: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"HelmRelease apps/podinfo: spec.interval is read but not acted on: the release is rendered on every run",
		"HelmRelease apps/podinfo: spec.maxHistory is read but not acted on: no Helm release is stored",
		"HelmRelease apps/podinfo: spec.upgrade.force is read but not acted on",
	}
	if diff := cmp.Diff(want, r.Notes); diff != "" {
		t.Errorf("notes mismatch (-want +got):\n%s", diff)
	}
}

// spec.install.remediation, spec.upgrade.remediation and spec.test, with
// helm-controller's defaults.
func TestReadRemediation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, spec       string
		install, upgrade Remediation
		test             Tests
	}{
		{"defaults", "",
			Remediation{Strategy: StrategyUninstall}, Remediation{Strategy: StrategyRollback}, Tests{}},
		{"upgrade retries remediate the last failure by default", "  upgrade: {remediation: {retries: 2}}\n",
			Remediation{Strategy: StrategyUninstall}, Remediation{Retries: 2, Strategy: StrategyRollback, RemediateLastFailure: true}, Tests{}},
		{"install retries do not", "  install: {remediation: {retries: 1}}\n",
			Remediation{Retries: 1, Strategy: StrategyUninstall}, Remediation{Strategy: StrategyRollback}, Tests{}},
		{"unlimited retries are bounded", "  upgrade: {remediation: {retries: -1, strategy: uninstall, remediateLastFailure: false}}\n",
			Remediation{Strategy: StrategyUninstall}, Remediation{Retries: MaxRetries, Strategy: StrategyUninstall}, Tests{}},
		{"test failures ignored by default from spec.test", "  test: {enable: true, ignoreFailures: true}\n  upgrade: {remediation: {ignoreTestFailures: false}}\n",
			Remediation{Strategy: StrategyUninstall, IgnoreTestFailures: true}, Remediation{Strategy: StrategyRollback}, Tests{Enable: true, IgnoreFailures: true}},
	} {
		r, err := ReadRelease(helmRelease(t, "v2", chartSpec+tc.spec))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff([]any{tc.install, tc.upgrade, tc.test}, []any{r.Install, r.Upgrade, r.Test}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	rem := Remediation{Retries: 1}
	if !rem.Retry(1) || rem.Retry(2) || !rem.Remediates(1) || rem.Remediates(2) {
		t.Error("one retry: the first failure is remediated and retried, the second neither")
	}
	rem.RemediateLastFailure = true
	if !rem.Remediates(2) || rem.Retry(2) {
		t.Error("remediateLastFailure: the last failure is remediated, not retried")
	}
}

func TestShortenName(t *testing.T) {
	for name, want := range map[string]string{
		"podinfo":                      "podinfo",
		strings.Repeat("x", 53):        strings.Repeat("x", 53),
		strings.Repeat("x", 54):        strings.Repeat("x", 40) + "-45f316e10b2c", // sha256sum of the 54 x's
		"a-" + strings.Repeat("y", 60): "a-" + strings.Repeat("y", 38) + "-",
	} {
		got := ShortenName(name)
		if len(got) > 53 || !strings.HasPrefix(got, want) {
			t.Errorf("ShortenName(%q) = %q, want %q…", name, got, want)
		}
	}
}
