package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// schemaDir reads the JSON schemas of a directory (see NewKnown), each
// file once.
type schemaDir struct {
	path  string
	mu    sync.Mutex
	found map[schema.GroupVersionKind]dirSchema
}

// dirSchema is what a lookup found: a schema, none (both nil), or a file
// that does not read.
type dirSchema struct {
	schema *spec.Schema
	err    error
}

func newSchemaDir(path string) *schemaDir {
	return &schemaDir{path: path, found: map[schema.GroupVersionKind]dirSchema{}}
}

// The parts of an apiVersion and kind that may name a file: anything
// else (a slash, "..") is looked up nowhere.
var (
	groupName   = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`)
	versionName = regexp.MustCompile(`^[a-z0-9]+$`)
	kindName    = regexp.MustCompile(`^[A-Za-z0-9]+$`)
)

// SchemaFiles are the files of a schema directory that may hold gvk's
// schema, relative to it, in the order they are tried:
// {group}/{kind}_{version}.json, then {kind}_{version}.json, the kind in
// lower case. None when the apiVersion or kind could not name a file.
func SchemaFiles(gvk schema.GroupVersionKind) []string {
	if !kindName.MatchString(gvk.Kind) || !versionName.MatchString(gvk.Version) || (gvk.Group != "" && !groupName.MatchString(gvk.Group)) {
		return nil
	}
	name := strings.ToLower(gvk.Kind) + "_" + gvk.Version + ".json"
	if gvk.Group == "" {
		return []string{name}
	}
	return []string{gvk.Group + "/" + name, name}
}

// lookup returns gvk's schema from the directory, ready for the
// validator as a CRD's is: nil when no file names it, an error naming
// the file when it does not read.
func (d *schemaDir) lookup(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.found[gvk]; ok {
		return f.schema, f.err
	}
	var f dirSchema
	for _, name := range SchemaFiles(gvk) {
		file := filepath.Join(d.path, filepath.FromSlash(name))
		raw, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			f.schema, err = readSchema(raw)
		}
		if err != nil {
			f = dirSchema{err: fmt.Errorf("its schema %s does not read: %w", file, err)}
		}
		break
	}
	d.found[gvk] = f
	return f.schema, f.err
}

// readSchema reads one kind's JSON schema and adapts it as a CRD's
// openAPIV3Schema is (prepareCRD): the JSON schemas of a CRDs catalog are
// those, converted.
func readSchema(raw []byte) (*spec.Schema, error) {
	s := &spec.Schema{}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, err
	}
	if s.Ref.String() != "" || len(s.Type) == 0 && len(s.Properties) == 0 {
		return nil, errors.New("want a standalone JSON schema of an object (properties, no $ref)")
	}
	prepareCRD(s)
	return s, nil
}
