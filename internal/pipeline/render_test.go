package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"

	"github.com/kustomize-deploy/kustomize-deploy/internal/diff"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// Render records where values came from a secret: the fields SOPS
// decrypted, in any kind, and the fields a secret variable was
// substituted into (even a 2-character value); what it prints masks
// those and Secrets, and shows the rest of every object as Git has it,
// even words a secret also holds.
func TestRenderRecordsAndMasksSecretFields(t *testing.T) {
	key, err := sopstest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("kustomization.yaml", "resources: [settings.yaml, db.enc.yaml]\n")
	write("settings.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    example.com/pin: ${PIN}
data:
  user: postgres
  password: ${PASSWORD}
  region: ${REGION}
  url: postgres://postgres:${PASSWORD}@db:5432/app
`)
	enc, err := sopstest.Encrypt(key.Recipient, []byte("apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: db\nspec:\n  user: postgres\n  password: postgres\n"), formats.Yaml, "^password$")
	if err != nil {
		t.Fatal(err)
	}
	write("db.enc.yaml", string(enc))
	d, err := paths.Resolve(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Dir, opts.AgeIdentities = d, []string{key.Identity}
	opts.Substitute = map[string]string{"PASSWORD": "postgres", "PIN": "42", "REGION": "eu"}
	opts.SubstituteSecret = []string{"PASSWORD", "PIN"}
	var masked []string
	opts.Mask = func(v []string) { masked = append(masked, v...) }

	r, err := Render(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for id, f := range r.SecretFields {
		for _, p := range f.Fields {
			got[id.Name] = append(got[id.Name], p.String())
		}
	}
	want := map[string][]string{
		"settings": {"data.password", "data.url", `metadata.annotations["example.com/pin"]`},
		"db":       {"spec.password"},
	}
	for name, w := range want {
		if strings.Join(got[name], " ") != strings.Join(w, " ") {
			t.Errorf("%s: secret fields %q, want %q", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("secret fields %v", got)
	}

	var out bytes.Buffer
	if err := r.WriteYAML(&out); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"user: postgres", "password: '***'", "url: '***'", "region: eu", "example.com/pin: '***'"} {
		if strings.Count(out.String(), line) == 0 {
			t.Errorf("rendered YAML lacks %q:\n%s", line, out.String())
		}
	}
	if strings.Count(out.String(), "user: postgres") != 2 || strings.Contains(out.String(), "password: postgres") || strings.Contains(out.String(), "42") {
		t.Errorf("rendered YAML:\n%s", out.String())
	}

	if !slices.Contains(masked, "postgres") {
		t.Errorf("values handed to the masker: %q (the decrypted one, for messages and logs)", masked)
	}

	// Against a base where the password was another, the diff hides both
	// and says it changed.
	opts.Substitute["PASSWORD"] = "0ld-passw0rd"
	base, err := Render(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, e := range CompareRendered(base, r) {
		text += e.Diff
	}
	for _, want := range []string{
		"-  password: '" + diff.MaskHashed("0ld-passw0rd") + "'", "+  password: '" + diff.MaskChanged("postgres") + "'",
		"   user: postgres", "   region: eu",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("diff lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "0ld-passw0rd") || strings.Contains(text, "password: postgres") {
		t.Errorf("diff:\n%s", text)
	}
}
