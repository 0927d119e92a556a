package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/diff"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
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
	opts.Dir, opts.Decryption.Keys = d, []string{key.Identity}
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

// The render steps, each alone: what one returns is what the next takes,
// and what Render hands the masker.

// substitute records the fields secret variables land in, next to those
// decryption recorded, and returns as values to mask only what it put into
// Secrets: a variable's own value is masked where it is found (variables).
func TestSubstituteStep(t *testing.T) {
	for _, tc := range []struct {
		name       string
		values     map[string]string
		secretVars []string
		decrypted  map[string][]string // fields decryption recorded
		wantFields map[string][]string
		wantMask   []string
	}{
		{name: "no values: nothing substituted, nothing to mask",
			wantFields: map[string][]string{}},
		{name: "public values: no field recorded; what lands in a Secret is masked",
			values:     map[string]string{"REGION": "eu", "TOKEN": "t0k"},
			wantFields: map[string][]string{}, wantMask: []string{"t0k"}},
		{name: "a secret variable: every field it lands in is recorded",
			values: map[string]string{"REGION": "eu", "TOKEN": "t0k"}, secretVars: []string{"TOKEN"},
			wantFields: map[string][]string{"settings": {"data.token"}, "creds": {"stringData.token"}}, wantMask: []string{"t0k"}},
		{name: "the fields decryption recorded stay",
			values: map[string]string{"REGION": "eu", "TOKEN": "t0k"}, secretVars: []string{"TOKEN"},
			decrypted:  map[string][]string{"settings": {"data.password"}},
			wantFields: map[string][]string{"settings": {"data.password", "data.token"}, "creds": {"stringData.token"}}, wantMask: []string{"t0k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			built := builtOf(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: apps}
data: {region: "${REGION}", token: "${TOKEN}", password: postgres}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: apps}
data: {user: cG9zdGdyZXM=}
stringData: {token: "${TOKEN}"}
`)
			secret := secretFieldsOf(t, built, tc.decrypted)
			opts := Options{Substitute: tc.values, SubstituteSecret: tc.secretVars}
			rendered, toMask, err := substitute(built, secret, opts, "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantFields, fieldNames(rendered.SecretFields)); diff != "" {
				t.Errorf("secret fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMask, toMask); diff != "" {
				t.Errorf("values to mask (-want +got):\n%s", diff)
			}
		})
	}
}

// decryptObjects decrypts SOPS manifests in place and returns where they
// held ciphertext, and the values to mask: what it decrypted, and every
// Secret's values (base64 and decoded).
func TestDecryptObjectsStep(t *testing.T) {
	key, enc := encryptedDatabase(t)
	built := builtOf(t, enc+`---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: apps}
data: {user: cG9zdGdyZXM=}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: apps}
data: {region: eu}
`)
	dec, err := decrypt.New(decrypt.Options{Keys: []string{key.Identity}})
	if err != nil {
		t.Fatal(err)
	}
	secret, toMask, err := decryptObjects(t.Context(), dec, built)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]string{"db": {"spec.password"}}, fieldNames(secret)); diff != "" {
		t.Errorf("secret fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cG9zdGdyZXM=", "postgres", "s3cret"}, toMask); diff != "" {
		t.Errorf("values to mask (-want +got):\n%s", diff)
	}
	db := built.Objects[0]
	if pw, _, _ := unstructured.NestedString(db.Object, "spec", "password"); pw != "s3cret" || db.Object["sops"] != nil {
		t.Errorf("the manifest was not decrypted in place: %v", db.Object)
	}
}

// RenderSealed decrypts nothing: ciphertext stays, without its sops
// metadata, and is not handed to the masker (it is no secret); only what
// substitution puts into Secrets is.
func TestRenderSealedDecryptsNothing(t *testing.T) {
	key, enc := encryptedDatabase(t)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"kustomization.yaml": "resources: [db.enc.yaml, creds.yaml]\n",
		"db.enc.yaml":        enc,
		"creds.yaml":         "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  token: ${TOKEN}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := paths.Resolve(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Dir, opts.Decryption.Keys = d, []string{key.Identity} // a key given is not used
	opts.Substitute, opts.SubstituteSecret = map[string]string{"TOKEN": "t0k"}, []string{"TOKEN"}
	var masked []string
	opts.Mask = func(v []string) { masked = append(masked, v...) }
	r, err := RenderSealed(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"t0k"}, masked); diff != "" {
		t.Errorf("values handed to the masker (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]string{"creds": {"stringData.token"}}, fieldNames(r.SecretFields)); diff != "" {
		t.Errorf("secret fields (-want +got):\n%s", diff)
	}
	db := r.Objects[0]
	if pw, _, _ := unstructured.NestedString(db.Object, "spec", "password"); !strings.HasPrefix(pw, "ENC[") || db.Object["sops"] != nil {
		t.Errorf("the sealed manifest: %v", db.Object)
	}
}

// encryptedDatabase is a Database manifest, db in namespace apps, whose
// spec.password (s3cret) SOPS encrypted for key, a new age key.
func encryptedDatabase(t *testing.T) (sopstest.Key, string) {
	t.Helper()
	key, err := sopstest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := sopstest.Encrypt(key.Recipient, []byte("apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: db\n  namespace: apps\nspec:\n  user: postgres\n  password: s3cret\n"), formats.Yaml, "^password$")
	if err != nil {
		t.Fatal(err)
	}
	return key, string(enc)
}

// builtOf is a build's result of the YAML documents in text, each from
// the file <name>.yaml.
func builtOf(t *testing.T, text string) *build.Result {
	t.Helper()
	out := &build.Result{Sources: map[object.ID]string{}}
	for doc := range strings.SplitSeq(text, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		out.Objects = append(out.Objects, u)
		out.Sources[object.IDOf(u)] = u.GetName() + ".yaml"
	}
	return out
}

// secretFieldsOf records fields, by object name, as built's secret fields.
func secretFieldsOf(t *testing.T, built *build.Result, fields map[string][]string) map[object.ID]*object.SecretFields {
	t.Helper()
	out := map[object.ID]*object.SecretFields{}
	for _, u := range built.Objects {
		for _, f := range fields[u.GetName()] {
			if out[object.IDOf(u)] == nil {
				out[object.IDOf(u)] = &object.SecretFields{}
			}
			out[object.IDOf(u)].AddField(object.FieldPath(strings.Split(f, ".")))
		}
	}
	return out
}

// fieldNames are the fields recorded, by object name.
func fieldNames(secret map[object.ID]*object.SecretFields) map[string][]string {
	out := map[string][]string{}
	for id, f := range secret {
		for _, p := range f.Fields {
			out[id.Name] = append(out[id.Name], p.String())
		}
	}
	return out
}
