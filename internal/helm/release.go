// Package helm renders Flux HelmReleases push-based: it reads a
// HelmRelease and the source of its chart (a HelmRepository) as
// helm-controller would, fetches and caches the chart, computes its values
// (valuesFrom, values), renders it in-process with the Helm SDK, as `helm
// template` does, and hands back Kubernetes objects for the pipeline to
// validate, apply, prune and wait for like any other. Nothing of Flux's
// runs in the cluster, and no helm binary is run.
package helm

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
)

// The API groups this package reads.
const (
	ReleaseGroup = "helm.toolkit.fluxcd.io"
	SourceGroup  = "source.toolkit.fluxcd.io"
)

// releaseVersions are the HelmRelease versions read.
var releaseVersions = []string{"v2", "v2beta2", "v2beta1"}

// IsRelease reports whether u is a Flux HelmRelease of a version this
// package reads.
func IsRelease(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == ReleaseGroup && gvk.Kind == "HelmRelease" && slices.Contains(releaseVersions, gvk.Version)
}

// Release is a HelmRelease as this package renders it.
type Release struct {
	// Name and Namespace are the HelmRelease's.
	Name, Namespace string
	// ReleaseName is Helm's release name: spec.releaseName, else
	// [targetNamespace-]name, shortened as helm-controller does when longer
	// than 53 characters. ReleaseNamespace is spec.targetNamespace, else
	// the HelmRelease's namespace.
	ReleaseName, ReleaseNamespace string
	// Chart is spec.chart.spec; nil with a chartRef.
	Chart *ChartSpec
	// ChartRef is spec.chartRef (OCIRepository, HelmChart); not rendered
	// yet.
	ChartRef *Reference
	// Values are spec.values; ValuesFrom, the ConfigMaps and Secrets whose
	// values are merged first, in order.
	Values     map[string]any
	ValuesFrom []ValuesReference
	// CreateNamespace is spec.install.createNamespace (with a
	// targetNamespace); CRDs, spec.install.crds: the policy of an
	// install; UpgradeCRDs, spec.upgrade.crds (default Skip, as Flux
	// has it): the policy once the release is installed, which Helm
	// never changes the CRDs of unless told to. UpgradeCRDsSet says
	// spec.upgrade.crds was given.
	CreateNamespace bool
	CRDs            CRDPolicy
	UpgradeCRDs     CRDPolicy
	UpgradeCRDsSet  bool
	// DisableHooks is spec.install.disableHooks.
	DisableHooks bool
	// DisableSchemaValidation is spec.install.disableSchemaValidation.
	DisableSchemaValidation bool
	// PostRenderers are spec.postRenderers' kustomize patches and images,
	// applied to the rendered objects in order; Labels and Annotations are
	// spec.commonMetadata's, set on every rendered object.
	PostRenderers       []PostRenderer
	Labels, Annotations map[string]string
	// DependsOn are the HelmReleases to render first (their namespace
	// defaulted to this one's).
	DependsOn []Reference
	Suspend   bool
	Timeout   time.Duration
	// ServiceAccountName is spec.serviceAccountName: helm-controller
	// installs the release impersonating this account of the
	// HelmRelease's namespace (on KubeConfig's cluster, when set).
	ServiceAccountName string
	// KubeConfig is spec.kubeConfig: the release is installed to the
	// cluster whose kubeconfig that Secret (of the HelmRelease's
	// namespace) holds; nil, to the unit's cluster.
	KubeConfig *KubeConfig
	// StorageNamespace is spec.storageNamespace, else the HelmRelease's
	// namespace: where helm-controller keeps the release's records.
	StorageNamespace string
	// DriftIgnore are spec.driftDetection.ignore's rules.
	DriftIgnore []IgnoreRule
	// HealthCheckExprs are spec.healthCheckExprs: CEL expressions judging
	// the health of the kinds its chart renders (parsed by the waiter).
	HealthCheckExprs []HealthCheckExpr
	// Install and Upgrade are spec.install.remediation and
	// spec.upgrade.remediation; Test is spec.test.
	Install, Upgrade Remediation
	Test             Tests
	// Notes are one line each about fields read but not acted on.
	Notes []string
}

// KubeConfig is a HelmRelease's spec.kubeConfig.secretRef: the Secret
// holding the kubeconfig of the cluster to install to, and its key
// (empty: value or value.yaml, as Flux reads it).
type KubeConfig struct {
	SecretName, Key string
}

// ChartSpec is a HelmRelease's spec.chart.spec.
type ChartSpec struct {
	Chart string
	// Version is a semver range; "" means the latest ("*").
	Version     string
	SourceRef   Reference
	ValuesFiles []string
	// IgnoreMissingValuesFiles tolerates a values file the chart lacks.
	IgnoreMissingValuesFiles bool
	// Verify is chart.spec.verify with provider cosign (a public key's
	// Secret, or keyless identities): honoured for charts of a
	// HelmRepository of type oci, as Flux does.
	Verify *config.Verify
}

// Reference names a Flux object; Kind may be empty where it is implied.
type Reference struct {
	Kind, Name, Namespace string
}

func (r Reference) String() string {
	s := r.Namespace + "/" + r.Name
	if r.Kind != "" {
		s = r.Kind + "/" + s
	}
	return s
}

// ValuesReference is one spec.valuesFrom entry.
type ValuesReference struct {
	Kind string // ConfigMap or Secret
	Name string
	// ValuesKey is the key holding the values; default values.yaml.
	ValuesKey string
	// TargetPath, when set, puts the key's whole value at this path
	// instead of merging it as YAML.
	TargetPath string
	Optional   bool
}

// CRDPolicy says what becomes of a chart's crds/ directory.
type CRDPolicy string

// The policies of spec.install.crds.
const (
	CRDsSkip          CRDPolicy = "Skip"
	CRDsCreate        CRDPolicy = "Create"
	CRDsCreateReplace CRDPolicy = "CreateReplace"
)

// PostRenderer is one spec.postRenderers entry's kustomize part.
type PostRenderer struct {
	Patches []Patch
	Images  []Image
}

// Patch is a kustomize patch with an optional target.
type Patch struct {
	Patch  string
	Target *Selector
}

// Selector selects the objects a patch applies to.
type Selector struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
}

// Image is a kustomize image override.
type Image struct {
	Name    string `json:"name"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// spec is what a HelmRelease's spec may hold, in every version read. A
// field not here is refused by name; fields read but not acted on are
// raw, and noted.
type spec struct {
	Chart *struct {
		Metadata json.RawMessage `json:"metadata"`
		Spec     struct {
			Chart                    string          `json:"chart"`
			Version                  string          `json:"version"`
			SourceRef                ref             `json:"sourceRef"`
			ValuesFiles              []string        `json:"valuesFiles"`
			ValuesFile               string          `json:"valuesFile"` // v2beta1
			IgnoreMissingValuesFiles bool            `json:"ignoreMissingValuesFiles"`
			Interval                 json.RawMessage `json:"interval"`
			ReconcileStrategy        json.RawMessage `json:"reconcileStrategy"`
			Verify                   json.RawMessage `json:"verify"`
		} `json:"spec"`
	} `json:"chart"`
	ChartRef           *ref            `json:"chartRef"`
	Interval           json.RawMessage `json:"interval"`
	KubeConfig         *kubeConfig     `json:"kubeConfig"`
	Suspend            bool            `json:"suspend"`
	ReleaseName        string          `json:"releaseName"`
	TargetNamespace    string          `json:"targetNamespace"`
	StorageNamespace   string          `json:"storageNamespace"`
	DependsOn          []ref           `json:"dependsOn"`
	Timeout            string          `json:"timeout"`
	MaxHistory         json.RawMessage `json:"maxHistory"`
	ServiceAccountName string          `json:"serviceAccountName"`
	PersistentClient   json.RawMessage `json:"persistentClient"`
	DriftDetection     json.RawMessage `json:"driftDetection"`
	Install            *install        `json:"install"`
	Upgrade            json.RawMessage `json:"upgrade"`
	Test               json.RawMessage `json:"test"`
	Rollback           json.RawMessage `json:"rollback"`
	Uninstall          json.RawMessage `json:"uninstall"`
	ValuesFrom         []valuesFrom    `json:"valuesFrom"`
	Values             map[string]any  `json:"values"`
	CommonMetadata     *commonMetadata `json:"commonMetadata"`
	PostRenderers      []postRenderer  `json:"postRenderers"`
	PostRenderStrategy string          `json:"postRenderStrategy"`
	WaitStrategy       json.RawMessage `json:"waitStrategy"`
	HealthCheckExprs   json.RawMessage `json:"healthCheckExprs"`
}

type kubeConfig struct {
	SecretRef *struct {
		Name string `json:"name"`
		Key  string `json:"key"`
	} `json:"secretRef"`
	ConfigMapRef json.RawMessage `json:"configMapRef"`
}

type ref struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	ReadyExpr  string `json:"readyExpr"`
}

type install struct {
	Timeout                  json.RawMessage `json:"timeout"`
	Strategy                 json.RawMessage `json:"strategy"`
	Remediation              json.RawMessage `json:"remediation"`
	DisableTakeOwnership     bool            `json:"disableTakeOwnership"`
	DisableWait              json.RawMessage `json:"disableWait"`
	DisableWaitForJobs       json.RawMessage `json:"disableWaitForJobs"`
	DisableHooks             bool            `json:"disableHooks"`
	DisableOpenAPIValidation json.RawMessage `json:"disableOpenAPIValidation"`
	DisableSchemaValidation  bool            `json:"disableSchemaValidation"`
	Replace                  json.RawMessage `json:"replace"`
	SkipCRDs                 bool            `json:"skipCRDs"`
	CRDs                     string          `json:"crds"`
	CreateNamespace          bool            `json:"createNamespace"`
	ServerSideApply          json.RawMessage `json:"serverSideApply"`
}

type valuesFrom struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	ValuesKey  string `json:"valuesKey"`
	TargetPath string `json:"targetPath"`
	Optional   bool   `json:"optional"`
}

type commonMetadata struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type postRenderer struct {
	Kustomize *struct {
		Patches               []patch           `json:"patches"`
		Images                []Image           `json:"images"`
		PatchesStrategicMerge []json.RawMessage `json:"patchesStrategicMerge"` // v2beta1, v2beta2
		PatchesJSON6902       []struct {
			Target Selector          `json:"target"`
			Patch  []json.RawMessage `json:"patch"`
		} `json:"patchesJson6902"`
	} `json:"kustomize"`
}

type patch struct {
	Patch  string    `json:"patch"`
	Target *Selector `json:"target"`
}

// ReadRelease reads a HelmRelease. Fields this package cannot honour
// (without a controller, or not yet) are refused by name; fields that mean
// nothing without a controller (interval, remediation, history, tests)
// are noted.
func ReadRelease(u *unstructured.Unstructured) (*Release, error) {
	data, err := json.Marshal(u.Object["spec"])
	if err != nil {
		return nil, err
	}
	var s spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("spec: %s", unknownField(err))
	}
	r := &Release{Name: u.GetName(), Namespace: or(u.GetNamespace(), "default"), Values: s.Values, Suspend: s.Suspend,
		ServiceAccountName: s.ServiceAccountName, CRDs: CRDsCreate, UpgradeCRDs: CRDsSkip}
	var errs []error
	refuse := func(field, why string) { errs = append(errs, fmt.Errorf("spec.%s: %s", field, why)) }
	note := func(field string, v json.RawMessage, why string) {
		if len(v) > 0 && string(v) != "null" {
			r.Notes = append(r.Notes, fmt.Sprintf("HelmRelease %s/%s: spec.%s %s", r.Namespace, r.Name, field, why))
		}
	}

	switch {
	case s.Chart != nil && s.ChartRef != nil:
		refuse("chartRef", "set together with spec.chart: a HelmRelease names its chart one way")
	case s.Chart == nil && s.ChartRef == nil:
		refuse("chart", "required (or spec.chartRef)")
	case s.ChartRef != nil:
		r.ChartRef = &Reference{Kind: s.ChartRef.Kind, Name: s.ChartRef.Name, Namespace: or(s.ChartRef.Namespace, r.Namespace)}
	default:
		c := s.Chart.Spec
		if c.Chart == "" {
			refuse("chart.spec.chart", "required: the chart's name in its repository")
		}
		r.Chart = &ChartSpec{Chart: c.Chart, Version: c.Version, ValuesFiles: c.ValuesFiles, IgnoreMissingValuesFiles: c.IgnoreMissingValuesFiles,
			SourceRef: Reference{Kind: c.SourceRef.Kind, Name: c.SourceRef.Name, Namespace: or(c.SourceRef.Namespace, r.Namespace)}}
		if c.ValuesFile != "" {
			r.Chart.ValuesFiles = append([]string{c.ValuesFile}, r.Chart.ValuesFiles...)
		}
		if c.SourceRef.Kind == "" || c.SourceRef.Name == "" {
			refuse("chart.spec.sourceRef", "kind and name are required")
		}
		if len(c.Verify) > 0 && string(c.Verify) != "null" {
			v, err := readVerify(c.Verify)
			if err != nil {
				refuse("chart.spec.verify", err.Error())
			}
			r.Chart.Verify = v
		}
		note("chart.spec.interval", c.Interval, "is read but not acted on: the chart is fetched on every run")
		note("chart.spec.reconcileStrategy", c.ReconcileStrategy, "is read but not acted on")
		note("chart.metadata", s.Chart.Metadata, "is read but not acted on: no HelmChart object is made")
	}

	r.ReleaseNamespace = or(s.TargetNamespace, r.Namespace)
	name := s.ReleaseName
	if name == "" {
		name = r.Name
		if s.TargetNamespace != "" {
			name = s.TargetNamespace + "-" + r.Name
		}
	}
	r.ReleaseName = ShortenName(name)

	for i, d := range s.DependsOn {
		if d.ReadyExpr != "" {
			refuse(fmt.Sprintf("dependsOn[%d].readyExpr", i), "CEL readiness expressions are not supported")
		}
		r.DependsOn = append(r.DependsOn, Reference{Kind: "HelmRelease", Name: d.Name, Namespace: or(d.Namespace, r.Namespace)})
	}
	if s.Timeout != "" {
		d, err := time.ParseDuration(s.Timeout)
		if err != nil {
			refuse("timeout", fmt.Sprintf("%q is not a duration", s.Timeout))
		}
		r.Timeout = d
	}
	for i, v := range s.ValuesFrom {
		if v.Kind != "ConfigMap" && v.Kind != "Secret" {
			refuse(fmt.Sprintf("valuesFrom[%d].kind", i), fmt.Sprintf("want ConfigMap or Secret, got %q", v.Kind))
		}
		r.ValuesFrom = append(r.ValuesFrom, ValuesReference{Kind: v.Kind, Name: v.Name, ValuesKey: or(v.ValuesKey, "values.yaml"), TargetPath: v.TargetPath, Optional: v.Optional})
	}
	if in := s.Install; in != nil {
		r.CreateNamespace = in.CreateNamespace && s.TargetNamespace != ""
		r.DisableHooks = in.DisableHooks
		r.DisableSchemaValidation = in.DisableSchemaValidation
		switch {
		case in.CRDs != "":
			r.CRDs = CRDPolicy(in.CRDs)
		case in.SkipCRDs:
			r.CRDs = CRDsSkip
		}
		if !slices.Contains([]CRDPolicy{CRDsSkip, CRDsCreate, CRDsCreateReplace}, r.CRDs) {
			refuse("install.crds", fmt.Sprintf("want Skip, Create or CreateReplace, got %q", in.CRDs))
		}
		note("install.strategy", in.Strategy, "is read but not acted on")
		note("install.timeout", in.Timeout, "is read but not acted on: the unit's timeout bounds the wait")
		note("install.disableWait", in.DisableWait, "is read but not acted on: the unit's wait setting decides")
		note("install.disableWaitForJobs", in.DisableWaitForJobs, "is read but not acted on")
		note("install.replace", in.Replace, "is read but not acted on")
		note("install.disableOpenAPIValidation", in.DisableOpenAPIValidation, "is read but not acted on: the unit's validation setting decides")
		note("install.serverSideApply", in.ServerSideApply, "is read but not acted on: objects are always applied server-side")
	}
	if m := s.CommonMetadata; m != nil {
		r.Labels, r.Annotations = m.Labels, m.Annotations
	}
	for i, p := range s.PostRenderers {
		k := p.Kustomize
		if k == nil {
			continue
		}
		if len(k.PatchesStrategicMerge)+len(k.PatchesJSON6902) > 0 {
			refuse(fmt.Sprintf("postRenderers[%d].kustomize", i), "patchesStrategicMerge and patchesJson6902 are not supported: write them as patches")
		}
		pr := PostRenderer{Images: k.Images}
		for _, p := range k.Patches {
			pr.Patches = append(pr.Patches, Patch(p))
		}
		r.PostRenderers = append(r.PostRenderers, pr)
	}
	if s.PostRenderStrategy != "" && s.PostRenderStrategy != "Combined" {
		refuse("postRenderStrategy", fmt.Sprintf("%q is not supported: post-renderers apply to every rendered object", s.PostRenderStrategy))
	}
	if exprs, err := readHealthCheckExprs(s.HealthCheckExprs); err != nil {
		errs = append(errs, err)
	} else {
		r.HealthCheckExprs = exprs
	}
	if kc := s.KubeConfig; kc != nil {
		switch {
		case len(kc.ConfigMapRef) > 0 && string(kc.ConfigMapRef) != "null":
			refuse("kubeConfig.configMapRef", "secret-less access to remote clusters (workload identity) is not available to kustomize-deploy; use spec.kubeConfig.secretRef")
		case kc.SecretRef == nil || kc.SecretRef.Name == "":
			refuse("kubeConfig.secretRef.name", "required: the Secret holding the kubeconfig of the cluster to install to")
		default:
			r.KubeConfig = &KubeConfig{SecretName: kc.SecretRef.Name, Key: kc.SecretRef.Key}
		}
	}
	r.StorageNamespace = or(s.StorageNamespace, r.Namespace)
	if s.StorageNamespace != "" {
		r.Notes = append(r.Notes, fmt.Sprintf("HelmRelease %s/%s: spec.storageNamespace is read but not acted on: no Helm release is stored", r.Namespace, r.Name))
	}
	note("interval", s.Interval, "is read but not acted on: the release is rendered on every run")
	note("maxHistory", s.MaxHistory, "is read but not acted on: no Helm release is stored")
	note("persistentClient", s.PersistentClient, "is read but not acted on")
	if rules, err := readIgnoreRules(s.DriftDetection); err != nil {
		errs = append(errs, err)
	} else {
		r.DriftIgnore = rules
	}
	tests, testNotes, err := readTests(s.Test)
	if err != nil {
		errs = append(errs, err)
	}
	for _, n := range testNotes {
		r.Notes = append(r.Notes, fmt.Sprintf("HelmRelease %s/%s: %s", r.Namespace, r.Name, n))
	}
	r.Test = tests
	var installRemediation, upgradeRemediation json.RawMessage
	if s.Install != nil {
		installRemediation = s.Install.Remediation
	}
	if len(s.Upgrade) > 0 && string(s.Upgrade) != "null" {
		var up map[string]json.RawMessage
		if err := json.Unmarshal(s.Upgrade, &up); err != nil {
			refuse("upgrade", err.Error())
		}
		upgradeRemediation = up["remediation"]
		delete(up, "remediation")
		if raw, ok := up["crds"]; ok {
			var policy string
			_ = json.Unmarshal(raw, &policy)
			r.UpgradeCRDs, r.UpgradeCRDsSet = CRDPolicy(policy), true
			if !slices.Contains([]CRDPolicy{CRDsSkip, CRDsCreate, CRDsCreateReplace}, r.UpgradeCRDs) {
				refuse("upgrade.crds", fmt.Sprintf("want Skip, Create or CreateReplace, got %s", raw))
			}
			delete(up, "crds")
		}
		for _, k := range slices.Sorted(maps.Keys(up)) {
			note("upgrade."+k, up[k], "is read but not acted on")
		}
	}
	if r.Install, err = readRemediation(installRemediation, false, tests); err != nil {
		errs = append(errs, err)
	}
	if r.Upgrade, err = readRemediation(upgradeRemediation, true, tests); err != nil {
		errs = append(errs, err)
	}
	note("rollback", s.Rollback, "is read but not acted on: a rollback re-applies the release's objects as last applied")
	note("uninstall", s.Uninstall, "is read but not acted on: objects that leave are pruned")
	note("waitStrategy", s.WaitStrategy, "is read but not acted on: the unit waits with kstatus")
	return r, errors.Join(errs...)
}

// unknownField says which field a strict decode refused.
func unknownField(err error) string {
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return strings.Trim(f, `"`) + " is not a HelmRelease field this tool knows"
	}
	return msg
}

// readVerify reads chart.spec.verify: provider cosign, with a public
// key's Secret or keyless identities; notation is refused by name.
func readVerify(raw json.RawMessage) (*config.Verify, error) {
	var v struct {
		Provider  string `json:"provider"`
		SecretRef *struct {
			Name string `json:"name"`
		} `json:"secretRef"`
		MatchOIDCIdentity []struct {
			Issuer  string `json:"issuer"`
			Subject string `json:"subject"`
		} `json:"matchOIDCIdentity"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if v.Provider != "cosign" {
		return nil, fmt.Errorf("provider %q is not verified by kustomize-deploy (cosign is): remove it, or keep helm-controller for this release", v.Provider)
	}
	out := &config.Verify{}
	if v.SecretRef != nil {
		out.SecretName = v.SecretRef.Name
	}
	for i, id := range v.MatchOIDCIdentity {
		out.MatchOIDCIdentity = append(out.MatchOIDCIdentity, config.OIDCIdentity{Issuer: id.Issuer, Subject: id.Subject})
		for _, kv := range [][2]string{{"issuer", id.Issuer}, {"subject", id.Subject}} {
			if kv[1] == "" {
				return nil, fmt.Errorf("matchOIDCIdentity[%d].%s: required", i, kv[0])
			}
			if _, err := regexp.Compile(kv[1]); err != nil {
				return nil, fmt.Errorf("matchOIDCIdentity[%d].%s: not a regular expression: %w", i, kv[0], err)
			}
		}
	}
	return out, nil
}

// ShortenName is Helm's release name for name: name itself up to 53
// characters (Helm's limit), else its first 40 characters, a dash and the
// first 12 hex digits of its SHA-256, as helm-controller shortens it.
func ShortenName(name string) string {
	const maxLength, hashLength = 53, 12
	if len(name) <= maxLength {
		return name
	}
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte(name)))
	return name[:maxLength-(hashLength+1)] + "-" + sum[:hashLength]
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
