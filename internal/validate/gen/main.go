// Command gen writes the schema bundle that internal/validate embeds: the
// OpenAPI v2 definitions of the Kubernetes version pinned by
// hack/tools/kubernetes, with everything validation does not read removed
// (descriptions, patch and list-merge hints), gzipped.
//
// It runs from internal/validate via `go generate` and reads the spec that
// the k8s.io/kubernetes module ships under api/openapi-spec/, so it needs the
// module in the module cache (or the Go module proxy), nothing else.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// keep lists the schema keys validation reads; everything else is dropped.
var keep = map[string]bool{
	"type":                                 true,
	"format":                               true,
	"$ref":                                 true,
	"properties":                           true,
	"items":                                true,
	"additionalProperties":                 true,
	"required":                             true,
	"enum":                                 true,
	"allOf":                                true,
	"anyOf":                                true,
	"oneOf":                                true,
	"minimum":                              true,
	"maximum":                              true,
	"pattern":                              true,
	"minLength":                            true,
	"maxLength":                            true,
	"minItems":                             true,
	"maxItems":                             true,
	"x-kubernetes-group-version-kind":      true,
	"x-kubernetes-int-or-string":           true,
	"x-kubernetes-preserve-unknown-fields": true,
	"x-kubernetes-embedded-resource":       true,
}

// bundle is the file's shape; internal/validate reads the same fields.
type bundle struct {
	KubernetesVersion string                     `json:"kubernetesVersion"`
	Definitions       map[string]json.RawMessage `json:"definitions"`
}

func main() {
	toolsDir := flag.String("tools", "../../hack/tools/kubernetes", "module that pins k8s.io/kubernetes")
	spec := flag.String("spec", "", "swagger.json to read (default: the pinned k8s.io/kubernetes module's api/openapi-spec/swagger.json)")
	version := flag.String("version", "", "Kubernetes version the spec is from (default: the pinned module's)")
	outDir := flag.String("out", "schemas", "directory to write k8s-<version>.json.gz into")
	flag.Parse()

	if err := run(*toolsDir, *spec, *version, *outDir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(toolsDir, specPath, version, outDir string) error {
	if specPath == "" || version == "" {
		dir, v, err := pinnedModule(toolsDir)
		if err != nil {
			return err
		}
		if specPath == "" {
			specPath = filepath.Join(dir, "api", "openapi-spec", "swagger.json")
		}
		if version == "" {
			version = v
		}
	}
	raw, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	var swagger struct {
		Definitions map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &swagger); err != nil {
		return fmt.Errorf("%s: %w", specPath, err)
	}
	if len(swagger.Definitions) == 0 {
		return fmt.Errorf("%s: no definitions", specPath)
	}

	out := bundle{KubernetesVersion: version, Definitions: map[string]json.RawMessage{}}
	for name, def := range swagger.Definitions {
		b, err := json.Marshal(trim(def))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		out.Definitions[name] = b
	}
	// encoding/json sorts map keys, and the gzip header carries no name or
	// time, so the same spec always produces the same bytes.
	js, err := json.Marshal(out)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(js); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(outDir, "k8s-"+version+".json.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d definitions, %d bytes (%d uncompressed)\n", path, len(out.Definitions), buf.Len(), len(js))
	return nil
}

// trim returns schema s with only the keys in keep, recursively.
// "properties" holds field names, not schema keys, so its keys all stay.
func trim(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := map[string]any{}
	for k, v := range m {
		if !keep[k] {
			continue
		}
		switch k {
		case "properties":
			props := map[string]any{}
			for name, p := range v.(map[string]any) {
				props[name] = trim(p)
			}
			out[k] = props
		case "items", "additionalProperties":
			out[k] = trim(v)
		case "allOf", "anyOf", "oneOf":
			var list []any
			for _, x := range v.([]any) {
				list = append(list, trim(x))
			}
			out[k] = list
		default:
			out[k] = v
		}
	}
	return out
}

// pinnedModule returns the directory and version of k8s.io/kubernetes as
// the tools module at dir requires it.
func pinnedModule(dir string) (string, string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "k8s.io/kubernetes")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("locating k8s.io/kubernetes from %s: %w", dir, err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "" {
		return "", "", fmt.Errorf("locating k8s.io/kubernetes from %s: module not downloaded (run go mod download there)", dir)
	}
	return f[0], f[1], nil
}
