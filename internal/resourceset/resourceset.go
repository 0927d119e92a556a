// Package resourceset expands Flux Operator's ResourceSets
// (fluxcd.controlplane.io/v1) into the objects they generate, as the
// operator does, with no operator in the cluster: the ResourceSet's
// inline inputs and those of the ResourceSetInputProviders it names
// (type Static) are combined (Flatten or Permute), each resource and
// the resourcesTemplate are rendered once per input set with Go
// templates delimited by << and >> (slim-sprig's hermetic functions,
// slugify, toYaml, inputs), the objects are deduplicated, those
// annotated fluxcd.controlplane.io/reconcile: disabled left out, and
// spec.commonMetadata and the owner labels
// resourceset.fluxcd.controlplane.io/{name,namespace} set on them.
package resourceset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/adler32"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"unicode"

	"github.com/Masterminds/semver/v3"
	sprig "github.com/go-task/slim-sprig/v3"
	"github.com/gosimple/slug"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/fluxcd/pkg/ssa/utils"

	"github.com/kustomize-deploy/kustomize-deploy/internal/github"
)

// Kinds and labels of Flux Operator's API.
const (
	Group          = "fluxcd.controlplane.io"
	Kind           = "ResourceSet"
	ProviderKind   = "ResourceSetInputProvider"
	reconcileKey   = Group + "/reconcile"
	ownerName      = "resourceset." + Group + "/name"
	ownerNamespace = "resourceset." + Group + "/namespace"
	// maxPermutations bounds what Permute may generate, as the operator does.
	maxPermutations = 10000
	// maxObjects bounds what one ResourceSet may generate: a pull
	// request's ResourceSet is hostile input.
	maxObjects = 10000
)

// IsResourceSet and IsProvider tell Flux Operator's kinds.
func IsResourceSet(u *unstructured.Unstructured) bool {
	return u.GroupVersionKind().Group == Group && u.GetKind() == Kind
}

func IsProvider(u *unstructured.Unstructured) bool {
	return u.GroupVersionKind().Group == Group && u.GetKind() == ProviderKind
}

// spec is a ResourceSet's spec as this package reads it: fields it does
// not know are refused, as are those it does not honour yet.
type spec struct {
	CommonMetadata *struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"commonMetadata"`
	InputStrategy *struct {
		Name                  string `json:"name"`
		IncludeEmptyProviders bool   `json:"includeEmptyProviders"`
	} `json:"inputStrategy"`
	Inputs     []map[string]any `json:"inputs"`
	InputsFrom []struct {
		APIVersion string                `json:"apiVersion"`
		Kind       string                `json:"kind"`
		Name       string                `json:"name"`
		Selector   *metav1.LabelSelector `json:"selector"`
	} `json:"inputsFrom"`
	Resources          []json.RawMessage `json:"resources"`
	ResourcesTemplate  string            `json:"resourcesTemplate"`
	Steps              json.RawMessage   `json:"steps"`
	DependsOn          []dependency      `json:"dependsOn"`
	ServiceAccountName string            `json:"serviceAccountName"`
	Wait               bool              `json:"wait"`
}

// dependency is one spec.dependsOn entry: an object that must exist
// (and, with ready, be Ready, or satisfy readyExpr) first.
type dependency struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	Ready      bool   `json:"ready"`
	ReadyExpr  string `json:"readyExpr"`
}

// providerSpec is a ResourceSetInputProvider's spec: types Static and
// GitHub's (pull requests, branches, tags, read through the job's GitHub
// client) are expanded here; the others call services this run does not
// reach.
type providerSpec struct {
	Type          string         `json:"type"`
	URL           string         `json:"url"`
	DefaultValues map[string]any `json:"defaultValues"`
	Filter        *struct {
		IncludeBranch      string   `json:"includeBranch"`
		ExcludeBranch      string   `json:"excludeBranch"`
		IncludeTag         string   `json:"includeTag"`
		ExcludeTag         string   `json:"excludeTag"`
		IncludeEnvironment string   `json:"includeEnvironment"`
		ExcludeEnvironment string   `json:"excludeEnvironment"`
		Labels             []string `json:"labels"`
		Limit              int      `json:"limit"`
		SemVer             string   `json:"semver"`
	} `json:"filter"`
	SecretRef          json.RawMessage `json:"secretRef"`
	CertSecretRef      json.RawMessage `json:"certSecretRef"`
	ServiceAccountName string          `json:"serviceAccountName"`
	Insecure           bool            `json:"insecure"`
	Skip               json.RawMessage `json:"skip"`
	Schedule           json.RawMessage `json:"schedule"`
	Selectors          json.RawMessage `json:"selectors"`
}

// Options say how Expand reaches the services providers read.
type Options struct {
	// GitHub lists pull requests, branches and tags on GitHubServer (the
	// job's, e.g. https://github.com) with the job's token; nil, GitHub
	// providers fail naming what is missing. A provider of another
	// server is refused: the job's token is for its own.
	GitHub       GitHub
	GitHubServer string
}

// GitHub is what GitHub input providers read (internal/github's Client).
type GitHub interface {
	ListOpenPulls(ctx context.Context, owner, repo string) ([]github.OpenPull, error)
	ListBranches(ctx context.Context, owner, repo string) ([]github.Ref, error)
	ListTags(ctx context.Context, owner, repo string) ([]github.Ref, error)
}

// Expanded is what one ResourceSet generated.
type Expanded struct {
	Objects []*unstructured.Unstructured
	// Notes say what was read but not acted on.
	Notes []string
	// External says inputs came from a service (GitHub): the same files
	// may expand to other objects on the next run.
	External bool
}

// providerType is p's spec.type.
func providerType(p *unstructured.Unstructured) string {
	t, _, _ := unstructured.NestedString(p.Object, "spec", "type")
	return t
}

// Expand generates rset's objects, its inputsFrom resolved among
// providers (the ResourceSetInputProviders beside it) and its dependsOn
// among siblings (the ResourceSets beside it). Errors name the field at
// fault.
//
// spec.dependsOn is read for what a run can order: a ResourceSet beside
// it is applied with it, in the same unit (the unit applies, then waits
// for, all they generate together); a Flux Kustomization is added to
// the dependsOn of every Kustomization it generates, which run as units
// after it (its other objects are applied with its unit, not held back);
// readyExpr is then the unit's readiness. Other kinds are refused.
func Expand(ctx context.Context, rset *unstructured.Unstructured, providers, siblings []*unstructured.Unstructured, opts Options) (*Expanded, error) {
	var s spec
	if err := decode(rset.Object["spec"], &s); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	var errs []error
	refuse := func(field string, set bool, why string) {
		if set {
			errs = append(errs, fmt.Errorf("spec.%s: not supported yet: %s", field, why))
		}
	}
	refuse("steps", len(s.Steps) > 0 && string(s.Steps) != "null", "steps apply in sequence with health checks between them; use resources")
	refuse("serviceAccountName", s.ServiceAccountName != "", "the generated objects are applied as the unit, whose serviceAccountName says who that is")
	if len(s.Resources) == 0 && s.ResourcesTemplate == "" && len(errs) == 0 {
		errs = append(errs, errors.New("spec: neither resources nor resourcesTemplate"))
	}
	strategy, includeEmpty := "Flatten", false
	if st := s.InputStrategy; st != nil {
		strategy = cmpOr(st.Name, strategy)
		includeEmpty = st.Name == "Permute" && st.IncludeEmptyProviders
		if strategy != "Flatten" && strategy != "Permute" {
			errs = append(errs, fmt.Errorf("spec.inputStrategy.name: %q is not Flatten or Permute", st.Name))
		}
	}
	used, err := selectProviders(rset, s, providers)
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	sources := []source{{name: rset.GetName(), inputs: withProvider(s.Inputs, rset)}}
	var providerNotes []string
	external := false
	for _, p := range used {
		in, notes, err := providerInputs(ctx, p, opts)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", ProviderKind, p.GetNamespace(), p.GetName(), err)
		}
		sources = append(sources, source{name: p.GetName(), inputs: withProvider(in, p)})
		providerNotes = append(providerNotes, notes...)
		external = external || providerType(p) != "Static"
	}
	sets, err := combine(strategy, includeEmpty, sources)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	if len(s.InputsFrom) == 0 || len(sets) > 0 {
		// Providers that export no inputs make no objects, as in the
		// operator: what they made before is pruned.
		if objs, err = build(s.ResourcesTemplate, s.Resources, sets); err != nil {
			return nil, err
		}
	}
	for _, u := range objs {
		if s.CommonMetadata != nil {
			setMetadata(u, s.CommonMetadata.Labels, s.CommonMetadata.Annotations)
		}
		setMetadata(u, map[string]string{ownerName: rset.GetName(), ownerNamespace: rset.GetNamespace()}, nil)
	}
	out := &Expanded{Objects: objs, External: external}
	notes, err := dependOn(rset, s.DependsOn, siblings, objs)
	if err != nil {
		return nil, err
	}
	out.Notes = append(out.Notes, notes...)
	if s.Wait {
		out.Notes = append(out.Notes, fmt.Sprintf("%s %s/%s: spec.wait is read but not acted on: the unit's wait and health checks decide", Kind, rset.GetNamespace(), rset.GetName()))
	}
	out.Notes = append(out.Notes, providerNotes...)
	return out, nil
}

// decode reads v (an unstructured value) into out, refusing unknown
// fields.
func decode(v any, out any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return fmt.Errorf("%s is not a field this tool knows", strings.Trim(f, `"`))
		}
		return err
	}
	return nil
}

// selectProviders returns the providers spec.inputsFrom names (by name
// or label selector, in the ResourceSet's namespace), in the operator's
// order: by kind, namespace and name.
func selectProviders(rset *unstructured.Unstructured, s spec, providers []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	seen := map[*unstructured.Unstructured]bool{}
	ns := rset.GetNamespace()
	for i, ref := range s.InputsFrom {
		at := fmt.Sprintf("spec.inputsFrom[%d]", i)
		if ref.Kind != "" && ref.Kind != ProviderKind {
			return nil, fmt.Errorf("%s.kind: %q is not %s", at, ref.Kind, ProviderKind)
		}
		var match func(*unstructured.Unstructured) bool
		switch {
		case ref.Name != "" && ref.Selector != nil:
			return nil, fmt.Errorf("%s: name and selector are set together", at)
		case ref.Name != "":
			match = func(p *unstructured.Unstructured) bool { return p.GetName() == ref.Name }
		case ref.Selector != nil:
			sel, err := metav1.LabelSelectorAsSelector(ref.Selector)
			if err != nil {
				return nil, fmt.Errorf("%s.selector: %w", at, err)
			}
			match = func(p *unstructured.Unstructured) bool { return sel.Matches(labels.Set(p.GetLabels())) }
		default:
			return nil, fmt.Errorf("%s: neither name nor selector", at)
		}
		found := false
		for _, p := range providers {
			if p.GetNamespace() != ns || !match(p) {
				continue
			}
			found = true
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
		if !found && ref.Name != "" {
			return nil, fmt.Errorf("%s: %s %s/%s is not among the unit's objects", at, ProviderKind, ns, ref.Name)
		}
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		return strings.Compare(a.GetNamespace()+"/"+a.GetName(), b.GetNamespace()+"/"+b.GetName())
	})
	return out, nil
}

// providerInputs are what provider p exports, each input its
// defaultValues overlaid with what it found, and notes on what was read
// but not acted on.
func providerInputs(ctx context.Context, p *unstructured.Unstructured, opts Options) ([]map[string]any, []string, error) {
	var ps providerSpec
	if err := decode(p.Object["spec"], &ps); err != nil {
		return nil, nil, fmt.Errorf("spec: %w", err)
	}
	name := fmt.Sprintf("%s %s/%s", ProviderKind, p.GetNamespace(), p.GetName())
	var notes []string
	switch ps.Type {
	case "Static":
		in := withDefaults(ps.DefaultValues, map[string]any{"id": id(p.GetName())})
		notes = append(notes, name+": its input's id is made from its name, as flux-operator build does offline (in a cluster it is made from the object's UID)")
		return []map[string]any{in}, notes, nil
	case "GitHubPullRequest", "GitHubBranch", "GitHubTag":
	default:
		return nil, nil, fmt.Errorf("spec.type: %q is not supported yet (Static, GitHubPullRequest, GitHubBranch and GitHubTag are): it calls a service this run does not reach", ps.Type)
	}
	for _, f := range []struct {
		field string
		set   bool
	}{{"certSecretRef", len(ps.CertSecretRef) > 0}, {"serviceAccountName", ps.ServiceAccountName != ""}, {"insecure", ps.Insecure}, {"selectors", len(ps.Selectors) > 0}} {
		if f.set {
			return nil, nil, fmt.Errorf("spec.%s: not supported yet for %s", f.field, ps.Type)
		}
	}
	if len(ps.SecretRef) > 0 {
		notes = append(notes, name+": spec.secretRef is not read: the job's GitHub token reads the repository")
	}
	if len(ps.Skip)+len(ps.Schedule) > 0 {
		notes = append(notes, name+": spec.skip and spec.schedule are read but not acted on: the provider is read on every run")
	}
	owner, repo, err := githubRepo(ps.URL, opts.GitHubServer)
	if err != nil {
		return nil, nil, fmt.Errorf("spec.url: %w", err)
	}
	if opts.GitHub == nil {
		return nil, nil, errors.New("no GitHub client to read it with: give the run a GitHub token (GITHUB_TOKEN, the Action's github-token)")
	}
	f := filters{limit: 100}
	if fl := ps.Filter; fl != nil {
		if fl.Limit > 0 {
			f.limit = fl.Limit
		}
		if f.limit > github.MaxListed {
			return nil, nil, fmt.Errorf("spec.filter.limit: %d is over %d", f.limit, github.MaxListed)
		}
		f.labels = fl.Labels
		include, exclude := fl.IncludeBranch, fl.ExcludeBranch
		if ps.Type == "GitHubTag" {
			include, exclude = fl.IncludeTag, fl.ExcludeTag
		}
		if f.include, err = compile(include); err != nil {
			return nil, nil, fmt.Errorf("spec.filter: %w", err)
		}
		if f.exclude, err = compile(exclude); err != nil {
			return nil, nil, fmt.Errorf("spec.filter: %w", err)
		}
		if fl.SemVer != "" {
			if f.semver, err = semver.NewConstraint(fl.SemVer); err != nil {
				return nil, nil, fmt.Errorf("spec.filter.semver: %w", err)
			}
		}
	}
	var found []map[string]any
	switch ps.Type {
	case "GitHubPullRequest":
		pulls, err := opts.GitHub.ListOpenPulls(ctx, owner, repo)
		if err != nil {
			return nil, nil, err
		}
		for _, pr := range pulls {
			if !f.match(pr.HeadRef) || !f.hasLabels(pr.Labels) {
				continue
			}
			in := map[string]any{"id": fmt.Sprint(pr.Number), "sha": pr.HeadSHA, "branch": pr.HeadRef, "title": pr.Title, "author": pr.Author}
			if len(pr.Labels) > 0 {
				labels := make([]any, len(pr.Labels))
				for i, l := range pr.Labels {
					labels[i] = l
				}
				in["labels"] = labels
			}
			found = append(found, in)
			if len(found) >= f.limit {
				break
			}
		}
	case "GitHubBranch":
		branches, err := opts.GitHub.ListBranches(ctx, owner, repo)
		if err != nil {
			return nil, nil, err
		}
		for _, b := range branches {
			if !f.match(b.Name) {
				continue
			}
			found = append(found, map[string]any{"id": id(b.Name), "sha": b.SHA, "branch": b.Name})
			if len(found) >= f.limit {
				break
			}
		}
	case "GitHubTag":
		tags, err := opts.GitHub.ListTags(ctx, owner, repo)
		if err != nil {
			return nil, nil, err
		}
		for _, t := range f.tags(tags) {
			found = append(found, map[string]any{"id": id(t.Name), "sha": t.SHA, "tag": t.Name})
		}
	}
	out := make([]map[string]any, len(found))
	for i, in := range found {
		out[i] = withDefaults(ps.DefaultValues, in)
	}
	return out, notes, nil
}

// withDefaults is defaults overlaid with found.
func withDefaults(defaults, found map[string]any) map[string]any {
	out := make(map[string]any, len(defaults)+len(found))
	for k, v := range defaults {
		out[k] = v
	}
	for k, v := range found {
		out[k] = v
	}
	return out
}

// githubRepo is the owner and name of the repository url names, which
// must be on server (the job's GitHub): the job's token is for it alone.
func githubRepo(raw, server string) (owner, repo string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("%q is not a repository URL such as https://github.com/owner/repo", raw)
	}
	srv, _ := url.Parse(server)
	if server == "" || srv == nil || !strings.EqualFold(srv.Host, u.Host) || srv.Scheme != u.Scheme {
		return "", "", fmt.Errorf("%s is not on the job's GitHub server (%s): its token is for that server alone", u.Host, cmpOr(server, "none"))
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("%q names no owner/repository", raw)
	}
	return parts[0], strings.TrimSuffix(parts[1], ".git"), nil
}

// filters are a provider's spec.filter.
type filters struct {
	include, exclude *regexp.Regexp
	labels           []string
	limit            int
	semver           *semver.Constraints
}

func compile(expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	return regexp.Compile(expr)
}

func (f filters) match(s string) bool {
	return (f.include == nil || f.include.MatchString(s)) && (f.exclude == nil || !f.exclude.MatchString(s))
}

// hasLabels says whether labels hold every filter label.
func (f filters) hasLabels(labels []string) bool {
	for _, l := range f.labels {
		if !slices.Contains(labels, l) {
			return false
		}
	}
	return true
}

// tags filters tags as the operator does: include and exclude, then the
// semver range, highest first (else names in reverse order), then the
// limit.
func (f filters) tags(tags []github.Ref) []github.Ref {
	var kept []github.Ref
	for _, t := range tags {
		if f.match(t.Name) {
			kept = append(kept, t)
		}
	}
	if f.semver != nil {
		type versioned struct {
			ref github.Ref
			v   *semver.Version
		}
		var vs []versioned
		for _, t := range kept {
			if v, err := semver.NewVersion(strings.TrimPrefix(t.Name, "v")); err == nil && f.semver.Check(v) {
				vs = append(vs, versioned{t, v})
			}
		}
		slices.SortStableFunc(vs, func(a, b versioned) int { return b.v.Compare(a.v) })
		kept = kept[:0]
		for _, v := range vs {
			kept = append(kept, v.ref)
		}
	} else {
		slices.SortStableFunc(kept, func(a, b github.Ref) int { return strings.Compare(b.Name, a.Name) })
	}
	return kept[:min(f.limit, len(kept))]
}

// id is the operator's short opaque id of s.
func id(s string) string { return fmt.Sprint(adler32.Checksum([]byte(s))) }

// withProvider copies inputs, each with the provider it came from, as
// the operator annotates them.
func withProvider(inputs []map[string]any, p *unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, len(inputs))
	for i, in := range inputs {
		c := make(map[string]any, len(in)+1)
		for k, v := range in {
			c[k] = v
		}
		c["provider"] = map[string]any{"apiVersion": p.GetAPIVersion(), "kind": p.GetKind(), "name": p.GetName(), "namespace": p.GetNamespace()}
		out[i] = c
	}
	return out
}

// source is one provider of inputs: the ResourceSet itself, then each
// ResourceSetInputProvider.
type source struct {
	name   string
	inputs []map[string]any
}

// combine combines the sources' inputs: Flatten concatenates them;
// Permute makes their Cartesian product, each set holding every
// source's input under its normalized name (sources without inputs left
// out unless includeEmpty).
func combine(strategy string, includeEmpty bool, sources []source) ([]map[string]any, error) {
	if strategy == "Flatten" {
		var out []map[string]any
		for _, s := range sources {
			out = append(out, s.inputs...)
		}
		return out, nil
	}
	var lists []source
	total := 1
	for _, s := range sources {
		if len(s.inputs) == 0 && !includeEmpty {
			continue
		}
		if normalize(s.name) == "" {
			return nil, fmt.Errorf("input provider %q has an empty normalized name", s.name)
		}
		total *= len(s.inputs)
		if total > maxPermutations {
			return nil, fmt.Errorf("input provider %q would make more than %d permutations", s.name, maxPermutations)
		}
		lists = append(lists, s)
	}
	if len(lists) == 0 || total == 0 {
		return nil, nil
	}
	out := []map[string]any{{}}
	for _, s := range lists {
		var next []map[string]any
		for _, prefix := range out {
			for _, in := range s.inputs {
				c := make(map[string]any, len(prefix)+1)
				for k, v := range prefix {
					c[k] = v
				}
				c[normalize(s.name)] = in
				next = append(next, c)
			}
		}
		out = next
	}
	return out, nil
}

// normalize is the operator's key for a provider name in templates:
// lower case, spaces and punctuation as '_', other characters dropped,
// empty words removed.
func normalize(key string) string {
	key = strings.Map(func(r rune) rune {
		r = unicode.ToLower(r)
		switch {
		case unicode.IsSpace(r) || unicode.IsPunct(r):
			return '_'
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			return r
		}
		return -1
	}, key)
	var words []string
	for _, w := range strings.Split(key, "_") {
		if w != "" {
			words = append(words, w)
		}
	}
	return strings.Join(words, "_")
}

// build renders every resource, then the template, once per input set
// (once with none when there are none), deduplicating by group, kind,
// namespace and name: a resource wins over the template.
func build(tmpl string, resources []json.RawMessage, sets []map[string]any) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	keys := map[string]bool{}
	add := func(u *unstructured.Unstructured, dedup bool) error {
		if dedup && u.GetAnnotations()[reconcileKey] == "disabled" {
			return nil
		}
		k := key(u)
		if dedup && keys[k] {
			return nil
		}
		keys[k] = true
		if len(out) >= maxObjects {
			return fmt.Errorf("more than %d objects generated", maxObjects)
		}
		out = append(out, u)
		return nil
	}
	budget := &limited{left: maxTotal}
	perSet := sets
	if len(perSet) == 0 {
		perSet = []map[string]any{nil}
	}
	for i, r := range resources {
		text, err := yaml.JSONToYAML(r)
		if err != nil {
			return nil, fmt.Errorf("spec.resources[%d]: %w", i, err)
		}
		for _, set := range perSet {
			objs, err := render(string(text), set, budget)
			if err != nil {
				return nil, fmt.Errorf("spec.resources[%d]: %w", i, err)
			}
			if len(objs) != 1 {
				return nil, fmt.Errorf("spec.resources[%d]: renders %d objects, not one", i, len(objs))
			}
			if err := add(objs[0], len(sets) > 0); err != nil {
				return nil, err
			}
		}
	}
	if tmpl != "" {
		for _, set := range perSet {
			objs, err := render(tmpl, set, budget)
			if err != nil {
				return nil, fmt.Errorf("spec.resourcesTemplate: %w", err)
			}
			for _, u := range objs {
				if err := add(u, true); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// render executes text as a template of input set and reads the objects
// it renders; what it renders counts against budget too.
func render(text string, set map[string]any, budget *limited) ([]*unstructured.Unstructured, error) {
	t, err := template.New("resourceset").Delims("<<", ">>").
		Funcs(sprig.HermeticTxtFuncMap()).
		Funcs(bounded).
		Funcs(template.FuncMap{
			"slugify":    slugify,
			"inputs":     func() any { return set },
			"toYaml":     func(v any) string { s, _ := toYaml(v); return s },
			"mustToYaml": toYaml,
		}).
		Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	var b strings.Builder
	if err := t.Execute(&limited{w: &b, left: maxRendered, total: budget}, nil); err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	objs, err := utils.ReadObjects(strings.NewReader(b.String()))
	if err != nil {
		return nil, fmt.Errorf("the rendered YAML: %w", err)
	}
	return objs, nil
}

// bounded replaces the slim-sprig functions that allocate as much as
// their arguments ask: a pull request's template is hostile input, and
// would otherwise exhaust the runner before anything is written.
var bounded = template.FuncMap{
	"repeat": func(count int, str string) (string, error) {
		if count < 0 || count > 0 && len(str) > maxRendered/count {
			return "", fmt.Errorf("repeat: %d times %d bytes is over %d MiB", count, len(str), maxRendered>>20)
		}
		return strings.Repeat(str, count), nil
	},
	"until": func(n int) ([]int, error) { return steps(0, n, 1) },
	"untilStep": func(start, stop, step int) ([]int, error) {
		return steps(start, stop, step)
	},
}

// maxSteps bounds the lists until and untilStep make.
const maxSteps = 10000

func steps(start, stop, step int) ([]int, error) {
	if step == 0 || (stop-start)/step > maxSteps || (stop-start)/step < -maxSteps {
		return nil, fmt.Errorf("a list from %d to %d by %d: more than %d items", start, stop, step, maxSteps)
	}
	var out []int
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		out = append(out, i)
	}
	return out, nil
}

// MaxRendered bounds what one template renders, once; MaxTotal what a
// ResourceSet renders in all.
const (
	MaxRendered = 16 << 20
	MaxTotal    = 64 << 20
)

// maxRendered and maxTotal are MaxRendered and MaxTotal, lowered by
// tests that would rather not render 64 MiB.
var maxRendered, maxTotal = MaxRendered, MaxTotal

// limited is a writer that fails past its limit, and past total's.
type limited struct {
	w     *strings.Builder
	left  int
	total *limited
}

func (l *limited) Write(p []byte) (int, error) {
	if len(p) > l.left {
		return 0, fmt.Errorf("renders more than %d MiB", maxRendered>>20)
	}
	if t := l.total; t != nil {
		if len(p) > t.left {
			return 0, fmt.Errorf("the ResourceSet renders more than %d MiB in all", maxTotal>>20)
		}
		t.left -= len(p)
	}
	l.left -= len(p)
	return l.w.Write(p)
}

// slugify is the operator's: at most 63 characters (a label value),
// words not cut in half.
func slugify(s string) string {
	return slugger(s)
}

var slugger = func() func(string) string {
	slug.MaxLength = 63
	slug.EnableSmartTruncate = true
	return slug.Make
}()

func toYaml(v any) (string, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func key(u *unstructured.Unstructured) string {
	return strings.Join([]string{u.GroupVersionKind().Group, u.GetKind(), u.GetNamespace(), u.GetName()}, "/")
}

// setMetadata sets labels and annotations on u, over any of the same key.
func setMetadata(u *unstructured.Unstructured, labels, annotations map[string]string) {
	if len(labels) > 0 {
		l := u.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		for k, v := range labels {
			l[k] = v
		}
		u.SetLabels(l)
	}
	if len(annotations) > 0 {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		for k, v := range annotations {
			a[k] = v
		}
		u.SetAnnotations(a)
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// dependOn honours deps (see Expand) on objs, returning notes.
func dependOn(rset *unstructured.Unstructured, deps []dependency, siblings, objs []*unstructured.Unstructured) ([]string, error) {
	var notes, kustomizations []string
	var refs []map[string]any
	name := fmt.Sprintf("%s %s/%s", Kind, rset.GetNamespace(), rset.GetName())
	for i, d := range deps {
		at := fmt.Sprintf("spec.dependsOn[%d]", i)
		group, _, _ := strings.Cut(d.APIVersion, "/")
		if !strings.Contains(d.APIVersion, "/") {
			group = ""
		}
		ns := cmpOr(d.Namespace, rset.GetNamespace())
		switch {
		case group == Group && d.Kind == Kind:
			if !slices.ContainsFunc(siblings, func(u *unstructured.Unstructured) bool { return u.GetName() == d.Name && u.GetNamespace() == ns }) {
				return nil, fmt.Errorf("%s: %s %s/%s is not among the unit's objects: this run cannot wait for it", at, Kind, ns, d.Name)
			}
			notes = append(notes, fmt.Sprintf("%s: dependsOn %s %s/%s is applied with it, in the same unit", name, Kind, ns, d.Name))
		case group == "kustomize.toolkit.fluxcd.io" && d.Kind == "Kustomization":
			refs = append(refs, map[string]any{"name": d.Name, "namespace": ns})
			kustomizations = append(kustomizations, ns+"/"+d.Name)
			if d.ReadyExpr != "" {
				notes = append(notes, fmt.Sprintf("%s: %s.readyExpr is read as the readiness of unit %s", name, at, d.Name))
			}
		default:
			return nil, fmt.Errorf("%s: not supported yet: a dependency on %s %s (ResourceSets beside it and Flux Kustomizations are)", at, d.Kind, d.APIVersion)
		}
	}
	if len(refs) == 0 {
		return notes, nil
	}
	n := 0
	for _, u := range objs {
		if u.GroupVersionKind().Group != "kustomize.toolkit.fluxcd.io" || u.GetKind() != "Kustomization" {
			continue
		}
		list, _, _ := unstructured.NestedSlice(u.Object, "spec", "dependsOn")
		for _, r := range refs {
			list = append(list, map[string]any{"name": r["name"], "namespace": r["namespace"]})
		}
		if err := unstructured.SetNestedSlice(u.Object, list, "spec", "dependsOn"); err != nil {
			return nil, err
		}
		n++
	}
	notes = append(notes, fmt.Sprintf("%s: dependsOn Kustomization %s: added to the dependsOn of the %d Kustomization(s) it generates; its other objects are applied with its unit", name, strings.Join(kustomizations, ", "), n))
	return notes, nil
}
