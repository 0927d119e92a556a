package helm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/fluxcd/pkg/ssa/utils"
	"golang.org/x/sync/errgroup"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Capabilities are what templates see of the cluster (.Capabilities):
// its version and API versions. Empty is Helm's defaults, as `helm
// template` has them.
type Capabilities struct {
	// KubeVersion is e.g. v1.37.2.
	KubeVersion string
	// APIVersions are group/version and group/version/Kind entries.
	APIVersions []string
}

// Rendered is a chart rendered for a release.
type Rendered struct {
	// Objects are the chart's objects: its CRDs first (per the release's
	// CRD policy), then its templates', each with the template it came
	// from in Templates.
	Objects   []*unstructured.Unstructured
	Templates map[object.ID]string
	// Hooks are the chart's lifecycle hooks (test hooks aside), in the
	// order Helm runs them (weight, then as Helm sorted them); they are
	// not among Objects.
	Hooks []Hook
}

// Hook is a chart's lifecycle hook: an object created on an event of the
// release (pre-install, post-upgrade...), and deleted per its policies.
type Hook struct {
	Object *unstructured.Unstructured
	// Path is the template it came from.
	Path string
	// Events are pre-install, post-install, pre-upgrade, post-upgrade,
	// pre-delete, post-delete, pre-rollback, post-rollback.
	Events []string
	Weight int
	// DeletePolicies are before-hook-creation (the default when none is
	// given), hook-succeeded and hook-failed.
	DeletePolicies []string
}

// On reports whether h runs on event.
func (h Hook) On(event string) bool { return slices.Contains(h.Events, event) }

// Deletes reports whether h is deleted at policy's moment.
func (h Hook) Deletes(policy string) bool {
	if len(h.DeletePolicies) == 0 {
		return policy == string(release.HookBeforeHookCreation)
	}
	return slices.Contains(h.DeletePolicies, policy)
}

// render renders ch for rel with vals, client-side as `helm template`
// does: nothing is read from or written to a cluster. An upgrade renders
// with .Release.IsUpgrade, as `helm upgrade --install` does.
//
// lookup, when it reads a cluster, is the templates' lookup function
// (read-only); without, lookup returns nothing, as in `helm template`.
func render(ctx context.Context, rel *Release, ch *chart.Chart, vals map[string]any, caps Capabilities, upgrade bool, lookup *templateLookup) (*Rendered, error) {
	cfg := action.NewConfiguration()
	cfg.SetLogger(slog.DiscardHandler)
	guard := newTplGuard(ctx)
	cfg.CustomTemplateFuncs = lookup.funcs(ctx)
	if cfg.CustomTemplateFuncs == nil {
		cfg.CustomTemplateFuncs = map[string]any{}
	}
	cfg.CustomTemplateFuncs[tplGuardFunc] = guard.guard
	inst := action.NewInstall(cfg)
	inst.DryRunStrategy = action.DryRunClient
	inst.ReleaseName, inst.Namespace = rel.ReleaseName, rel.ReleaseNamespace
	inst.DisableHooks = rel.DisableHooks
	inst.IsUpgrade = upgrade
	inst.SkipSchemaValidation = rel.DisableSchemaValidation
	inst.IncludeCRDs = false // placed per the CRD policy below
	inst.Devel = true
	if caps.KubeVersion != "" {
		kv, err := common.ParseKubeVersion(caps.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kube version %q: %w", caps.KubeVersion, err)
		}
		inst.KubeVersion = kv
	}
	inst.APIVersions = caps.APIVersions
	out, err := inst.RunWithContext(ctx, guardChart(ch), vals)
	if err != nil {
		if guard.err != nil {
			return nil, guard.err // not Helm's message: it quotes the template once per level
		}
		return nil, renderError(err)
	}
	hr, ok := out.(*release.Release)
	if !ok {
		return nil, errors.New("the chart rendered to no Helm v1 release")
	}
	if err := renderedSize(hr); err != nil {
		return nil, err
	}
	r := &Rendered{Templates: map[object.ID]string{}}
	if rel.CRDs != CRDsSkip {
		for _, crd := range ch.CRDObjects() {
			objs, err := objects(crd.File.Data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", crd.Filename, err)
			}
			for _, u := range objs {
				// Never pruned, as Helm never deletes a chart's CRDs:
				// deleting one deletes every object of its kind.
				setAnnotation(u, object.AnnotationPrefix+object.PruneKey, object.Disabled)
				if rel.CRDs == CRDsCreate {
					// Created when missing, never changed: the install
					// policy of Flux's default, Create.
					setAnnotation(u, object.AnnotationPrefix+object.SSAKey, object.SSAIfNotPresent)
				}
				r.add(u, crd.Filename)
			}
		}
	}
	templates := splitManifest(hr.Manifest)
	parsed, err := parseTemplates(templates)
	if err != nil {
		return nil, err
	}
	for i, t := range templates {
		for _, u := range parsed[i] {
			if u.GetNamespace() == "" && namespacedGuess(u) {
				u.SetNamespace(rel.ReleaseNamespace)
			}
			r.add(u, t.path)
		}
	}
	for _, h := range hr.Hooks {
		if rel.DisableHooks || slices.Contains(h.Events, release.HookTest) && !rel.Test.Enable {
			continue // tests run only when spec.test.enable says; disabled hooks never
		}
		objs, err := objects([]byte(h.Manifest))
		if err != nil || len(objs) != 1 {
			return nil, fmt.Errorf("%s: a hook is one object: %v", h.Path, err)
		}
		u := objs[0]
		if u.GetNamespace() == "" && namespacedGuess(u) {
			u.SetNamespace(rel.ReleaseNamespace)
		}
		hook := Hook{Object: u, Path: h.Path, Weight: h.Weight}
		for _, e := range h.Events {
			hook.Events = append(hook.Events, string(e))
		}
		for _, p := range h.DeletePolicies {
			hook.DeletePolicies = append(hook.DeletePolicies, string(p))
		}
		r.Hooks = append(r.Hooks, hook)
	}
	// Helm runs an event's hooks by weight, then by name.
	sort.SliceStable(r.Hooks, func(i, j int) bool {
		a, b := r.Hooks[i], r.Hooks[j]
		if a.Weight != b.Weight {
			return a.Weight < b.Weight
		}
		return a.Object.GetName() < b.Object.GetName()
	})
	return r, nil
}

// MaxRenderedBytes bounds what one release renders (its manifests and
// hooks), checked before any of it is read into objects: reading costs
// ten times the text, and a chart kept in a pull request is hostile
// input. Each object is bounded again, as every object of a unit, by
// what the API server can store (validate.MaxObjectBytes).
const MaxRenderedBytes = 16 << 20

// maxRenderedBytes is MaxRenderedBytes, lowered by tests that would
// rather not render 16 MiB.
var maxRenderedBytes = MaxRenderedBytes

// renderedSize refuses a release that rendered over MaxRenderedBytes.
func renderedSize(hr *release.Release) error {
	n := len(hr.Manifest)
	for _, h := range hr.Hooks {
		n += len(h.Manifest)
	}
	if n > maxRenderedBytes {
		return fmt.Errorf("it rendered %.1f MiB of manifests, over the %d MiB a release may render", float64(n)/(1<<20), maxRenderedBytes>>20)
	}
	return nil
}

func (r *Rendered) add(u *unstructured.Unstructured, template string) {
	r.Objects = append(r.Objects, u)
	r.Templates[object.IDOf(u)] = template
}

// renderError is what a chart that does not render says, without Helm's
// own wrapping.
func renderError(err error) error {
	msg := err.Error()
	for _, prefix := range []string{"execution error at ", "template: "} {
		if i := strings.Index(msg, prefix); i > 0 {
			msg = msg[i:]
		}
	}
	return errors.New(msg)
}

// template is one rendered template of a manifest.
type template struct{ path, body string }

var sourceLine = regexp.MustCompile(`(?m)^# Source: (.+)$`)

// splitManifest splits a release's manifest into its templates, each
// named by its "# Source:" line.
func splitManifest(manifest string) []template {
	var out []template
	for _, doc := range strings.Split(manifest, "\n---") {
		doc = strings.TrimPrefix(strings.TrimSpace(doc), "---")
		if strings.TrimSpace(doc) == "" {
			continue
		}
		path := ""
		if m := sourceLine.FindStringSubmatch(doc); m != nil {
			path = strings.TrimSpace(m[1])
		}
		out = append(out, template{path: path, body: doc})
	}
	return out
}

// parseTemplates reads the objects of each template, on every CPU: a
// large chart's manifest costs as much to read back as to render.
func parseTemplates(ts []template) ([][]*unstructured.Unstructured, error) {
	out := make([][]*unstructured.Unstructured, len(ts))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, t := range ts {
		g.Go(func() error {
			objs, err := objects([]byte(t.body))
			if err != nil {
				return fmt.Errorf("%s: %w", t.path, err)
			}
			out[i] = objs
			return nil
		})
	}
	return out, g.Wait()
}

// objects reads the Kubernetes objects of a YAML stream, Lists expanded.
func objects(data []byte) ([]*unstructured.Unstructured, error) {
	objs, err := utils.ReadObjects(strings.NewReader(string(data)))
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, u := range objs {
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, err
			}
			for i := range list.Items {
				out = append(out, &list.Items[i])
			}
			continue
		}
		out = append(out, u)
	}
	return out, nil
}

// clusterScoped are the kinds of the core groups that have no namespace;
// any other kind without one gets the release namespace, as Helm's
// client does for the kinds the cluster calls namespaced. The pipeline
// corrects what this guesses wrong for kinds it knows better (CRDs of
// the build, the cluster's discovery).
var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "StorageClass": true, "CustomResourceDefinition": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "PriorityClass": true, "IngressClass": true, "RuntimeClass": true,
	"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true, "APIService": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true, "CSIDriver": true, "VolumeAttachment": true,
}

func namespacedGuess(u *unstructured.Unstructured) bool {
	return !clusterScoped[u.GetKind()]
}

func setAnnotation(u *unstructured.Unstructured, k, v string) {
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[k] = v
	u.SetAnnotations(a)
}

// values computes a release's values as helm-controller does: each
// valuesFrom entry in order (a key's YAML merged in, or, with a
// targetPath, the key's whole value set at that path), then spec.values
// on top. lookup reads a ConfigMap's or Secret's data (decoded), and says
// whether it exists. It returns the values, and those that came from
// Secrets, which may land anywhere in the rendered objects. Sealed, a key
// still SOPS ciphertext is left out, with a note.
func values(ctx context.Context, rel *Release, lookup func(ctx context.Context, kind, namespace, name string) (map[string]string, bool, error), sealed bool) (map[string]any, []string, []string, error) {
	out := map[string]any{}
	var secret, notes []string
	for i, ref := range rel.ValuesFrom {
		where := fmt.Sprintf("spec.valuesFrom[%d] %s %s/%s", i, ref.Kind, rel.Namespace, ref.Name)
		data, found, err := lookup(ctx, ref.Kind, rel.Namespace, ref.Name)
		switch {
		case err != nil:
			return nil, nil, nil, fmt.Errorf("%s: %w", where, err)
		case !found && ref.Optional:
			continue
		case !found:
			return nil, nil, nil, fmt.Errorf("%s: not found in the unit, the configuration or the cluster (mark it optional if it may be missing)", where)
		}
		value, ok := data[ref.ValuesKey]
		if !ok {
			if ref.Optional {
				continue
			}
			return nil, nil, nil, fmt.Errorf("%s: no key %s", where, ref.ValuesKey)
		}
		if sealed && object.IsEncrypted(strings.TrimSpace(value)) {
			notes = append(notes, fmt.Sprintf("HelmRelease %s/%s: %s key %s is encrypted and an offline diff decrypts nothing: the chart is rendered without those values", rel.Namespace, rel.Name, where, ref.ValuesKey))
			continue
		}
		if ref.Kind == "Secret" {
			secret = append(secret, secretLeaves(value, ref.TargetPath != "")...)
		}
		if ref.TargetPath != "" {
			if err := setPath(out, ref.TargetPath, value); err != nil {
				return nil, nil, nil, fmt.Errorf("%s: targetPath %s: %w", where, ref.TargetPath, err)
			}
			continue
		}
		var vals map[string]any
		if err := yaml.Unmarshal([]byte(value), &vals); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: key %s is not YAML values", where, ref.ValuesKey) // not quoted: it may be secret
		}
		out = mergeMaps(out, vals)
	}
	return mergeMaps(out, rel.Values), secret, notes, nil
}

// setPath sets value at a dotted path, as Flux does with Helm's --set
// parser: quoted values stay strings, others are typed.
func setPath(vals map[string]any, path, value string) error {
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		return strvals.ParseIntoString(path+"="+value[1:len(value)-1], vals)
	}
	return strvals.ParseInto(path+"="+value, vals)
}

// secretLeaves are the values a Secret's key holds: the text itself when
// it is set whole (targetPath), else every string leaf of its YAML.
func secretLeaves(value string, whole bool) []string {
	if whole {
		return []string{strings.Trim(value, `"'`)}
	}
	var v any
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		return []string{value}
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				walk(t[k])
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		case string:
			out = append(out, t)
		case nil:
		default:
			out = append(out, fmt.Sprint(t))
		}
	}
	walk(v)
	return out
}

// mergeMaps merges b into a copy of a, b winning; maps merge deeply.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	maps.Copy(out, a)
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// valuesFiles replaces the chart's values with the merge of files, in
// order, as source-controller packages a HelmChart with valuesFiles; read
// reads one (from the chart, or for a Git source from the repository).
func valuesFiles(ch *chart.Chart, files []string, ignoreMissing bool, read func(name string) ([]byte, error)) error {
	if len(files) == 0 {
		return nil
	}
	merged := map[string]any{}
	for _, name := range files {
		data, err := read(name)
		if err != nil {
			return fmt.Errorf("spec.chart.spec.valuesFiles: %w", err)
		}
		if data == nil {
			if ignoreMissing {
				continue
			}
			return fmt.Errorf("spec.chart.spec.valuesFiles: the chart has no file %s", name)
		}
		var vals map[string]any
		if err := yaml.Unmarshal(data, &vals); err != nil {
			return fmt.Errorf("spec.chart.spec.valuesFiles: %s: %v", name, err)
		}
		merged = mergeMaps(merged, vals)
	}
	ch.Values = merged
	return nil
}

// inChart reads a file of ch, nil when it has none.
func inChart(ch *chart.Chart) func(name string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		for _, f := range ch.Raw {
			if f.Name == strings.TrimPrefix(name, "./") {
				return f.Data, nil
			}
		}
		return nil, nil
	}
}

// ClusterCapabilities are what templates see of the cluster dc talks to:
// its version and every API group/version and kind it serves.
func ClusterCapabilities(dc discovery.DiscoveryInterface) (Capabilities, error) {
	v, err := dc.ServerVersion()
	if err != nil {
		return Capabilities{}, fmt.Errorf("reading the cluster's version: %w", err)
	}
	set, err := action.GetVersionSet(dc)
	if err != nil {
		return Capabilities{}, fmt.Errorf("reading the cluster's API versions: %w", err)
	}
	return Capabilities{KubeVersion: v.GitVersion, APIVersions: set}, nil
}
