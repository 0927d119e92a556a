package config

import (
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Flux's prototype kustomize-controller (2020) had its own Kustomization
// API, kustomize.fluxcd.io/v1alpha1, which this project was specified
// from. It is read with its documented meaning:
//
//   - spec.prune is a label selector ("k=v,…"): pruning is on when it is
//     set, and prunes only the inventoried objects whose labels match it
//     (never an object the run did not apply);
//   - spec.generate generates a kustomization.yaml for a directory of
//     plain manifests, whose label transformer sets the labels of
//     spec.prune's equality terms on every object;
//   - spec.serviceAccount {name, namespace} is impersonated;
//   - spec.healthChecks name workloads (Deployment, DaemonSet,
//     StatefulSet: apps/v1) to wait for; spec.dependsOn names
//     Kustomizations of the same namespace; spec.timeout defaults to
//     spec.interval; spec.validation is client or server; spec.suspend;
//   - spec.sourceRef is a typed local reference: the source is in the
//     Kustomization's namespace.
const (
	v1alpha1Version = "v1alpha1"
	// workloadKinds are the kinds v1alpha1's healthChecks may name.
	workloadKinds = "Deployment DaemonSet StatefulSet"
)

// isV1alpha1 says whether apiVersion is the prototype's v1alpha1.
func isV1alpha1(apiVersion string) bool { return apiVersion == legacyGroup+"/"+v1alpha1Version }

// kustomizationV1alpha1 decodes a kustomize.fluxcd.io/v1alpha1
// Kustomization, as kustomization decodes the toolkit's.
func (d *decoder) kustomizationV1alpha1(top *fields) *kustomization {
	d.object = kustomizationKind
	u := &Unit{APIVersion: legacyGroup + "/" + v1alpha1Version}
	top.skip("apiVersion")
	top.skip("kind")
	top.skip("status")
	u.Ref = d.metadata(top)
	k := &kustomization{unit: u}
	spec := top.object("spec")
	top.done()
	if spec == nil {
		if !top.has("spec") {
			top.missing("spec")
		}
		return k
	}

	if ref := spec.object("sourceRef"); ref != nil {
		ref.str("apiGroup")
		kind := ref.oneOf("kind", GitRepositoryKind, BucketKind)
		name := ref.str("name")
		if kind == "" {
			ref.missing("kind")
		}
		if name == "" {
			ref.missing("name")
		}
		ref.done()
		u.Source = SourceRef{Kind: kind, Namespace: u.Ref.Namespace, Name: name}
	} else if !spec.has("sourceRef") {
		spec.missing("sourceRef")
	}

	interval, text, ok := spec.duration("interval", nil)
	if !ok && (spec.get("interval") == nil || spec.get("interval").Value == "") {
		spec.missing("interval")
	}
	timeout, _, hasTimeout := spec.duration("timeout", nil)
	u.Timeout = interval
	if hasTimeout {
		u.Timeout = timeout
	}
	var notes []string
	if ok {
		notes = append(notes, "interval "+text)
	}

	u.Path = "."
	switch p := spec.str("path"); {
	case p == "":
		spec.missing("path")
	case !strings.HasPrefix(p, "./"):
		spec.invalid("path", "%q must start with ./ (the API's pattern)", p)
	default:
		clean, problem := relPath(".", p, "the repository root (like ./apps)")
		if problem != "" {
			spec.invalid("path", "%s", problem)
		}
		u.Path = clean
	}

	if sel := spec.str("prune"); sel != "" {
		parsed, err := labels.Parse(sel)
		switch {
		case err != nil:
			spec.invalid("prune", "%q is not a label selector such as env=dev,app=frontend: %v", sel, err)
		case !strings.Contains(sel, "="):
			spec.invalid("prune", "%q is not a label selector such as env=dev,app=frontend (the API's pattern)", sel)
		default:
			u.Prune, u.PruneSelector = true, sel
			if spec.boolean("generate") {
				u.Labels = equalityLabels(parsed)
			}
		}
	} else {
		spec.boolean("generate") // a generated kustomization.yaml without labels: the build's own
	}
	u.DeletionPolicy = policyOrphan
	if u.Prune {
		u.DeletionPolicy = policyDelete
	}
	u.Suspend = spec.boolean("suspend")
	u.Validation = spec.oneOf("validation", "client", "server")

	for i, n := range spec.list("dependsOn") {
		name, isString := scalarString(n)
		if !isString || name == "" {
			d.add(n.Line, index(spec.at("dependsOn"), i), "must be the name of a Kustomization of the same namespace")
			continue
		}
		u.DependsOn = append(u.DependsOn, Ref{Namespace: u.Ref.Namespace, Name: name})
	}
	for i, n := range spec.list("healthChecks") {
		f := d.mapping(index(spec.at("healthChecks"), i), n)
		if f == nil {
			continue
		}
		hc := HealthCheck{APIVersion: "apps/v1", Kind: f.oneOf("kind", strings.Fields(workloadKinds)...), Name: f.str("name"), Namespace: f.str("namespace")}
		f.done()
		if hc.Kind == "" {
			f.missing("kind")
		}
		if hc.Name == "" {
			f.missing("name")
		}
		u.HealthChecks = append(u.HealthChecks, hc)
	}
	if sa := spec.object("serviceAccount"); sa != nil {
		u.ServiceAccountName, u.ServiceAccountNamespace = sa.str("name"), sa.str("namespace")
		sa.done()
		if u.ServiceAccountName == "" {
			sa.missing("name")
		}
		if u.ServiceAccountNamespace == "" {
			sa.missing("namespace")
		}
	}
	spec.done()

	what := "prune off"
	if u.Prune {
		what = fmt.Sprintf("spec.prune %q prunes only the objects matching it", u.PruneSelector)
	}
	k.notes = append(k.notes, fmt.Sprintf("%s: read as %s/%s, the API of Flux's prototype kustomize-controller (%s)", u.Ref, legacyGroup, v1alpha1Version, what))
	if len(notes) > 0 {
		k.notes = append(k.notes, fmt.Sprintf("%s: %s: Flux's schedule, not used: kustomize-deploy runs once", u.Ref, strings.Join(notes, ", ")))
	}
	return k
}

// equalityLabels are the labels a selector's equality terms require: the
// labels v1alpha1's generated kustomization.yaml sets on every object.
func equalityLabels(sel labels.Selector) map[string]string {
	out := map[string]string{}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if op := r.Operator(); (op == selection.Equals || op == selection.DoubleEquals || op == selection.In) && r.Values().Len() == 1 {
			out[r.Key()] = r.Values().List()[0]
		}
	}
	if len(out) == 0 {
		return nil
	}
	return maps.Clone(out)
}
