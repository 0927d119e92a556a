package config

import "regexp"

// varName is the variable name syntax Flux enforces on substitutions
// (fluxcd/pkg/kustomize varsubRegex).
var varName = regexp.MustCompile(`^[_[:alpha:]][_[:alpha:][:digit:]]*$`)

// postBuild reads spec.postBuild: the variables substituted into the built
// objects.
func (d *decoder) postBuild(spec *fields, v version, u *Unit) {
	u.SubstituteStrategy = "WithVariables"
	f := spec.object("postBuild")
	if f == nil {
		return
	}
	var lines map[string]int
	u.Substitute, lines = f.stringMap("substitute")
	for _, k := range sortedKeys(u.Substitute) {
		if !varName.MatchString(k) {
			d.add(lines[k], keyed(f.at("substitute"), k), "not a valid variable name: use letters, digits and '_', not starting with a digit")
		}
	}
	for i, n := range f.list("substituteFrom") {
		ref := d.mapping(index(f.at("substituteFrom"), i), n)
		if ref == nil {
			continue
		}
		s := SubstituteRef{Kind: ref.oneOf("kind", configMapKind, secretKind), Name: ref.str("name")}
		if v >= v1beta2 {
			s.Optional = ref.boolean("optional")
		}
		ref.done()
		if s.Kind == "" && !ref.has("kind") {
			ref.missing("kind")
		}
		if s.Name == "" {
			ref.missing("name")
		} else if len(s.Name) > 253 {
			ref.invalid("name", "is longer than 253 characters")
		}
		u.SubstituteFrom = append(u.SubstituteFrom, s)
	}
	if v == v1 {
		if s := f.oneOf("substituteStrategy", "WithVariables", "Always"); s != "" {
			u.SubstituteStrategy = s
		}
	}
	f.done()
}
