package helm_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
)

// outsideSecret is what a hostile chart tries to read from outside the
// repository: no error or object may quote it.
const outsideSecret = "ssh-key-of-the-runner-7f3a"

// hostileCheckout is a repository with the test chart web at charts/web,
// plus files, and a directory outside it holding outsideSecret in
// secret.txt and values.yaml; setup adds links (it gets the root and the
// outside directory).
func hostileCheckout(t *testing.T, files map[string]string, setup func(root, outside string)) string {
	t.Helper()
	root := checkoutOf(t, map[string]string{"charts/web": "web"}, files)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"secret.txt": outsideSecret, "values.yaml": "greeting: " + outsideSecret + "\n"} {
		if err := os.WriteFile(filepath.Join(outside, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if setup != nil {
		setup(root, outside)
	}
	return root
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// A chart kept in the repository reads nothing outside it, whatever its
// links say: the two-step link (charts/web/files -> ../../other, each
// step inside, and other/out -> a directory outside) that passed a check
// of each link's own target, a direct link, a values file behind such a
// link, a link loop, a named pipe; each fails the HelmRelease naming the
// path, and nothing of the outside directory is read into the result.
func TestExpandConfinesRepositoryCharts(t *testing.T) {
	self := helm.Reference{Kind: "GitRepository", Name: "flux-system", Namespace: "apps"}
	filesTemplate := map[string]string{"charts/web/templates/stolen.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen}\ndata:\n{{- range $p, $_ := .Files.Glob \"files/**\" }}\n  {{ base $p }}: {{ $.Files.Get $p | quote }}\n{{- end }}\n"}
	for _, tc := range []struct {
		name   string
		files  map[string]string
		setup  func(t *testing.T, root, outside string)
		values string
		want   string
	}{
		{"a link out in two steps", filesTemplate, func(t *testing.T, root, outside string) {
			symlink(t, "../../other", filepath.Join(root, "charts/web/files"))
			symlink(t, outside, filepath.Join(root, "other/out"))
		}, "", "charts/web/files/out: a symlink that leaves the repository"},
		{"a relative link out in two steps", filesTemplate, func(t *testing.T, root, outside string) {
			symlink(t, "../../other", filepath.Join(root, "charts/web/files"))
			rel, _ := filepath.Rel(filepath.Join(root, "other"), outside)
			symlink(t, rel, filepath.Join(root, "other/out"))
		}, "", "charts/web/files/out: a symlink that leaves the repository"},
		{"a direct link out", filesTemplate, func(t *testing.T, root, outside string) {
			symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "charts/web/files/key"))
		}, "", "charts/web/files/key: a symlink that leaves the repository"},
		{"the chart directory behind a link out", nil, func(t *testing.T, root, outside string) {
			symlink(t, "../../../other/out", filepath.Join(root, "charts/web/templates/more"))
			symlink(t, outside, filepath.Join(root, "other/out"))
		}, "", "charts/web/templates/more: a symlink that leaves the repository"},
		{"a values file behind a two-step link", nil, func(t *testing.T, root, outside string) {
			symlink(t, "../other", filepath.Join(root, "apps/values"))
			symlink(t, outside, filepath.Join(root, "other/out"))
		}, "      valuesFiles: [apps/values/out/values.yaml]\n", "apps/values/out/values.yaml: a symlink that leaves the repository"},
		{"a link loop", nil, func(t *testing.T, root, outside string) {
			symlink(t, "..", filepath.Join(root, "charts/web/templates/again"))
		}, "", "charts/web/templates/again: a symlink loop"},
		{"a named pipe", nil, func(t *testing.T, root, outside string) {
			if err := os.MkdirAll(filepath.Join(root, "charts/web/files"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(root, "charts/web/files/pipe"), 0o644); err != nil {
				t.Skip("no named pipes here:", err)
			}
		}, "", "charts/web/files/pipe: not a regular file: a named pipe"},
		{"a link to nothing", nil, func(t *testing.T, root, outside string) {
			symlink(t, "gone", filepath.Join(root, "charts/web/files/dangling"))
		}, "", "charts/web/files/dangling: a symlink to nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"apps/README": "x", "other/README": "x"}
			for k, v := range tc.files {
				files[k] = v
			}
			root := hostileCheckout(t, files, func(root, outside string) { tc.setup(t, root, outside) })
			in, sources := objs(t, release(gitChart("./charts/web", "flux-system")+tc.values))
			opts := (&helm.Options{}).InCheckout(root).FromSource(self)
			out, err := helm.Expand(t.Context(), in, sources, *opts)
			if err == nil {
				t.Fatalf("no error; objects %v", ids(out.Objects))
			}
			for _, w := range []string{"HelmRelease apps/web (apps/web/release.yaml)", tc.want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(fmt.Sprint(err, out), outsideSecret) {
				t.Errorf("a file outside the repository was read: %v", err)
			}
		})
	}

	// Links that stay inside, in as many steps as they like, are followed
	// as Helm follows them.
	root := hostileCheckout(t, filesTemplate, func(root, outside string) {
		if err := os.WriteFile(filepath.Join(root, "other/shared/motd"), nil, 0o644); err == nil {
			t.Fatal("other/shared exists")
		}
		if err := os.MkdirAll(filepath.Join(root, "other/shared"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "other/shared/motd"), []byte("welcome"), 0o644); err != nil {
			t.Fatal(err)
		}
		symlink(t, "../../other", filepath.Join(root, "charts/web/files"))
		symlink(t, "shared", filepath.Join(root, "other/inside"))
	})
	in, sources := objs(t, release(gitChart("./charts/web", "flux-system")))
	out, err := helm.Expand(t.Context(), in, sources, *(&helm.Options{}).InCheckout(root).FromSource(self))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range out.Objects {
		if u.GetName() == "stolen" {
			if got := u.Object["data"].(map[string]any)["motd"]; got != "welcome" {
				t.Errorf("a file behind links inside the repository: %v", u.Object["data"])
			}
			return
		}
	}
	t.Errorf("objects %v", ids(out.Objects))
}

// A chart kept in the repository is bounded: more than MaxChartFiles
// files, or files larger than MaxChartBytes in all (a sparse file costs
// the test nothing), fail naming the chart and the limit before anything
// is read into memory.
func TestExpandBoundsRepositoryCharts(t *testing.T) {
	self := helm.Reference{Kind: "GitRepository", Name: "flux-system", Namespace: "apps"}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, root string)
		want  string
	}{
		{"too many files", func(t *testing.T, root string) {
			dir := filepath.Join(root, "charts/web/files")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range helm.MaxChartFiles {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}, fmt.Sprintf("charts/web: the chart holds more than %d files", helm.MaxChartFiles)},
		{"too large", func(t *testing.T, root string) {
			f, err := os.Create(filepath.Join(root, "charts/web/big.bin"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(helm.MaxChartBytes + 1); err != nil {
				t.Fatal(err)
			}
		}, fmt.Sprintf("charts/web: the chart's files are larger than %d MiB", helm.MaxChartBytes>>20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := checkoutOf(t, map[string]string{"charts/web": "web"}, nil)
			tc.setup(t, root)
			in, sources := objs(t, release(gitChart("./charts/web", "flux-system")))
			_, err := helm.Expand(t.Context(), in, sources, *(&helm.Options{}).InCheckout(root).FromSource(self))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// A chart that depends on itself (repository: file://.), or on a chart
// that depends back on it, fails the HelmRelease naming the cycle instead
// of recursing until the process dies; file:// chains end at
// MaxChartDependencyDepth.
func TestExpandRefusesDependencyCycles(t *testing.T) {
	self := helm.Reference{Kind: "GitRepository", Name: "flux-system", Namespace: "apps"}
	chartYAML := func(name string, deps ...string) string {
		s := "apiVersion: v2\nname: " + name + "\nversion: 0.1.0\n"
		if len(deps) > 0 {
			s += "dependencies:\n"
		}
		for _, d := range deps {
			parts := strings.SplitN(d, "=", 2)
			s += "- {name: " + parts[0] + ", version: 0.1.0, repository: \"file://" + parts[1] + "\"}\n"
		}
		return s
	}
	deep := map[string]string{}
	for i := range helm.MaxChartDependencyDepth + 1 {
		deep[fmt.Sprintf("charts/c%d/Chart.yaml", i)] = chartYAML(fmt.Sprintf("c%d", i), fmt.Sprintf("c%d=../c%d", i+1, i+1))
	}
	deep[fmt.Sprintf("charts/c%d/Chart.yaml", helm.MaxChartDependencyDepth+1)] = chartYAML(fmt.Sprintf("c%d", helm.MaxChartDependencyDepth+1))
	for _, tc := range []struct {
		name  string
		files map[string]string
		chart string
		want  string
	}{
		{"itself", map[string]string{"charts/loop/Chart.yaml": chartYAML("loop", "loop=.")}, "./charts/loop",
			"a dependency cycle: charts/loop → charts/loop"},
		{"each other", map[string]string{"charts/a/Chart.yaml": chartYAML("a", "b=../b"), "charts/b/Chart.yaml": chartYAML("b", "a=../a")}, "./charts/a",
			"a dependency cycle: charts/a → charts/b → charts/a"},
		{"too deep", deep, "./charts/c0",
			fmt.Sprintf("file:// dependencies nest more than %d deep", helm.MaxChartDependencyDepth)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := checkoutOf(t, nil, tc.files)
			in, sources := objs(t, release(gitChart(tc.chart, "flux-system")))
			_, err := helm.Expand(t.Context(), in, sources, *(&helm.Options{}).InCheckout(root).FromSource(self))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range []string{"HelmRelease apps/web (apps/web/release.yaml)", tc.want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// chartFiles is a chart r at charts/r with values and templates (name:
// text).
func chartFiles(values string, templates map[string]string) map[string]string {
	files := map[string]string{
		"charts/r/Chart.yaml":  "apiVersion: v2\nname: r\nversion: 0.1.0\n",
		"charts/r/values.yaml": values,
	}
	for name, text := range templates {
		files["charts/r/templates/"+name] = text
	}
	return files
}

func expandChart(t *testing.T, files map[string]string) (*helm.Expanded, error) {
	t.Helper()
	root := checkoutOf(t, nil, files)
	in, sources := objs(t, release(gitChart("./charts/r", "flux-system")))
	return helm.Expand(t.Context(), in, sources, *(&helm.Options{}).InCheckout(root).FromSource(helm.Reference{Kind: "GitRepository", Name: "flux-system", Namespace: "apps"}))
}

// Templates that would run for ever, or until the Go runtime kills the
// process (a fatal stack overflow nothing recovers from), fail the
// HelmRelease by name: a value that tpl renders into itself, a template
// that makes its own text with printf and renders it, tpl through a
// `template` action back into the same define, and values that call
// tpl on the next ten times, five deep (ten times the work at each
// level); sprig functions asked for more than a chart needs (a
// billion-element until, an 8 GiB repeat, a key generated a thousand
// times) before they allocate or spend it; a release that renders over
// MaxRenderedBytes fails before it is read into objects.
func TestExpandBoundsTemplates(t *testing.T) {
	cm := func(body string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: r}\ndata:\n  x: " + body + "\n"
	}
	for _, tc := range []struct {
		name   string
		values string
		tpls   map[string]string
		want   string
	}{
		{"a value rendered into itself", "x: '{{ tpl .Values.x . }}'\n", map[string]string{"cm.yaml": cm("{{ tpl .Values.x . | quote }}")},
			fmt.Sprintf("tpl nests deeper than %d stack frames", helm.MaxTemplateFrames)},
		{"a template rendering its own text", "", map[string]string{"cm.yaml": cm(`{{ $s := "{{ $s := %q }}{{ tpl (printf $s $s) . }}" }}{{ tpl (printf $s $s) . | quote }}`)},
			fmt.Sprintf("tpl nests deeper than %d stack frames", helm.MaxTemplateFrames)},
		{"tpl back into its define", "", map[string]string{"_x.tpl": `{{ define "x" }}{{ tpl "{{ template \"x\" . }}" . }}{{ end }}`, "cm.yaml": cm(`{{ include "x" . | quote }}`)},
			fmt.Sprintf("tpl nests deeper than %d stack frames", helm.MaxTemplateFrames)},
		{"ten times at each of five levels", tenfold(5), map[string]string{"cm.yaml": cm("{{ tpl .Values.l0 . | quote }}")},
			fmt.Sprintf("tpl was called more than %d times", helm.MaxTplCalls)},
		{"a billion-element sequence", "", map[string]string{"cm.yaml": cm("{{ len (until 1000000000) }}")},
			"until would make a sequence of 1000000000 elements, and the release's render may make 1000000 in all"},
		{"sequences that add up", "", map[string]string{"cm.yaml": cm("{{ range until 1001 }}{{ len (untilStep 0 2000 2) }}{{ end }}")},
			"untilStep would make a sequence of 1000 elements, and the release's render may make 1000000 in all"},
		{"a span no int holds", "", map[string]string{"cm.yaml": cm("{{ len (untilStep -9223372036854775807 9223372036854775807 1) }}")},
			"untilStep would make a sequence of 9223372036854775807 elements"},
		{"a seq of every int", "", map[string]string{"cm.yaml": cm("{{ seq -9223372036854775807 9223372036854775806 }}")},
			"seq would make a sequence of 9223372036854775807 elements"},
		{"a repeat of 8 GiB", "", map[string]string{"cm.yaml": cm(`{{ repeat 1073741824 "xxxxxxxx" | len }}`)},
			"repeat would make 8589934592 bytes, and the release's render may make 16 MiB in all"},
		{"a repeat that overflows", "", map[string]string{"cm.yaml": cm(`{{ repeat 4611686018427387904 "xxxx" | len }}`)},
			"repeat would make 16777217 bytes"},
		{"random strings of a GiB", "", map[string]string{"cm.yaml": cm("{{ randAlphaNum 1073741824 | len }}")},
			"randAlphaNum would make 1073741824 bytes"},
		{"a key per loop", "", map[string]string{"cm.yaml": cm(`{{ range until 1000 }}{{ genPrivateKey "ecdsa" | len }}{{ end }}`)},
			fmt.Sprintf("genPrivateKey was called more than %d times", helm.MaxCostlyCalls)},
		{"a huge render", "", map[string]string{"cm.yaml": `{{ $mib := repeat 1048576 "x" }}{{ range until 5 }}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: r{{ . }}}
data: {x: {{ $mib }}}
{{ end }}`}, "it rendered 5.0 MiB of manifests, over the 4 MiB a release may render"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			helm.LowerMaxRenderedBytes(t, 4<<20) // testdata/bad/chart-render-over-limit renders over the real one
			_, err := expandChart(t, chartFiles(tc.values, tc.tpls))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range []string{"HelmRelease apps/web (apps/web/release.yaml): chart r 0.1.0 does not render: ", tc.want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if len(err.Error()) > 1000 {
				t.Errorf("an error of %d bytes", len(err.Error()))
			}
		})
	}
}

// tenfold are values l0 … ln, each calling tpl on the next ten times:
// 10^n calls.
func tenfold(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "l%d: '%s'\n", i, strings.Repeat(fmt.Sprintf("{{ tpl .Values.l%d . }}", i+1), 10))
	}
	fmt.Fprintf(&b, "l%d: x\n", n)
	return b.String()
}

// The guard changes nothing a chart renders: tpl of a value, in a
// pipeline, with the context piped in, of a value that includes a define,
// defines a template and calls tpl again, and tpl inside if, range, with
// and a define.
func TestExpandTplRendersAsHelm(t *testing.T) {
	values := `name: '{{ .Release.Name }}-app'
nested: '{{ define "inner" }}in-{{ .Release.Name }}{{ end }}{{ include "inner" . }}/{{ tpl .Values.name . }}'
list: ['{{ .Release.Namespace }}', 'b']
`
	out, err := expandChart(t, chartFiles(values, map[string]string{
		"_helpers.tpl": `{{- define "r.render" -}}{{- if typeIs "string" .value }}{{- tpl .value .context }}{{- else }}{{- tpl (.value | toYaml) .context }}{{- end }}{{- end -}}`,
		"cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: {{ tpl .Values.name . }}}
data:
  piped: {{ tpl .Values.name . | upper | quote }}
  context: {{ . | tpl .Values.name | quote }}
  nested: {{ tpl .Values.nested . | quote }}
  helper: {{ include "r.render" (dict "value" .Values.name "context" $) | quote }}
  {{- with .Values.list }}
  {{- range $i, $v := . }}
  item{{ $i }}: {{ tpl $v $ | quote }}
  {{- end }}
  {{- end }}
  {{- if and true (eq (tpl "{{ 1 }}" .) "1") }}
  cond: "yes" # a comment, {{/* and a template comment */}}
  {{- else if false }}
  cond: "no"
  {{- end }}
`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	u := byKind(out.Objects, "ConfigMap")
	want := map[string]any{"piped": "WEB-APP", "context": "web-app", "nested": "in-web/web-app", "helper": "web-app", "item0": "apps", "item1": "b", "cond": "yes"}
	if diff := cmp.Diff(want, u.Object["data"]); diff != "" || u.GetName() != "web-app" {
		t.Errorf("%s: data (-want +got):\n%s", u.GetName(), diff)
	}
}

// tgz is a chart archive: files (path: content) under the directory name.
func tgz(t *testing.T, name string, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if err := tw.WriteHeader(&tar.Header{Name: name + "/" + p, Mode: 0o644, Size: int64(len(files[p])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(files[p]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// nested is the archive of chart n<depth>, holding n<depth+1>'s archive
// in its charts/, down to n<bottom>.
func nested(t *testing.T, depth, bottom int) []byte {
	name := fmt.Sprintf("n%d", depth)
	files := map[string][]byte{
		"Chart.yaml":        []byte("apiVersion: v2\nname: " + name + "\nversion: 0.1.0\n"),
		"templates/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n"),
	}
	if depth < bottom {
		files[fmt.Sprintf("charts/n%d.tgz", depth+1)] = nested(t, depth+1, bottom)
	}
	return tgz(t, name, files)
}

// Vendored chart archives (charts/NAME.tgz) nest at most
// MaxChartDependencyDepth deep: an archive may hold itself, and Helm's
// loader would unpack it until the process died. Nested within the
// bound, they render.
func TestExpandBoundsVendoredArchives(t *testing.T) {
	self := helm.Reference{Kind: "GitRepository", Name: "flux-system", Namespace: "apps"}
	for _, tc := range []struct {
		name   string
		bottom int
		want   string
	}{
		{"within the bound", helm.MaxChartDependencyDepth, ""},
		{"deeper", helm.MaxChartDependencyDepth + 1, fmt.Sprintf("charts/web/charts/n1.tgz: charts/n2.tgz: charts/n3.tgz: charts/n4.tgz: charts/n5.tgz: charts/n6.tgz: charts/n7.tgz: charts/n8.tgz: charts/n9.tgz: charts/n10.tgz: charts/n11.tgz: vendored chart archives nest more than %d deep", helm.MaxChartDependencyDepth)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := checkoutOf(t, map[string]string{"charts/web": "web"}, nil)
			if err := os.MkdirAll(filepath.Join(root, "charts/web/charts"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "charts/web/charts/n1.tgz"), nested(t, 1, tc.bottom), 0o644); err != nil {
				t.Fatal(err)
			}
			in, sources := objs(t, release(gitChart("./charts/web", "flux-system")))
			out, err := helm.Expand(t.Context(), in, sources, *(&helm.Options{}).InCheckout(root).FromSource(self))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(kindsAndNames(out.Objects), fmt.Sprintf("ConfigMap/n%d", tc.bottom)) {
					t.Errorf("objects %v lack the deepest chart's", kindsAndNames(out.Objects))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
