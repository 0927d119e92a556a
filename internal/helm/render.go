package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fluxcd/pkg/ssa/utils"
	"golang.org/x/sync/errgroup"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"helm.sh/helm/v4/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
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
//
// The chart goes through Helm's engine directly (renderTemplates), not
// action.Install: Install sorts its manifests by parsing every document
// once, joins them into one text, and the objects were then parsed from
// that text again. Here each document is parsed once, and hooks are told
// apart and sorted from the parsed objects (sortTemplates), the same
// objects in the same order (TestRenderIsHelmsInstall proves it on every
// chart of testdata and of make bench).
func render(ctx context.Context, rel *Release, ch *chart.Chart, vals map[string]any, caps Capabilities, upgrade bool, lookup *templateLookup) (*Rendered, error) {
	guard := newTplGuard(ctx)
	funcs := lookup.funcs(ctx)
	if funcs == nil {
		funcs = map[string]any{}
	}
	funcs[tplGuardFunc] = guard.guard
	bounds := &budget{ctx: ctx}
	maps.Copy(funcs, bounds.funcs())
	files, err := renderTemplates(ctx, rel, guardChart(ch), vals, caps, upgrade, funcs)
	if err == nil {
		err = renderedSize(files)
		if err != nil {
			return nil, err
		}
	}
	var docs []document
	if err == nil {
		docs, err = sortTemplates(files)
	}
	if err != nil {
		if guard.err != nil {
			return nil, guard.err // not Helm's message: it quotes the template once per level
		}
		return nil, renderError(err)
	}
	return assemble(rel, ch, docs)
}

// renderTemplates renders ch's templates as action.Install does for a
// client-only dry-run (`helm template`, `helm upgrade --install
// --dry-run=client`): the release name checked, the chart's dependencies
// resolved against vals, its kubeVersion checked, values (validated
// against its schema unless rel says not to) with .Release and
// .Capabilities, then Helm's engine; NOTES.txt files are dropped.
func renderTemplates(ctx context.Context, rel *Release, ch *chart.Chart, vals map[string]any, caps Capabilities, upgrade bool, funcs map[string]any) (map[string]string, error) {
	if err := chartutil.ValidateReleaseName(rel.ReleaseName); err != nil {
		return nil, fmt.Errorf("release name check failed: release name %q: %w", rel.ReleaseName, err)
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return nil, fmt.Errorf("chart dependencies processing failed: %w", err)
	}
	hc := common.DefaultCapabilities.Copy()
	if caps.KubeVersion != "" {
		kv, err := common.ParseKubeVersion(caps.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kube version %q: %w", caps.KubeVersion, err)
		}
		hc.KubeVersion = *kv
	}
	hc.APIVersions = append(hc.APIVersions, caps.APIVersions...)
	options := common.ReleaseOptions{Name: rel.ReleaseName, Namespace: rel.ReleaseNamespace, Revision: 1, IsInstall: !upgrade, IsUpgrade: upgrade}
	values, err := util.ToRenderValuesWithSchemaValidation(ch, vals, options, hc, rel.DisableSchemaValidation)
	if err != nil {
		return nil, err
	}
	if ch.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, hc.KubeVersion.String()) {
		return nil, fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", ch.Metadata.KubeVersion, hc.KubeVersion.Version)
	}
	e := engine.Engine{CustomTemplateFuncs: funcs}
	files, err := e.RenderWithContext(ctx, ch, values)
	if err != nil {
		return nil, err
	}
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	return files, nil
}

// document is one YAML document a template rendered, parsed.
type document struct {
	path string
	// head is the document as written (a List unexpanded; nil for a
	// document of comments only): Helm sorts and tells hooks by it.
	head *unstructured.Unstructured
	// objs are its objects, read as utils.ReadObjects reads them: a
	// List's items, nothing for what is not a Kubernetes object.
	objs []*unstructured.Unstructured
	// hook is set for a hook (its events, weight and policies); Object
	// is set by assemble.
	hook *Hook
}

func (d document) kind() string {
	if d.head == nil {
		return ""
	}
	return d.head.GetKind()
}

// sortTemplates splits rendered templates into documents and sorts them
// as Helm's releaseutil.SortManifests does: files by path (partials and
// empty files skipped), documents in file order, hooks (a helm.sh/hook
// annotation of known events) apart, each list stably sorted by kind in
// Helm's install order, unknown kinds last by name. Each document is
// parsed once, on every CPU.
func sortTemplates(files map[string]string) ([]document, error) {
	var docs []document
	var bodies []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		content := files[name]
		if strings.HasPrefix(path.Base(name), "_") || strings.TrimSpace(content) == "" {
			continue
		}
		split := releaseutil.SplitManifests(content)
		keys := slices.Collect(maps.Keys(split))
		sort.Sort(releaseutil.BySplitManifestsOrder(keys))
		for _, k := range keys {
			docs = append(docs, document{path: name})
			bodies = append(bodies, split[k])
		}
	}
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range docs {
		g.Go(func() error {
			var err error
			docs[i].head, docs[i].objs, err = parseDocument(docs[i].path, bodies[i])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var generic, hooks []document
	for _, d := range docs {
		var annotations map[string]string
		if d.head != nil {
			annotations = d.head.GetAnnotations()
		}
		types, ok := annotations[string(release.HookAnnotation)]
		if !ok {
			generic = append(generic, d)
			continue
		}
		h := &Hook{Path: d.path}
		h.Weight, _ = strconv.Atoi(annotations[string(release.HookWeightAnnotation)])
		known := true
		for t := range strings.SplitSeq(types, ",") {
			e, ok := hookEvents[strings.ToLower(strings.TrimSpace(t))]
			if !ok {
				known = false // Helm skips a hook of an unknown event
				break
			}
			h.Events = append(h.Events, e)
		}
		if !known {
			continue
		}
		if p, ok := annotations[string(release.HookDeleteAnnotation)]; ok {
			for v := range strings.SplitSeq(p, ",") {
				h.DeletePolicies = append(h.DeletePolicies, strings.ToLower(strings.TrimSpace(v)))
			}
		}
		d.hook = h
		hooks = append(hooks, d)
	}
	byKind(generic)
	byKind(hooks)
	return append(generic, hooks...), nil
}

// hookEvents are the hook events Helm knows, by annotation value.
var hookEvents = map[string]string{
	"pre-install": "pre-install", "post-install": "post-install", "pre-delete": "pre-delete", "post-delete": "post-delete",
	"pre-upgrade": "pre-upgrade", "post-upgrade": "post-upgrade", "pre-rollback": "pre-rollback", "post-rollback": "post-rollback",
	"test": "test", "test-success": "test", // Helm 2's name for tests
}

// installOrder is Helm's install order of kinds, by kind.
var installOrder = func() map[string]int {
	m := make(map[string]int, len(releaseutil.InstallOrder))
	for i, k := range releaseutil.InstallOrder {
		m[k] = i
	}
	return m
}()

// byKind sorts docs stably by kind as Helm's kind sorter does: known
// kinds in install order, then unknown kinds by name.
func byKind(docs []document) {
	sort.SliceStable(docs, func(i, j int) bool {
		a, b := docs[i].kind(), docs[j].kind()
		ia, aok := installOrder[a]
		ib, bok := installOrder[b]
		switch {
		case !aok && !bok:
			return a < b
		case !aok:
			return false
		case !bok:
			return true
		}
		return ia < ib
	})
}

// parseDocument reads a document: its head and its objects, as
// utils.ReadObjects reads them. Where Helm's sorter would not read the
// document's head (YAML it does not parse, annotations that are not
// strings), its error is the one returned.
func parseDocument(path, body string) (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	head, objs, err := readDocument(body)
	if err != nil || head != nil && !plainHead(head) {
		var sh releaseutil.SimpleHead
		if herr := yaml.Unmarshal([]byte(body), &sh); herr != nil {
			return nil, nil, fmt.Errorf("YAML parse error on %s: %w", path, herr)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return head, objs, nil
}

// readDocument is utils.ReadObjects of one document, which keeps its
// head: Lists are expanded, what is not a Kubernetes object (or is a
// kustomization) is left out.
func readDocument(body string) (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(strings.NewReader(body), 2048)
	var head *unstructured.Unstructured
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(obj); err != nil {
			if err == io.EOF {
				return head, objs, nil
			}
			return head, objs, err
		}
		if head != nil {
			return head, objs, errors.New("more than one YAML document")
		}
		head = obj
		if obj.IsList() {
			err := obj.EachListItem(func(item k8sruntime.Object) error {
				objs = append(objs, item.(*unstructured.Unstructured))
				return nil
			})
			if err != nil {
				return head, objs, err
			}
			continue
		}
		if utils.IsKubernetesObject(obj) && !utils.IsKustomization(obj) {
			objs = append(objs, obj)
		}
	}
}

// plainHead says whether u's kind, apiVersion, name and annotations are
// strings, as Helm's sorter reads them.
func plainHead(u *unstructured.Unstructured) bool {
	for _, f := range []string{"kind", "apiVersion"} {
		if v, ok := u.Object[f]; ok {
			if _, s := v.(string); !s && v != nil {
				return false
			}
		}
	}
	md, ok := u.Object["metadata"]
	if !ok || md == nil {
		return true
	}
	m, ok := md.(map[string]any)
	if !ok {
		return false
	}
	if v, ok := m["name"]; ok && v != nil {
		if _, s := v.(string); !s {
			return false
		}
	}
	a, ok := m["annotations"]
	if !ok || a == nil {
		return true
	}
	am, ok := a.(map[string]any)
	if !ok {
		return false
	}
	for _, v := range am {
		if _, s := v.(string); !s && v != nil {
			return false
		}
	}
	return true
}

// assemble makes the release's objects from its sorted documents: the
// chart's CRDs first (per rel's CRD policy), then its templates' objects
// (Lists expanded, namespaced kinds without a namespace put in the
// release's), and its hooks (test hooks only when rel enables tests, none
// when it disables hooks) in the order Helm runs them: by weight, then
// by name.
func assemble(rel *Release, ch *chart.Chart, docs []document) (*Rendered, error) {
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
	for _, d := range docs {
		objs := d.objs
		if d.hook != nil {
			if rel.DisableHooks || slices.Contains(d.hook.Events, string(release.HookTest)) && !rel.Test.Enable {
				continue // tests run only when spec.test.enable says; disabled hooks never
			}
			if len(objs) != 1 {
				return nil, fmt.Errorf("%s: a hook is one object: it holds %d", d.path, len(objs))
			}
			hook := *d.hook
			hook.Object = objs[0]
			if hook.Object.GetNamespace() == "" && namespacedGuess(hook.Object) {
				hook.Object.SetNamespace(rel.ReleaseNamespace)
			}
			r.Hooks = append(r.Hooks, hook)
			continue
		}
		for _, u := range objs {
			if u.GetNamespace() == "" && namespacedGuess(u) {
				u.SetNamespace(rel.ReleaseNamespace)
			}
			r.add(u, d.path)
		}
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

// renderedSize refuses a release whose templates rendered over
// MaxRenderedBytes.
func renderedSize(files map[string]string) error {
	n := 0
	for _, body := range files {
		n += len(body)
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
