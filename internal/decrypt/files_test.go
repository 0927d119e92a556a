package decrypt

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// generatorTree lays out a repository whose cluster overlay reaches, through
// resources and components, a secretGenerator reading an encrypted .env
// file, an encrypted YAML file, an encrypted binary file and a plain file.
func generatorTree(t *testing.T, key testKey) string {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string][]byte{
		"clusters/prod/kustomization.yaml": []byte("resources:\n  - ../../apps\n  - https://github.com/example/remote//base?ref=v1\ncomponents:\n  - ../../components/tls\n"),
		"apps/kustomization.yaml":          readTestdata(t, "generator/kustomization.yaml"),
		"apps/app.env":                     encrypt(t, key.recipient, readTestdata(t, "generator/app.env"), formats.Dotenv, ""),
		"apps/config.enc.yaml":             encrypt(t, key.recipient, readTestdata(t, "generator/config.yaml"), formats.Yaml, ""),
		"apps/plain.txt":                   readTestdata(t, "generator/plain.txt"),
		"components/tls/kustomization.yaml": []byte(`apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
generatorOptions:
  disableNameSuffixHash: true
secretGenerator:
  - name: tls
    files:
      - tls.key=tls.key.enc
`),
		"components/tls/tls.key.enc": encrypt(t, key.recipient, []byte("-----BEGIN KEY-----\nbinary-key\n"), formats.Binary, ""),
	})
	return root
}

func TestDecryptFilesSecretGenerator(t *testing.T) {
	t.Parallel()
	key := newTestKey(t)
	root := generatorTree(t, key)
	plainBefore := readFile(t, root, "apps/plain.txt")

	d := newTestDecryptor(t, key)
	rewritten, err := d.DecryptFiles(context.Background(), root, "clusters/prod")
	if err != nil {
		t.Fatal(err)
	}
	if rewritten != 3 { // what a rendering must not share with one that sealed them (pipeline.Builds)
		t.Errorf("%d file(s) rewritten, want the 3 encrypted ones", rewritten)
	}
	for file, want := range map[string]string{
		"apps/app.env":               "API_TOKEN=tok-plaintext-9f8e7d",
		"apps/config.enc.yaml":       "password: yaml-plaintext-hunter2",
		"components/tls/tls.key.enc": "binary-key",
	} {
		got := readFile(t, root, file)
		if !strings.Contains(got, want) || strings.Contains(got, "sops") {
			t.Errorf("%s after DecryptFiles:\n%s", file, got)
		}
	}
	if got := readFile(t, root, "apps/plain.txt"); got != plainBefore {
		t.Errorf("plain file changed: %q", got)
	}
	// Idempotent: a second run finds nothing encrypted.
	if _, err := d.DecryptFiles(context.Background(), root, filepath.Join(root, "clusters", "prod")); err != nil {
		t.Fatalf("second run: %v", err)
	}

	// The build now holds plaintext and passes the leftover check.
	if err := os.WriteFile(filepath.Join(root, "clusters/prod/kustomization.yaml"),
		[]byte("resources:\n  - ../../apps\ncomponents:\n  - ../../components/tls\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	objs := build(t, filepath.Join(root, "clusters/prod"))
	if err := d.DecryptObjects(context.Background(), objs, nil); err != nil {
		t.Fatalf("DecryptObjects on the build: %v", err)
	}
	values := map[string]string{}
	for _, u := range objs {
		data, _, _ := unstructured.NestedStringMap(u.Object, "data")
		for k, v := range data {
			raw, _ := base64.StdEncoding.DecodeString(v)
			values[u.GetName()+"/"+k] = string(raw)
		}
	}
	for k, want := range map[string]string{
		"app/API_TOKEN":   "tok-plaintext-9f8e7d",
		"app/config.yaml": "yaml-plaintext-hunter2",
		"app/plain.txt":   "not-a-secret",
		"tls/tls.key":     "binary-key",
	} {
		if !strings.Contains(values[k], want) {
			t.Errorf("built %s = %q, want it to contain %q", k, values[k], want)
		}
	}
}

func TestDecryptFilesFailures(t *testing.T) {
	t.Parallel()
	key, other := newTestKey(t), newTestKey(t)
	encEnv := encrypt(t, key.recipient, readTestdata(t, "generator/app.env"), formats.Dotenv, "")
	encYAML := encrypt(t, key.recipient, readTestdata(t, "generator/config.yaml"), formats.Yaml, "")
	gen := func(src string) []byte {
		return []byte("secretGenerator:\n  - name: s\n    " + src + "\n")
	}

	tests := []struct {
		name    string
		files   map[string][]byte
		setup   func(t *testing.T, root, outside string)
		keys    []testKey
		max     int64
		wantErr error
		errHas  []string
	}{
		{
			name:    "wrong key",
			files:   map[string][]byte{"apps/kustomization.yaml": gen("envs: [app.env]"), "apps/app.env": encEnv},
			keys:    []testKey{other},
			wantErr: ErrNoMatchingIdentity,
			errHas:  []string{"decryption failed for 'apps/app.env' (apps/kustomization.yaml)", key.recipient},
		},
		{
			name:    "oversize file",
			files:   map[string][]byte{"apps/kustomization.yaml": gen("envs: [app.env]"), "apps/app.env": encEnv},
			max:     100,
			wantErr: ErrTooLarge,
			errHas:  []string{"apps/app.env", "limit 100"},
		},
		{
			name:    "not a regular file",
			files:   map[string][]byte{"apps/kustomization.yaml": gen("files: [dir]"), "apps/dir/x": []byte("x")},
			wantErr: ErrNotRegular,
			errHas:  []string{"apps/dir"},
		},
		{
			name: "value changed without sops (bad MAC)",
			files: map[string][]byte{
				"apps/kustomization.yaml": gen("envs: [app.env]"),
				"apps/app.env":            encrypt(t, key.recipient, readTestdata(t, "generator/app.env"), formats.Dotenv, "^API_"),
			},
			setup: func(t *testing.T, root, _ string) {
				// LOG_LEVEL is left unencrypted by the regex; editing it
				// by hand breaks the MAC.
				p := filepath.Join(root, "apps", "app.env")
				b, _ := os.ReadFile(p)
				if err := os.WriteFile(p, bytes.Replace(b, []byte("LOG_LEVEL=debug"), []byte("LOG_LEVEL=trace"), 1), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: ErrMACMismatch,
			errHas:  []string{"apps/app.env"},
		},
		{
			name: "truncated MAC",
			files: map[string][]byte{
				"apps/kustomization.yaml": gen("files: [config.enc.yaml]"),
				"apps/config.enc.yaml":    encYAML[:bytes.Index(encYAML, []byte("mac: ENC["))+20],
			},
			wantErr: ErrMACMismatch,
			errHas:  []string{"apps/config.enc.yaml"},
		},
		{
			name: "truncated before the sops metadata",
			files: map[string][]byte{
				"apps/kustomization.yaml": gen("files: [config.enc.yaml]"),
				"apps/config.enc.yaml":    encYAML[:bytes.Index(encYAML, []byte("sops:"))],
			},
			wantErr: ErrMalformed,
			errHas:  []string{"apps/config.enc.yaml", "no sops metadata"},
		},
		{
			name: "truncated inside the sops metadata",
			files: map[string][]byte{
				"apps/kustomization.yaml": gen("files: [config.enc.yaml]"),
				"apps/config.enc.yaml":    append(bytes.Replace(encYAML, []byte("    age:"), []byte("    age: ["), 1), []byte("mac: ENC[")...),
			},
			wantErr: ErrMalformed,
			errHas:  []string{"apps/config.enc.yaml"},
		},
		{
			name: "garbled ciphertext",
			files: map[string][]byte{
				"apps/kustomization.yaml": gen("envs: [app.env]"),
				"apps/app.env":            bytes.Replace(encEnv, []byte("API_TOKEN=ENC[AES256_GCM,data:"), []byte("API_TOKEN=ENC[AES256_GCM,data:!!"), 1),
			},
			wantErr: ErrMalformed,
		},
		{
			name: "two kustomization files",
			files: map[string][]byte{
				"apps/kustomization.yaml": gen("envs: [app.env]"),
				"apps/kustomization.yml":  gen("envs: [app.env]"),
			},
			errHas: []string{"found both"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, outside := t.TempDir(), t.TempDir()
			writeTree(t, root, tt.files)
			if tt.setup != nil {
				tt.setup(t, root, outside)
			}
			keys := tt.keys
			if keys == nil {
				keys = []testKey{key}
			}
			d, err := New(Options{Keys: []string{keys[0].identity}, MaxFileSize: tt.max})
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.DecryptFiles(context.Background(), root, "apps")
			if err == nil {
				t.Fatal("DecryptFiles succeeded")
			}
			t.Log(err)
			var de *Error
			if !errors.As(err, &de) {
				t.Errorf("err %T is not *Error: %v", err, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			assertContains(t, err, tt.errHas...)
			assertNoPlaintext(t, err)
		})
	}
}

func TestDecryptFilesWithoutKustomization(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string][]byte{"apps/deploy.yaml": []byte("kind: Deployment\n")})
	if _, err := newTestDecryptor(t).DecryptFiles(context.Background(), root, "apps"); err != nil {
		t.Fatalf("a directory without kustomization: %v", err)
	}
}

// A kustomization that does not parse is its own mistake, named as the
// build names it, not a decryption failure.
func TestDecryptFilesInvalidKustomization(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string][]byte{"apps/kustomization.yaml": []byte("resources:\n- a.yaml\n  - broken: [\n")})
	_, err := newTestDecryptor(t).DecryptFiles(context.Background(), root, "apps")
	var de *Error
	if err == nil || errors.As(err, &de) {
		t.Fatalf("err %v (%T), want one that is not a decryption failure", err, err)
	}
	assertContains(t, err, "apps/kustomization.yaml: invalid kustomization", "line 3")
}

// A path out of the repository is the kustomization's mistake whatever the
// keys: it is reported as the build reports its errors, naming the
// kustomization and the entry, and nothing outside is decrypted.
func TestDecryptFilesOutsideRoot(t *testing.T) {
	t.Parallel()
	key := newTestKey(t)
	encEnv := encrypt(t, key.recipient, readTestdata(t, "generator/app.env"), formats.Dotenv, "")
	gen := func(src string) []byte {
		return []byte("secretGenerator:\n  - name: s\n    " + src + "\n")
	}
	tests := []struct {
		name          string
		path          string // given to DecryptFiles; "apps" if empty
		kustomization []byte // apps/kustomization.yaml, unless setup makes it
		setup         func(t *testing.T, root, outside string)
		want          string
	}{
		{
			name:          "resource file through ../",
			kustomization: []byte("resources: [../../outside/cm.yaml]\n"),
			want:          "kustomization apps/kustomization.yaml: resource '../../outside/cm.yaml' leads outside the repository root",
		},
		{
			name:          "resource directory through ../",
			kustomization: []byte("resources: [../../outside]\n"),
			want:          "kustomization apps/kustomization.yaml: resource '../../outside' leads outside the repository root",
		},
		{
			name:          "component through ../",
			kustomization: []byte("components: [../../outside]\n"),
			want:          "kustomization apps/kustomization.yaml: component '../../outside' leads outside the repository root",
		},
		{
			name:          "env file through ../",
			kustomization: gen("envs: [../../outside/secret.env]"),
			want:          "kustomization apps/kustomization.yaml: secretGenerator env file '../../outside/secret.env' leads outside the repository root",
		},
		{
			name:          "absolute file",
			kustomization: gen("files: [key=/etc/passwd]"),
			want:          "kustomization apps/kustomization.yaml: secretGenerator file '/etc/passwd' leads outside the repository root",
		},
		{
			name:          "file through a symlink",
			kustomization: gen("envs: [link.env]"),
			setup: func(t *testing.T, root, outside string) {
				symlink(t, filepath.Join(outside, "secret.env"), filepath.Join(root, "apps", "link.env"))
			},
			want: "kustomization apps/kustomization.yaml: secretGenerator env file 'link.env' leads outside the repository root through a symlink",
		},
		{
			name:          "directory through a symlink",
			kustomization: []byte("resources: [ext]\n"),
			setup: func(t *testing.T, root, outside string) {
				symlink(t, outside, filepath.Join(root, "apps", "ext"))
			},
			want: "kustomization apps/kustomization.yaml: resource 'ext' leads outside the repository root through a symlink",
		},
		{
			name: "kustomization file through a symlink",
			setup: func(t *testing.T, root, outside string) {
				symlink(t, filepath.Join(outside, "kustomization.yaml"), filepath.Join(root, "apps", "kustomization.yaml"))
			},
			want: "kustomization 'apps/kustomization.yaml' leads outside the repository root through a symlink",
		},
		{
			name: "the path itself",
			path: "../outside",
			want: "path '../outside' leads outside the repository root",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			root, outside := filepath.Join(base, "repo"), filepath.Join(base, "outside")
			writeTree(t, outside, map[string][]byte{
				"cm.yaml":            []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: outside\n"),
				"secret.env":         encEnv,
				"kustomization.yaml": gen("envs: [secret.env]"),
			})
			writeTree(t, root, map[string][]byte{"apps/.keep": nil})
			if tt.kustomization != nil {
				writeTree(t, root, map[string][]byte{"apps/kustomization.yaml": tt.kustomization})
			}
			if tt.setup != nil {
				tt.setup(t, root, outside)
			}
			path := tt.path
			if path == "" {
				path = "apps"
			}

			_, err := newTestDecryptor(t, key).DecryptFiles(context.Background(), root, path)
			if got := readFile(t, outside, "secret.env"); got != string(encEnv) {
				t.Error("the encrypted file outside the root was changed")
			}
			var oe *OutsideRootError
			if !errors.As(err, &oe) {
				t.Fatalf("err = %v (%T), want an *OutsideRootError", err, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
			if !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("errors.Is(%v, ErrOutsideRoot) = false", err)
			}
			var de *Error
			if errors.As(err, &de) {
				t.Errorf("err %v is also a decryption *Error", err)
			}
		})
	}
}

func readFile(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unsupported: %v", err)
	}
}
