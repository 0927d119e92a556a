package helm

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/ssa/utils"
	"github.com/google/go-cmp/cmp"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
)

// sameAsViaJSON fails t unless decodeDocument reads body as
// readDocumentViaJSON does (the same head and objects, of the same Go
// types), when it reads it at all; it says whether it did.
func sameAsViaJSON(t *testing.T, body string) bool {
	t.Helper()
	head, objs, ok := decodeDocument(body)
	if !ok {
		return false
	}
	wantHead, wantObjs, err := readDocumentViaJSON(body)
	if err != nil {
		t.Fatalf("decodeDocument read a document Kubernetes' decoder refuses (%v):\n%s", err, body)
	}
	// DeepEqual first: go-cmp's diff of deeply nested lists takes ages.
	if !reflect.DeepEqual(wantHead, head) {
		t.Errorf("head differs (-via JSON +decodeDocument):\n%s\ndocument:\n%s", cmp.Diff(wantHead, head), body)
	}
	if !reflect.DeepEqual(wantObjs, objs) {
		t.Errorf("objects differ (-via JSON +decodeDocument):\n%s\ndocument:\n%s", cmp.Diff(wantObjs, objs), body)
	}
	return true
}

// TestDecodeDocumentIsJSONs reads documents whose values YAML and JSON
// type differently with decodeDocument and through JSON, as Kubernetes'
// decoder reads them: the same objects, each value of the same Go type,
// or decodeDocument leaves the document to the decoder.
func TestDecodeDocumentIsJSONs(t *testing.T) {
	const meta = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n"
	tests := []struct {
		name string
		body string
		// direct says decodeDocument reads it itself.
		direct bool
	}{
		{"plain", meta + "data:\n  a: b\n", true},
		{"YAML 1.1 booleans", meta + "x:\n  a: yes\n  b: off\n  c: On\n  d: \"no\"\n  e: y\n", true},
		{"integers", meta + "x:\n  dec: 42\n  neg: -7\n  octal: 0777\n  hex: 0x1F\n  under: 1_000\n  bin: 0b101\n  sexa: 190:20:30\n", true},
		{"big integers", meta + "x:\n  max: 9223372036854775807\n  over: 9223372036854775808\n  huge: 18446744073709551615\n  past: 18446744073709551616\n  min: -9223372036854775808\n", true},
		{"floats that JSON writes as integers", meta + "x:\n  one: 1.0\n  exp: 1e3\n  negzero: -0.0\n  big: 1e20\n  bigger: 1e21\n  over: 1e19\n", true},
		{"floats", meta + "x:\n  half: 0.5\n  tiny: 1e-7\n  pi: 3.14159265358979\n  sexa: 190:20:30.15\n  dot: .5\n", true},
		{"not a float", meta + "x:\n  huge: 1e400\n", true},
		{"nulls and timestamps", meta + "x:\n  a: ~\n  b: null\n  c:\n  d: 2001-12-14t21:59:43.10-05:00\n  e: 2002-12-14\n", true},
		{"tags", meta + "x:\n  s: !!str 12\n  f: !!float 1\n  i: !!int \"3\"\n  custom: !thing value\n  bin: !!binary aGVsbG8=\n", true},
		{"binary that is not UTF-8", meta + "x:\n  bin: !!binary /w==\n  mixed: !!binary Yf9i\n", true},
		{"keys of other types", meta + "x:\n  1: one\n  true: t\n  1.5: f\n  0x10: hex\n  2.0: two\n", true},
		{"keys alike once written", meta + "x:\n  1: int\n  \"1\": string\n", false},
		{"null key", meta + "x:\n  ~: nothing\n", false},
		{"infinities", meta + "x:\n  inf: .inf\n", false},
		{"not a number", meta + "x:\n  nan: .NaN\n", false},
		{"infinite key", meta + "x:\n  .inf: big\n", false},
		{"anchors and merge keys", meta + "base: &b\n  a: 1\n  list: [x, y]\nx:\n  <<: *b\n  c: *b\n", true},
		{"block scalars at the end", meta + "data:\n  clip: |\n    line", true},
		{"keep chomping at the end", meta + "data:\n  keep: |+\n    line\n\n", true},
		{"folded", meta + "data:\n  f: >\n    a\n    b\n\n  g: >-\n    c\n", true},
		{"flow style", meta + "spec: {ports: [{port: 80, name: http}], x: [1, 2.5, \"3\"]}\n", true},
		{"list", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: a}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n", true},
		{"list of no objects", "apiVersion: v1\nkind: List\nitems: []\n", true},
		{"list of a scalar", "apiVersion: v1\nkind: List\nitems:\n- a\n", false},
		{"items not a list", "apiVersion: v1\nkind: Thing\nmetadata: {name: t}\nitems: a\n", true},
		{"no name: not an object", "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n", true},
		{"a kustomization", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata: {name: k}\nresources: []\n", true},
		{"no kind", "apiVersion: v1\nmetadata:\n  name: n\n", false},
		{"kind not a string", "apiVersion: v1\nkind: 3\nmetadata:\n  name: n\n", false},
		{"name not a string", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 3\n", true},
		{"comments only", "# nothing here\n", false},
		{"a scalar", "just text\n", false},
		{"a sequence", "- a\n- b\n", false},
		{"JSON", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n"}}`, false},
		{"JSON after spaces", "  \n {\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"n\"}}", false},
		{"quoted key first", `"apiVersion": v1` + "\nkind: ConfigMap\nmetadata: {name: n}\n", true},
		{"carriage returns", strings.ReplaceAll(meta+"data:\n  a: |\n    b\n", "\n", "\r\n"), false},
		{"a separator inside", meta + "---\nkind: Other\n", false},
		{"a separator first", "---\n" + meta, false},
		{"not YAML", meta + "data: [unclosed\n", false},
		{"unicode", meta + "data:\n  a: \"caf\\u00e9 \\U0001F600\"\n  b: ünïcödé\n", true},
		{"HTML characters", meta + "data:\n  a: \"<b>&</b>\"\n", true},
		{"duplicate keys", meta + "data:\n  a: 1\n  a: 2\n", true},
		{"empty values", meta + "data: {}\nlist: []\nstr: \"\"\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if direct := sameAsViaJSON(t, tt.body); direct != tt.direct {
				t.Errorf("decodeDocument read it itself: %v, want %v", direct, tt.direct)
			}
		})
	}
}

// TestDecodeDocumentDeep leaves a document deeper than maxDepth to the
// decoder, which refuses what JSON cannot nest.
func TestDecodeDocumentDeep(t *testing.T) {
	body := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: n}\ndeep: " + strings.Repeat("[", maxDepth+5) + strings.Repeat("]", maxDepth+5) + "\n"
	if sameAsViaJSON(t, body) {
		t.Error("decodeDocument read a document deeper than maxDepth")
	}
	shallow := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: n}\ndeep: " + strings.Repeat("[", 30) + strings.Repeat("]", 30) + "\n"
	if !sameAsViaJSON(t, shallow) {
		t.Error("decodeDocument left a document of 30 levels to the decoder")
	}
}

// TestDecodeDocumentCharts reads every document every chart of testdata
// and of make bench renders both ways: the same objects; make bench's
// charts (and most others) are read without JSON.
func TestDecodeDocumentCharts(t *testing.T) {
	direct, all := 0, 0
	for name, dir := range chartDirs(t) {
		if strings.HasPrefix(name, "bad/") {
			continue
		}
		rel := &Release{Name: "r", Namespace: "flux-system", ReleaseName: "rel", ReleaseNamespace: "apps"}
		files, err := renderTemplates(context.Background(), rel, loadChart(t, dir), map[string]any{}, Capabilities{}, false, map[string]any{})
		if err != nil {
			continue // a chart that does not render (TestRenderIsHelmsInstall covers it)
		}
		ch := loadChart(t, dir)
		var bodies []string
		for _, crd := range ch.CRDObjects() {
			bodies = append(bodies, string(crd.File.Data))
		}
		for _, file := range slices.Sorted(maps.Keys(files)) {
			split := releaseutil.SplitManifests(files[file])
			keys := slices.Collect(maps.Keys(split))
			sort.Sort(releaseutil.BySplitManifestsOrder(keys))
			for _, k := range keys {
				bodies = append(bodies, split[k])
			}
		}
		for _, body := range bodies {
			all++
			if sameAsViaJSON(t, body) {
				direct++
			} else if strings.HasPrefix(name, "bench/") {
				t.Errorf("%s: decodeDocument left a document of make bench to the decoder:\n%s", name, body)
			}
		}
	}
	if direct < all/2 {
		t.Errorf("decodeDocument read %d of %d documents itself", direct, all)
	}
	t.Logf("decodeDocument read %d of %d documents itself", direct, all)
}

// FuzzDecodeDocument: whatever decodeDocument reads, it reads as
// Kubernetes' decoder does.
func FuzzDecodeDocument(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\ndata:\n  a: yes\n  b: 0777\n  c: 1.0\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s}}\n",
		"kind: X\n1: a\n2.5: b\ntrue: c\n",
		"kind: X\nx: !!binary /w==\ny: 1e21\nz: -0.0\n",
		"kind: X\nx: &a {b: [1, 2]}\ny: *a\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if len(body) > 4096 {
			return
		}
		sameAsViaJSON(t, body)
	})
}

// helmSplit is releaseutil.SplitManifests in its documents' order.
func helmSplit(text string) []string {
	split := releaseutil.SplitManifests(text)
	keys := slices.Collect(maps.Keys(split))
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	var out []string
	for _, k := range keys {
		out = append(out, split[k])
	}
	return out
}

// splitTexts are templates' texts Helm's splitter treats each its own
// way.
var splitTexts = []string{
	"", "   \n\t", "a: 1", "---", "---\n", "a: 1\n---\nb: 2\n", "---\na: 1\n---\n---\n  \n---\nb: 2",
	"---apiVersion: v1\nkind: Service", "a: 1\n------\nb: 2", "a: 1\n--- \t \nb: 2", "a: 1\n--- # comment\nb: 2",
	"a: |\n  ---\n  x\n", "a: 1 --- b\n", "x---\n---y", "\n\n  ---\na: 1", "a: 1\r\n---\r\nb: 2\r\n", "-- -\n---\n--",
	"a: 1\n---\n\n\n   b: 2\n", "---\n---\n---", "a\n---", "\u00a0---\na",
}

// TestSplitManifestsIsHelms splits texts as Helm's SplitManifests does.
func TestSplitManifestsIsHelms(t *testing.T) {
	for _, text := range splitTexts {
		if diff := cmp.Diff(helmSplit(text), splitManifests(text)); diff != "" {
			t.Errorf("splitManifests(%q) differs from Helm's (-helm +ours):\n%s", text, diff)
		}
	}
}

func FuzzSplitManifests(f *testing.F) {
	for _, text := range splitTexts {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if diff := cmp.Diff(helmSplit(text), splitManifests(text)); diff != "" {
			t.Errorf("splitManifests(%q) differs from Helm's (-helm +ours):\n%s", text, diff)
		}
	})
}

// TestReadObjectsIsUtils reads every chart's CRDs and streams of what
// the decoder treats specially with readObjects and with
// utils.ReadObjects: the same objects, or the same error.
func TestReadObjectsIsUtils(t *testing.T) {
	streams := map[string]string{
		"two documents":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {n: 0777, b: yes}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n",
		"comments between":   "# head\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# only a comment\n---\n",
		"a list":             "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n",
		"a list of scalars":  "apiVersion: v1\nkind: List\nitems: [a]\n",
		"JSON":               `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}`,
		"JSON second":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n{\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"metadata\": {\"name\": \"b\"}}\n",
		"no kind":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n",
		"not YAML":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [a\n",
		"a bad separator":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---x\nkind: B\n",
		"carriage returns":   "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: a}\r\ndata:\r\n  k: |\r\n    v\r\n---\r\napiVersion: v1\r\nkind: Secret\r\nmetadata: {name: b}\r\n",
		"no final line end":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  k: |\n    v",
		"a kustomization":    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata: {name: k}\n",
		"empty":              "",
		"nameless":           "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n",
		"infinite":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: .inf}\n",
		"document end":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n...\n",
		"separator comments": "--- # first\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- # second\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	}
	for name, dir := range chartDirs(t) {
		for _, crd := range loadChart(t, dir).CRDObjects() {
			streams[name+"/"+crd.Filename] = string(crd.File.Data)
		}
	}
	if len(streams) < 20 {
		t.Fatalf("%d streams: the charts' CRDs moved?", len(streams))
	}
	for name, stream := range streams {
		t.Run(name, func(t *testing.T) {
			want, wantErr := utils.ReadObjects(strings.NewReader(stream))
			got, gotErr := readObjects([]byte(stream))
			if (wantErr != nil) != (gotErr != nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
				t.Fatalf("errors differ:\n utils:       %v\n readObjects: %v", wantErr, gotErr)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("objects differ (-utils +readObjects):\n%s", cmp.Diff(want, got))
			}
		})
	}
}
