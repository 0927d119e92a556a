package object

import (
	"runtime"
	"strings"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// ToYAML writes objs as a YAML stream, each document ended by "---", byte
// for byte as sigs.k8s.io/yaml (and so kubectl and Flux's
// utils.ObjectsToYAML) writes them: keys sorted, the same scalars. It
// emits the objects' maps directly, on every CPU, instead of going
// through JSON and parsing that back, which costs three times as much on
// a chart of a few hundred objects. A string that is not valid UTF-8,
// which JSON would rewrite, takes the JSON way.
func ToYAML(objs []*unstructured.Unstructured) (string, error) {
	docs := make([][]byte, len(objs))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, u := range objs {
		g.Go(func() error {
			var err error
			if plain(u.Object) {
				var ok bool
				if docs[i], ok = emitYAML(u.Object); !ok {
					docs[i], err = yamlv2.Marshal(u.Object)
				}
			} else {
				docs[i], err = yaml.Marshal(u)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return "", err
	}
	var b strings.Builder
	n := 0
	for _, d := range docs {
		n += len(d) + 4
	}
	b.Grow(n)
	for _, d := range docs {
		b.Write(d)
		b.WriteString("---\n")
	}
	return b.String(), nil
}

// plain reports whether v holds only what JSON and YAML write alike:
// maps with string keys, lists, valid UTF-8 strings, booleans, int64,
// float64 and nulls.
func plain(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if !utf8.ValidString(k) || !plain(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range v {
			if !plain(e) {
				return false
			}
		}
		return true
	case string:
		return utf8.ValidString(v)
	case nil, bool, int64, float64:
		return true
	default:
		return false
	}
}
