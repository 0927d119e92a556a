package config

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// build reads what shapes the kustomize build: the directory and the
// overlay Flux generates on top of it.
func (d *decoder) build(spec *fields, v version, u *Unit) {
	u.Path = "."
	if p := spec.str("path"); p != "" {
		clean, problem := relPath(".", p, "the repository root (like ./apps)")
		if problem != "" {
			spec.invalid("path", "%s", problem)
		}
		u.Path = clean
	}
	if ns := spec.str("targetNamespace"); ns != "" {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			spec.invalid("targetNamespace", "%q is not a valid namespace: %s", ns, errs[0])
		}
		u.TargetNamespace = ns
	}
	if v == v1 {
		u.NamePrefix = d.affix(spec, "namePrefix")
		u.NameSuffix = d.affix(spec, "nameSuffix")
	}
	d.images(spec, u)
	d.patches(spec, v, u)
	if v >= v1beta2 {
		d.components(spec, u)
		u.Labels, u.Annotations = d.commonMetadata(spec)
	}
	if v == v1 {
		u.IgnoreMissingComponents = spec.boolean("ignoreMissingComponents")
		spec.eachString("buildMetadata", func(i int, s string, line int) {
			switch s {
			case "originAnnotations", "transformerAnnotations":
				u.BuildMetadata = append(u.BuildMetadata, s)
			default:
				d.addf(line, index(spec.at("buildMetadata"), i), "%q is not one of %s", s, orList([]string{"originAnnotations", "transformerAnnotations"}))
			}
		})
		d.ignoreRules(spec, u)
	}
}

// affix reads namePrefix or nameSuffix: at most 200 characters (api/v1).
func (d *decoder) affix(spec *fields, key string) string {
	s := spec.str(key)
	if len(s) > 200 {
		spec.invalid(key, "is longer than 200 characters")
	}
	return s
}

func (d *decoder) images(spec *fields, u *Unit) {
	for i, n := range spec.list("images") {
		f := d.mapping(index(spec.at("images"), i), n)
		if f == nil {
			continue
		}
		img := Image{Name: f.str("name"), NewName: f.str("newName"), NewTag: f.str("newTag"), Digest: f.str("digest")}
		f.done()
		if img.Name == "" {
			f.missing("name")
		}
		u.Images = append(u.Images, img)
	}
}

// components reads spec.components, paths relative to spec.path that must
// stay inside the repository (Flux: "must be local").
func (d *decoder) components(spec *fields, u *Unit) {
	spec.eachString("components", func(i int, c string, line int) {
		at := index(spec.at("components"), i)
		if c == "" {
			d.add(line, at, "must not be empty")
			return
		}
		if _, problem := relPath(u.Path, c, "spec.path (like ../ingress)"); problem != "" {
			d.add(line, at, problem)
		}
		u.Components = append(u.Components, c)
	})
}

// commonMetadata reads the labels and annotations set on every object,
// checking their syntax as the API server would on those objects.
func (d *decoder) commonMetadata(spec *fields) (labels, annotations map[string]string) {
	f := spec.object("commonMetadata")
	if f == nil {
		return nil, nil
	}
	labels, labelLines := f.stringMap("labels")
	annotations, annotationLines := f.stringMap("annotations")
	f.done()
	for _, k := range sortedKeys(labels) {
		errs := validation.IsQualifiedName(k)
		if len(errs) == 0 {
			errs = validation.IsValidLabelValue(labels[k])
		}
		if len(errs) > 0 {
			d.add(labelLines[k], keyed(f.at("labels"), k), "not a valid label: "+errs[0])
		}
	}
	for _, k := range sortedKeys(annotations) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			d.add(annotationLines[k], keyed(f.at("annotations"), k), "not a valid annotation key: "+errs[0])
		}
	}
	return labels, annotations
}

// ignoreRules reads v1's spec.ignore. The engine's fluxcd/pkg/ssa takes
// the same rules (ApplyOptions.DriftIgnoreRules), as Flux passes them.
func (d *decoder) ignoreRules(spec *fields, u *Unit) {
	for i, n := range spec.list("ignore") {
		f := d.mapping(index(spec.at("ignore"), i), n)
		if f == nil {
			continue
		}
		var rule IgnoreRule
		f.eachString("paths", func(j int, p string, line int) {
			// An RFC 6901 pointer is "" (the whole object) or starts with "/".
			if p != "" && !strings.HasPrefix(p, "/") {
				d.addf(line, index(f.at("paths"), j), "%q is not a JSON pointer such as /spec/replicas", p)
			}
			rule.Paths = append(rule.Paths, p)
		})
		rule.Target = d.selector(f, "target")
		f.done()
		if len(rule.Paths) == 0 && !f.has("paths") {
			f.missing("paths")
		}
		u.Ignore = append(u.Ignore, rule)
	}
}
