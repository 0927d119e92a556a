package build

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// plainCases are plain directories whose files stress how kustomize reads
// them: Lists, anchors, empty and JSON documents, YAML 1.1 words, local
// config, an object in the default namespace beside one without.
var plainCases = map[string]map[string]string{
	"list and anchors": {
		"list.yaml":  "apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data: &d {k: v}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n  data: *d\n",
		"empty.yaml": "---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations: {note: \"yes\"}\ndata:\n  on: off\n  yes: no\n  n: \"012\"\n---\n",
		"obj.json":   `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "json"}}`,
		"d.yml":      "# comment\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  replicas: 2 # two\n  template:\n    spec:\n      containers:\n      - name: web\n        image: web:1\n        args: [--port, \"8080\", 1.0, 0x10, ~]\n",
	},
	"local config and an empty list": {
		"local.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"list.yaml":  "apiVersion: v1\nkind: List\nitems: []\n",
		"real.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: real}\n",
	},
	"default namespace twice": {
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\n",
		"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same, namespace: default}\n",
	},
	"nested directories": {
		"a/one.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n",
		"a/b/two.yaml":    "apiVersion: v1\nkind: Secret\nmetadata: {name: two}\nstringData: {k: v}\n",
		"values.yaml":     "replicas: 3\n",
		".hidden/x.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hidden}\n",
		"c/ns.yaml":       "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
		"c/svc.yaml":      "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  ports: [{port: 80}]\n",
		"z/nulls.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nulls\n  labels: {}\ndata:\n",
		"z/strings.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: strs}\ndata:\n  multi: |\n    line one\n    line two\n  folded: >\n    a\n    b\n",
		"z/unicode.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: uni}\ndata: {greeting: \"héllo \\u263a\"}\n",
		"z/tabs.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tabs}\ndata: {t: \"a\\tb\"}\n",
		"z/big-int.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bigint, annotations: {n: \"9007199254740993\"}}\n",
		"z/ts.yaml":       "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: cron}\nspec: {schedule: \"*/5 * * * *\", jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}\n",
		"z/anchorkey.yml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: merge}\nbase: &b {x: 1}\ndata:\n  <<: *b\n  y: \"2\"\n",
	},
}

// The fast path for plain directories gives exactly what kustomize gives:
// same objects, in the same order, from the same files; and where
// kustomize fails, it leaves the failure to kustomize. Checked on the
// cases above and on every plain directory among the repository's
// fixtures.
func TestPlainDirectoriesBuildAsKustomizeDoes(t *testing.T) {
	t.Parallel()
	dirs := map[string]string{}
	for name, files := range plainCases {
		dir := t.TempDir()
		for f, content := range files {
			writeTestFile(t, filepath.Join(dir, f), content)
		}
		dirs[name] = dir
	}
	many := t.TempDir()
	for i := range 300 {
		writeTestFile(t, filepath.Join(many, fmt.Sprintf("cm-%03d.yaml", i)), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d}\ndata: {i: \"%d\"}\n", i, i))
	}
	dirs["300 files"] = many
	for _, d := range repositoryPlainDirs(t) {
		dirs[d] = d
	}
	checked := 0
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			at := filepath.Join(t.TempDir(), "kd-plain-test")
			fast, fastErr := buildCopy(t, dir, at, true)
			slow, slowErr := buildCopy(t, dir, at, false)
			switch {
			case fastErr != nil || slowErr != nil:
				if (fastErr == nil) != (slowErr == nil) || fastErr.Error() != slowErr.Error() {
					t.Fatalf("errors differ:\nfast: %v\nkustomize: %v", fastErr, slowErr)
				}
				checked++
			default:
				objects, sources, inputs := cmp.Diff(slow.Objects, fast.Objects), cmp.Diff(slow.Sources, fast.Sources), cmp.Diff(slow.Inputs, fast.Inputs)
				if objects != "" {
					t.Errorf("objects mismatch (-kustomize +fast):\n%s", objects)
				}
				if sources != "" {
					t.Errorf("sources mismatch (-kustomize +fast):\n%s", sources)
				}
				if inputs != "" {
					t.Errorf("inputs mismatch (-kustomize +fast):\n%s", inputs)
				}
				if objects == "" && sources == "" && inputs == "" {
					checked++
				}
			}
		})
	}
	if checked < len(plainCases)+5 {
		t.Errorf("only %d directories built alike; the comparison must cover the cases and the fixtures", checked)
	}
}

// buildCopy builds a copy of dir (a build writes its generated
// kustomization) at root, with the fast path on or off: copies built at the
// same place give messages that compare.
func buildCopy(t *testing.T, dir, root string, fast bool) (*Result, error) {
	t.Helper()
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	if err := os.CopyFS(root, os.DirFS(dir)); err != nil {
		t.Skipf("cannot copy %s: %v", dir, err) // a fixture with symlinks
	}
	root, _ = filepath.EvalSymlinks(root)
	return Build(context.Background(), Options{Root: root, Path: root, kustomizeOnly: !fast})
}

// repositoryPlainDirs are the fixture directories of the repository that
// hold YAML and no kustomization.
func repositoryPlainDirs(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, top := range []string{"../../testdata", "../../cmd/kustomize-deploy/testdata", "../../examples", "testdata"} {
		_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			entries, _ := os.ReadDir(p)
			yamls, kust := 0, false
			for _, e := range entries {
				switch n := e.Name(); {
				case n == "kustomization.yaml" || n == "kustomization.yml" || n == "Kustomization":
					kust = true
				case strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml"):
					yamls++
				}
			}
			if yamls > 0 && !kust {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
