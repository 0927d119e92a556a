package build

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// FuzzSubstitute substitutes one variable of any name and value into any
// manifests. Substitute must not panic, and: an invalid name or a
// substitution that fails leaves no object half-done (every error names
// an object and its file); an object that opts out, or whose YAML holds no
// '$', comes out as it went in; every object that comes out is still an
// object, and keeps its source file even when its name changed.
func FuzzSubstitute(f *testing.F) {
	for _, file := range []string{
		filepath.Join("..", "..", "cmd", "kustomize-deploy", "testdata", "flux-repo", "apps", "common", "deployment.yaml"),
		filepath.Join("..", "..", "examples", "infra", "settings.yaml"),
		filepath.Join("testdata", "plain-dir.golden"),
		filepath.Join("testdata", "overlay.golden"),
	} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data), "REGION", "eu-west-1", false)
		f.Add(string(data), "CLUSTER_NAME", "production\n", true)
	}
	f.Add(configMap("", "  env: ${ENV}\n  bare: $ENV\n  literal: $${ENV}\n  region: ${REGION:=eu-west-1}\n"), "ENV", "prod", false)
	f.Add(configMap("", "  ports: \"${PORTS}\"\n"), "PORTS", "[80, 443]", false)
	f.Add(configMap("", "  x: ${X}\n"), "X", "a: b", false)
	f.Add(configMap("", "  x: ${X:-${Y}}\n  y: ${X/a/b}\n"), "Y", "'\"", true)
	f.Add(strings.Replace(configMap("", ""), "name: app", "name: app-${SUFFIX}", 1)+"---\n"+
		strings.Replace(configMap("", ""), "name: app", "name: app-${SUFFIX}x", 1), "SUFFIX", "x", false)
	f.Add(configMap("  annotations:\n    kustomize-deploy.dev/substitute: disabled\n", "  env: ${ENV}\n"), "ENV", "prod", true)
	f.Add(configMap("", "  env: ${ENV}\n"), "not-a-name", "prod", false)
	f.Add(configMap("", "  n: \"0b101\"\n  o: \"0o17\"\n  big: 12345678901234567890\n  f: 1.50\n"), "X", "1", false)

	f.Fuzz(func(t *testing.T, manifests, name, value string, always bool) {
		docs, err := decodeDocuments([]byte(manifests))
		if err != nil || len(docs) == 0 || len(docs) > 4 {
			return
		}
		var objs []*unstructured.Unstructured
		sources := map[object.ID]string{}
		for i, d := range docs {
			if checkObject(d) != nil {
				return
			}
			u := &unstructured.Unstructured{Object: d}
			if _, dup := sources[object.IDOf(u)]; dup {
				return
			}
			sources[object.IDOf(u)] = fmt.Sprintf("doc%d.yaml", i+1)
			objs = append(objs, u)
		}
		vars := map[string]string{}
		if name != "" {
			vars[name] = value
		}
		before := make([]string, len(objs))
		ids := make([]object.ID, len(objs))
		for i, u := range objs {
			before[i], ids[i] = canonicalJSON(t, u), object.IDOf(u)
		}
		unchanged := func(i int) bool { return canonicalJSON(t, objs[i]) == before[i] }

		secret := map[object.ID]*object.SecretFields{}
		err = Substitute(objs, Variables{Values: vars, Secret: []string{name}, Always: always}, sources, secret)

		if name != "" && !varName.MatchString(name) || len(vars) == 0 && !always {
			if (err != nil) != (len(vars) > 0) {
				t.Fatalf("variable %q: error %v", name, err)
			}
			for i := range objs {
				if !unchanged(i) {
					t.Fatalf("%s changed although nothing was substituted", ids[i])
				}
			}
			return
		}
		// Each failure names its object and file: the object as it was,
		// since a failed object is left as it was.
		failed := map[object.ID]bool{}
		if err != nil {
			joined, ok := err.(interface{ Unwrap() []error })
			if !ok {
				t.Fatalf("not one error per object: %v", err)
			}
			for _, e := range joined.Unwrap() {
				i := slices.IndexFunc(ids, func(id object.ID) bool {
					return strings.HasPrefix(e.Error(), id.String()+" in "+fuzzSource(ids, id)+": ")
				})
				if i < 0 {
					t.Fatalf("error names no object and file: %v", e)
				}
				failed[ids[i]] = true
			}
		}
		for i, u := range objs {
			if substitutionDisabledIn(before[i]) || failed[ids[i]] || !hasDollar(t, before[i]) {
				if !unchanged(i) {
					t.Errorf("%s changed: %s\n→ %s", ids[i], before[i], canonicalJSON(t, u))
				}
			}
			if checkObject(u.Object) != nil {
				t.Errorf("%s is no object after substitution: %v", ids[i], u.Object)
			}
		}
		if err != nil {
			return
		}
		now := map[object.ID]bool{}
		for _, u := range objs {
			now[object.IDOf(u)] = true
		}
		if len(now) < len(objs) {
			return // two objects now share an ID; the build reports that
		}
		for i, u := range objs {
			if got, want := sources[object.IDOf(u)], fuzzSource(ids, ids[i]); got != want {
				t.Errorf("%s (was %s) has source %q, want %q", object.IDOf(u), ids[i], got, want)
			}
		}
		// The value is secret: wherever it landed, a field or key
		// recorded for the object covers it. Only a value long enough
		// and found nowhere in the input can be told apart.
		plain := strings.ReplaceAll(value, "\n", "")
		if len(plain) < 6 || strings.Contains(manifests, plain) {
			return
		}
		for _, u := range objs {
			for _, p := range uncovered(u.Object, plain, secret[object.IDOf(u)]) {
				t.Errorf("%s: %s holds the secret value, and is not recorded (recorded: %v)", object.IDOf(u), p, secret[object.IDOf(u)])
			}
		}
	})
}

// uncovered lists the leaves and keys of obj that hold value and that
// fields records neither as a field (or below one) nor as a key.
func uncovered(obj map[string]any, value string, fields *object.SecretFields) []object.FieldPath {
	if fields == nil {
		fields = &object.SecretFields{}
	}
	under := func(p object.FieldPath) bool {
		return slices.ContainsFunc(fields.Fields, func(f object.FieldPath) bool {
			return len(f) <= len(p) && slices.Equal(f, p[:len(f)])
		})
	}
	var out []object.FieldPath
	var walk func(path object.FieldPath, v any)
	walk = func(path object.FieldPath, v any) {
		if under(path) {
			return
		}
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				p := path.Child(k)
				if strings.Contains(k, value) && !slices.ContainsFunc(fields.Keys, func(f object.FieldPath) bool { return slices.Equal(f, p) }) {
					out = append(out, p)
				}
				walk(p, e)
			}
		case []any:
			for i, e := range t {
				walk(path.Child(fmt.Sprint(i)), e)
			}
		default:
			if strings.Contains(fmt.Sprint(t), value) {
				out = append(out, path)
			}
		}
	}
	walk(nil, obj)
	return out
}

// canonicalJSON is u as JSON, so objects compare by value whatever the
// numeric types their decoder chose.
func canonicalJSON(t *testing.T, u *unstructured.Unstructured) string {
	data, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	data, err = json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// hasDollar reports whether the YAML that Substitute sees for the object
// (canonical JSON) contains a '$'.
func hasDollar(t *testing.T, canonical string) bool {
	var m map[string]any
	if err := json.Unmarshal([]byte(canonical), &m); err != nil {
		t.Fatal(err)
	}
	text, err := kyaml.Marshal(m)
	if err != nil {
		return true // Substitute fails on it too
	}
	return strings.Contains(string(text), "$")
}

func substitutionDisabledIn(canonical string) bool {
	var m map[string]any
	_ = json.Unmarshal([]byte(canonical), &m)
	return substitutionDisabled(&unstructured.Unstructured{Object: m})
}

// fuzzSource is the source file the fuzz target gives id.
func fuzzSource(ids []object.ID, id object.ID) string {
	return fmt.Sprintf("doc%d.yaml", slices.Index(ids, id)+1)
}
