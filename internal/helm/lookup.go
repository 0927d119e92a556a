package helm

import (
	"context"
	"encoding/base64"
	"sync"
	texttemplate "text/template"
)

// ObjectLookup reads one object of the cluster (name set) or a list
// (name empty: every namespace when namespace is empty), as the
// templates' lookup function gives it: its content, or an empty map when
// it does not exist. It only reads.
type ObjectLookup func(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error)

// templateLookup is the templates' lookup through read, and the values of
// the Secrets it returned (data decoded, stringData): a template may put
// them anywhere in the rendered objects, so they are masked and the
// fields holding them recorded, as values from Secrets are. Nil read is
// no cluster: Helm's own lookup then returns nothing, as `helm template`
// does.
type templateLookup struct {
	read  ObjectLookup
	mu    sync.Mutex
	seen  []string
	calls int
}

func (l *templateLookup) funcs(ctx context.Context) texttemplate.FuncMap {
	if l == nil || l.read == nil {
		return nil
	}
	return texttemplate.FuncMap{"lookup": func(apiVersion, kind, namespace, name string) (map[string]any, error) {
		l.mu.Lock()
		l.calls++
		l.mu.Unlock()
		out, err := l.read(ctx, apiVersion, kind, namespace, name)
		if err != nil {
			return map[string]any{}, err
		}
		l.secrets(out)
		return out, nil
	}}
}

// secrets records the values of the Secrets in obj, a Secret or a list.
func (l *templateLookup) secrets(obj map[string]any) {
	items, _ := obj["items"].([]any)
	if kind, _ := obj["kind"].(string); kind == "Secret" {
		items = append(items, obj)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		if kind, _ := m["kind"].(string); kind != "Secret" && obj["kind"] != "SecretList" {
			continue
		}
		data, _ := m["data"].(map[string]any)
		for _, v := range data {
			if s, ok := v.(string); ok {
				if raw, err := base64.StdEncoding.DecodeString(s); err == nil {
					l.seen = append(l.seen, string(raw))
				}
			}
		}
		sd, _ := m["stringData"].(map[string]any)
		for _, v := range sd {
			if s, ok := v.(string); ok {
				l.seen = append(l.seen, s)
			}
		}
	}
}

// Secrets are the values of the Secrets lookup returned.
func (l *templateLookup) Secrets() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// Used reports whether a template read the cluster.
func (l *templateLookup) Used() bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls > 0
}
