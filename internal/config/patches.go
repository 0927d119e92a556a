package config

import (
	"bytes"

	"k8s.io/apimachinery/pkg/labels"
	yaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// jsonPatchOps are the operations of RFC 6902 (fluxcd/pkg/apis/kustomize
// JSON6902.Op).
var jsonPatchOps = []string{"test", "remove", "add", "replace", "move", "copy"}

// patches reads spec.patches and, in v1beta1 and v1beta2, the older
// patchesStrategicMerge and patchesJson6902, all as kustomize patches.
func (d *decoder) patches(spec *fields, v version, u *Unit) {
	for i, n := range spec.list("patches") {
		f := d.mapping(index(spec.at("patches"), i), n)
		if f == nil {
			continue
		}
		p := Patch{Patch: f.str("patch"), Target: d.selector(f, "target")}
		f.done()
		if p.Patch == "" {
			f.missing("patch")
		}
		u.Patches = append(u.Patches, p)
	}
	if v == v1 {
		return
	}
	for i, n := range spec.list("patchesStrategicMerge") {
		at := index(spec.at("patchesStrategicMerge"), i)
		if n.Kind != yaml.MappingNode {
			d.add(n.Line, at, "must be an object (a strategic merge patch)")
			continue
		}
		// Without a target kustomize takes it from the patch itself, as
		// it does for patchesStrategicMerge.
		if text, ok := d.render(n, at); ok {
			u.Patches = append(u.Patches, Patch{Patch: text})
		}
	}
	for i, n := range spec.list("patchesJson6902") {
		at := index(spec.at("patchesJson6902"), i)
		f := d.mapping(at, n)
		if f == nil {
			continue
		}
		ops := d.jsonPatchOps(f)
		target := d.selector(f, "target")
		f.done()
		if target == nil && !f.has("target") {
			f.missing("target")
		}
		if ops == nil {
			continue
		}
		if text, ok := d.render(ops, f.at("patch")); ok {
			u.Patches = append(u.Patches, Patch{Patch: text, Target: target})
		}
	}
}

// jsonPatchOps reads a patchesJson6902 entry's operations, checked, as a
// YAML list ready to render; nil when absent or wrong.
func (d *decoder) jsonPatchOps(f *fields) *yaml.Node {
	items := f.list("patch")
	if items == nil {
		if !f.has("patch") {
			f.missing("patch")
		}
		return nil
	}
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	ok := true
	for j, n := range items {
		op := d.mapping(index(f.at("patch"), j), n)
		if op == nil {
			ok = false
			continue
		}
		out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, key := range []string{"op", "path", "from"} {
			var s string
			if key == "op" {
				s = op.oneOf(key, jsonPatchOps...)
			} else {
				s = op.str(key)
			}
			if s == "" && key != "from" {
				op.missing(key)
				ok = false
			}
			if s != "" {
				out.Content = append(out.Content, str(key), str(s))
			}
		}
		// A null value is a value ("add" it); only an absent one is not.
		op.skip("value")
		if val, set := op.vals["value"]; set {
			out.Content = append(out.Content, str("value"), val)
		}
		op.done()
		list.Content = append(list.Content, out)
	}
	if !ok {
		return nil
	}
	return list
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// render writes n as YAML text. Aliases are refused: their anchors may lie
// outside n, and the text would not stand on its own.
func (d *decoder) render(n *yaml.Node, at string) (string, bool) {
	if line := aliasIn(n); line > 0 {
		d.add(line, at, "YAML aliases are not supported in patches")
		return "", false
	}
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	if err := e.Encode(n); err != nil {
		d.add(n.Line, at, "cannot be written as YAML: "+err.Error())
		return "", false
	}
	if err := e.Close(); err != nil {
		d.add(n.Line, at, "cannot be written as YAML: "+err.Error())
		return "", false
	}
	return b.String(), true
}

// aliasIn returns the line of the first alias in n, 0 when none.
func aliasIn(n *yaml.Node) int {
	if n.Kind == yaml.AliasNode {
		return max(n.Line, 1)
	}
	for _, c := range n.Content {
		if line := aliasIn(c); line > 0 {
			return line
		}
	}
	return 0
}

// selector reads a kustomize selector at key of f; nil when absent.
func (d *decoder) selector(f *fields, key string) *Selector {
	t := f.object(key)
	if t == nil {
		return nil
	}
	s := &Selector{
		Group: t.str("group"), Version: t.str("version"), Kind: t.str("kind"),
		Name: t.str("name"), Namespace: t.str("namespace"),
		LabelSelector: t.str("labelSelector"), AnnotationSelector: t.str("annotationSelector"),
	}
	t.done()
	for _, key := range []string{"labelSelector", "annotationSelector"} {
		sel := s.LabelSelector
		if key == "annotationSelector" {
			sel = s.AnnotationSelector
		}
		if _, err := labels.Parse(sel); sel != "" && err != nil {
			t.invalid(key, "%q is not a label selector: %v", sel, err)
		}
	}
	return s
}
