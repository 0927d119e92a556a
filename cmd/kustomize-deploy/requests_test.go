package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

func TestCountRequestsWritesTheCountAtExit(t *testing.T) {
	c := newCLI(t)
	path := filepath.Join(t.TempDir(), "requests.json")
	c.env[countRequestsEnv] = path
	if o := c.run("status"); o.code != exitOK {
		t.Fatalf("status exited %d:\n%s", o.code, o.stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no request count written: %v", err)
	}
	var got kube.RequestCount
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("request count %q: %v", data, err)
	}
	if got.Total == 0 || got.ByMethod["GET"] == 0 {
		t.Errorf("request count = %+v, want at least one GET", got)
	}
}
