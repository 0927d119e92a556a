package config

import (
	"fmt"
	"path"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	yaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/tags"
)

// kustomization is a decoded Flux Kustomization, before the set it belongs
// to decides its unit name and whether it runs.
type kustomization struct {
	unit  *Unit
	notes []string
}

// Flux's deletion policies (api/v1 DeletionPolicy*).
const (
	policyMirrorPrune        = "MirrorPrune"
	policyDelete             = "Delete"
	policyWaitForTermination = "WaitForTermination"
	policyOrphan             = "Orphan"
)

// sourceKinds are the sourceRef kinds each version's CRD allows.
var sourceKinds = map[version][]string{
	v1beta1: {"GitRepository", "Bucket"},
	v1beta2: {"OCIRepository", "GitRepository", "Bucket"},
	v1:      {"OCIRepository", "GitRepository", "Bucket", "ExternalArtifact"},
}

// HelmControllerAnnotation on a Flux Kustomization, "true", says the
// cluster's helm-controller deploys the unit's HelmReleases: they and
// their sources are applied as they are, not rendered here, whatever the
// run's --helm-controller says for the other units.
const HelmControllerAnnotation = "kustomize-deploy.dev/helm-controller"

// kustomization decodes a Flux Kustomization of version v from its
// top-level mapping. Problems are recorded in d; what could be read is
// returned all the same, so one pass finds them all.
func (d *decoder) kustomization(top *fields, v version) *kustomization {
	d.version = v
	d.object = kustomizationKind
	u := &Unit{APIVersion: v.apiVersion()}
	top.skip("apiVersion")
	top.skip("kind")
	top.skip("status") // written by Flux, not by people
	u.Ref = d.metadata(top)
	u.Meta = Meta{Labels: d.labels, Annotations: d.annotations}

	switch v := d.annotations[HelmControllerAnnotation]; v {
	case "":
	case "true", "false":
		u.HelmController = v == "true"
	default:
		d.add(d.annotationLines[HelmControllerAnnotation], "metadata.annotations["+HelmControllerAnnotation+"]", fmt.Sprintf("want \"true\" or \"false\", got %q", v))
	}

	if v, ok := d.annotations[tags.Annotation]; ok {
		parsed, err := tags.Parse(v)
		if err != nil {
			d.add(d.annotationLines[tags.Annotation], "metadata.annotations["+tags.Annotation+"]", err.Error())
		}
		u.Tags = parsed
	}

	k := &kustomization{unit: u}
	spec := top.object("spec")
	top.done()
	if spec == nil {
		if !top.has("spec") {
			top.missing("spec")
		}
		return k
	}

	d.scheduling(spec, v, k)
	d.behaviour(spec, v, u)
	d.dependencies(spec, v, u)
	d.build(spec, v, u)
	d.postBuild(spec, v, u)
	d.access(spec, v, u)
	if v == v1 {
		d.healthCheckExprs(spec, u)
	}
	if v == v1beta2 && spec.oneOf("validation", "none", "client", "server") != "" {
		k.notes = append(k.notes, u.Ref.String()+": spec.validation is not used in "+v.apiVersion()+", by Flux either")
	}
	if v == v1beta1 {
		u.Validation = spec.oneOf("validation", "none", "client", "server")
	}
	spec.done()
	return k
}

// metadata reads an object's name and namespace ("default" when absent),
// and names the object in d's problems from then on. Its other metadata
// is the cluster's business and is let be.
func (d *decoder) metadata(top *fields) Ref {
	meta := top.object("metadata")
	if meta == nil {
		if !top.has("metadata") {
			top.missing("metadata.name")
		}
		return Ref{Namespace: "default"}
	}
	ref := Ref{Name: meta.str("name"), Namespace: meta.str("namespace")}
	d.annotations, d.annotationLines = nil, nil
	if ann := resolve(meta.vals["annotations"]); ann != nil && ann.Kind == yaml.MappingNode {
		d.annotations, d.annotationLines = map[string]string{}, map[string]int{}
		for i := 0; i+1 < len(ann.Content); i += 2 {
			if s, ok := scalarString(resolve(ann.Content[i+1])); ok {
				d.annotations[ann.Content[i].Value] = s
				d.annotationLines[ann.Content[i].Value] = ann.Content[i].Line
			}
		}
	}
	d.labels = nil
	if labels := resolve(meta.vals["labels"]); labels != nil && labels.Kind == yaml.MappingNode {
		d.labels = map[string]string{}
		for i := 0; i+1 < len(labels.Content); i += 2 {
			if s, ok := scalarString(resolve(labels.Content[i+1])); ok {
				d.labels[labels.Content[i].Value] = s
			}
		}
	}
	for _, k := range meta.keys {
		meta.skip(k)
	}
	if ref.Name == "" {
		meta.missing("name")
	} else if errs := validation.IsDNS1123Subdomain(ref.Name); len(errs) > 0 {
		meta.invalid("name", "%q is not a valid object name: %s", ref.Name, errs[0])
	}
	if ref.Namespace == "" {
		ref.Namespace = "default"
	} else if errs := validation.IsDNS1123Label(ref.Namespace); len(errs) > 0 {
		meta.invalid("namespace", "%q is not a valid namespace: %s", ref.Namespace, errs[0])
	}
	if ref.Name != "" {
		d.object += " " + ref.String()
	}
	return ref
}

// scheduling reads spec.sourceRef, which decides what the unit builds
// (see units' source resolution), and the fields that drive Flux's own
// loop: checked, then reported in a note, since kustomize-deploy runs
// once. Timeout is derived from them as Flux's GetTimeout does.
func (d *decoder) scheduling(spec *fields, v version, k *kustomization) {
	u := k.unit
	var sched []string
	if ref := spec.object("sourceRef"); ref != nil {
		kind := ref.oneOf("kind", sourceKinds[v]...)
		name := ref.str("name")
		ns := ref.str("namespace")
		ref.str("apiVersion")
		if kind == "" {
			ref.missing("kind")
		}
		if name == "" {
			ref.missing("name")
		}
		ref.done()
		if ns == "" {
			ns = u.Ref.Namespace // Flux: the Kustomization's namespace
		}
		u.Source = SourceRef{Kind: kind, Namespace: ns, Name: name}
	} else if !spec.has("sourceRef") {
		spec.missing("sourceRef")
	}

	pattern := v.durationPattern()
	interval, text, ok := spec.duration("interval", pattern)
	if ok {
		sched = append(sched, "interval "+text)
	} else if n := spec.get("interval"); n == nil || n.Value == "" {
		spec.missing("interval")
	}
	if _, text, ok := spec.duration("retryInterval", pattern); ok {
		sched = append(sched, "retryInterval "+text)
	}
	timeout, _, hasTimeout := spec.duration("timeout", pattern)
	u.Timeout = fluxTimeout(v, interval, timeout, hasTimeout)

	if len(sched) > 0 {
		k.notes = append(k.notes, fmt.Sprintf("%s: %s: Flux's schedule, not used: kustomize-deploy runs once",
			u.Ref, strings.Join(sched, ", ")))
	}
}

// fluxTimeout is Flux's Kustomization.GetTimeout for version v.
func fluxTimeout(v version, interval, timeout time.Duration, hasTimeout bool) time.Duration {
	floor, t := 30*time.Second, interval-30*time.Second
	if v == v1beta1 {
		floor, t = time.Minute, interval
	}
	if hasTimeout {
		t = timeout
	}
	return max(t, floor)
}

// behaviour reads how the unit is applied, pruned and waited for.
func (d *decoder) behaviour(spec *fields, v version, u *Unit) {
	if !spec.has("prune") {
		spec.missing("prune")
	}
	u.Prune = spec.boolean("prune")
	u.Force = spec.boolean("force")
	u.Suspend = spec.boolean("suspend")
	if v >= v1beta2 {
		u.Wait = spec.boolean("wait")
	}
	u.DeletionPolicy = policyMirrorPrune
	if v == v1 {
		if p := spec.oneOf("deletionPolicy", policyMirrorPrune, policyDelete, policyWaitForTermination, policyOrphan); p != "" {
			u.DeletionPolicy = p
		}
	}
	if u.DeletionPolicy == policyMirrorPrune {
		u.DeletionPolicy = policyOrphan
		if u.Prune {
			u.DeletionPolicy = policyDelete
		}
	}
	for i, n := range spec.list("healthChecks") {
		at := index(spec.at("healthChecks"), i)
		f := d.mapping(at, n)
		if f == nil {
			continue
		}
		hc := HealthCheck{APIVersion: f.str("apiVersion"), Kind: f.str("kind"), Name: f.str("name"), Namespace: f.str("namespace")}
		f.done()
		if hc.APIVersion == "" {
			// Flux's inventory.ReferenceToObjMetadataSet, "for backwards
			// compatibility with Kustomization v1beta1".
			hc.APIVersion = "apps/v1"
		} else if !validAPIVersion(hc.APIVersion) {
			f.invalid("apiVersion", "%q is not an API version such as apps/v1", hc.APIVersion)
		}
		if hc.Kind == "" {
			f.missing("kind")
		}
		if hc.Name == "" {
			f.missing("name")
		}
		u.HealthChecks = append(u.HealthChecks, hc)
	}
}

// healthCheckExprs reads v1's spec.healthCheckExprs: CEL expressions
// judging the health of a kind (see health.Expressions). The expressions
// are parsed when the unit is mapped onto the engine.
func (d *decoder) healthCheckExprs(spec *fields, u *Unit) {
	for i, n := range spec.list("healthCheckExprs") {
		f := d.mapping(index(spec.at("healthCheckExprs"), i), n)
		if f == nil {
			continue
		}
		e := HealthCheckExpr{APIVersion: f.str("apiVersion"), Kind: f.str("kind"),
			Current: f.str("current"), InProgress: f.str("inProgress"), Failed: f.str("failed")}
		f.done()
		switch {
		case e.APIVersion == "":
			f.missing("apiVersion")
		case !validAPIVersion(e.APIVersion):
			f.invalid("apiVersion", "%q is not an API version such as apps/v1", e.APIVersion)
		}
		if e.Kind == "" {
			f.missing("kind")
		}
		if e.Current == "" {
			f.missing("current")
		}
		u.HealthCheckExprs = append(u.HealthCheckExprs, e)
	}
}

// validAPIVersion accepts "v1" and "group/version".
func validAPIVersion(s string) bool {
	group, ver, ok := strings.Cut(s, "/")
	if !ok {
		group, ver = "", s
	}
	if ver == "" || strings.Contains(ver, "/") || len(validation.IsDNS1123Label(ver)) > 0 {
		return false
	}
	return group == "" || len(validation.IsDNS1123Subdomain(group)) == 0
}

// dependencies reads spec.dependsOn, defaulting namespaces to the unit's.
func (d *decoder) dependencies(spec *fields, v version, u *Unit) {
	for i, n := range spec.list("dependsOn") {
		f := d.mapping(index(spec.at("dependsOn"), i), n)
		if f == nil {
			continue
		}
		ref := Ref{Name: f.str("name"), Namespace: f.str("namespace")}
		var expr string
		if v == v1 {
			expr = f.str("readyExpr")
		}
		f.done()
		if ref.Name == "" {
			f.missing("name")
		}
		if ref.Namespace == "" {
			ref.Namespace = u.Ref.Namespace
		}
		u.DependsOn = append(u.DependsOn, ref)
		if expr != "" {
			u.ReadyExprs = append(u.ReadyExprs, ReadyExpr{Dependency: ref, Expr: expr})
		}
	}
}

// access reads who applies the unit, where, and with which keys.
func (d *decoder) access(spec *fields, v version, u *Unit) {
	u.ServiceAccountName = spec.str("serviceAccountName")
	if f := spec.object("decryption"); f != nil {
		switch p := f.str("provider"); p {
		case "sops":
		case "":
			f.missing("provider")
		default:
			f.invalid("provider", "%q is not supported: the only provider is \"sops\"", p)
		}
		u.Decryption = &Decryption{SecretName: d.secretName(f, "secretRef")}
		if v == v1 {
			f.unsupported("serviceAccountName", "cloud workload identity is not available to kustomize-deploy; AWS KMS keys are used with the ambient AWS credentials, other keys come from spec.decryption.secretRef or kustomize-deploy's own options")
		}
		f.done()
	}
	if f := spec.object("kubeConfig"); f != nil {
		u.KubeConfig = &KubeConfig{}
		if v == v1beta1 {
			u.KubeConfig.SecretName = d.secretName(f, "secretRef")
			if !f.has("secretRef") {
				f.missing("secretRef")
			}
		} else {
			f.unsupported("configMapRef", "secret-less access to remote clusters (workload identity) is not available to kustomize-deploy; use spec.kubeConfig.secretRef")
			if s := f.object("secretRef"); s != nil {
				u.KubeConfig.SecretName, u.KubeConfig.Key = s.str("name"), s.str("key")
				if u.KubeConfig.SecretName == "" {
					s.missing("name")
				}
				s.done()
			} else if !f.has("configMapRef") && !f.has("secretRef") {
				f.missing("secretRef")
			}
		}
		f.done()
	}
}

// secretName reads a {name} reference at key of f; "" when absent.
func (d *decoder) secretName(f *fields, key string) string {
	ref := f.object(key)
	if ref == nil {
		return ""
	}
	name := ref.str("name")
	if name == "" {
		ref.missing("name")
	}
	ref.done()
	return name
}

// relPath joins p to base (relative to the root, slash-separated) and
// cleans it. p must not be absolute, and the result must not leave the
// root; otherwise problem says why, relativeTo naming what p should be
// relative to.
func relPath(base, p, relativeTo string) (clean, problem string) {
	if path.IsAbs(p) || strings.HasPrefix(p, `\`) || len(p) > 1 && p[1] == ':' {
		return "", "must be relative to " + relativeTo + ", not absolute"
	}
	clean = path.Clean(path.Join(base, p))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Sprintf("%q leaves the repository root", p)
	}
	return clean, ""
}
