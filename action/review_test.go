package action

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
)

// A fork's pull request that bumps a chart gets a comment whose first
// section after the table is the image change (old → new, the container,
// the object running it); the objects the bump only relabels fold into
// one line of their release, while the job summary keeps their diffs and
// the result output names the image change.
func TestForkedPullRequestShowsImagesFirstAndFoldsChartNoise(t *testing.T) {
	charts := helmtest.NewRepository(t,
		helmtest.Chart{Dir: filepath.Join("..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"},
		helmtest.Chart{Dir: filepath.Join("..", "testdata", "charts", "web"), Version: "1.1.0", AppVersion: "1.1"})
	g := newGitRepo(t)
	unit := func(version string) {
		g.write("deploy/web/repository.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: web}\nspec:\n  interval: 1h\n  url: "+charts.URL+"\n")
		g.write("deploy/web/release.yaml", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: web}\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: web\n      version: \""+version+"\"\n      sourceRef: {kind: HelmRepository, name: charts}\n")
	}
	unit("1.0.0")
	base := g.commit("web 1.0.0")
	unit("1.1.0")
	head := g.commit("web 1.1.0")

	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	gh.expectTimes(1, commentOn(8))
	res := newRun(t, gh, "pull_request.fork", g.dir, map[string]string{forkHead: head, prBase: base}).
		input("path", "deploy/web").input("chart-cache", ".charts").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	bodies := gh.commentBodies()
	if len(bodies) != 1 {
		t.Fatalf("comments %q", bodies)
	}
	body := bodies[0]
	image := "- container `web`: `registry.example/web:1.0` → `registry.example/web:1.1` in `Deployment/web/web` · release HelmRelease/web/web"
	images, unit1 := strings.Index(body, "### 🖼️ Images\n\n"+image+"\n"), strings.Index(body, "### deploy-web")
	if images < 0 || unit1 < images {
		t.Errorf("the comment does not start with the image change:\n%s", body)
	}
	folded := "- HelmRelease/web/web, chart web 1.0.0 → 1.1.0: 1 object relabelled: `ConfigMap/web/web-settings`"
	if !strings.Contains(body, folded) {
		t.Errorf("the comment lacks %q:\n%s", folded, body)
	}
	if strings.Contains(body, "<code>ConfigMap/web/web-settings</code>") {
		t.Errorf("the relabelled ConfigMap has its own diff in the comment:\n%s", body)
	}
	if !strings.Contains(body, "<code>Deployment/web/web</code>") {
		t.Errorf("the Deployment's diff is folded with the noise:\n%s", body)
	}
	if !strings.Contains(res.summary, "--- ConfigMap/web/web-settings (base)") {
		t.Errorf("the job summary lost the folded diff:\n%s", res.summary)
	}
	var out struct {
		Images []struct {
			Container, From, To, Release string
			Objects                      []struct{ Kind, Namespace, Name string }
		}
		Entries []struct {
			Object struct{ Kind, Name string }
			Noise  bool
		}
	}
	if err := json.Unmarshal([]byte(res.outputs["result"]), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Images) != 1 || out.Images[0].From != "registry.example/web:1.0" || out.Images[0].To != "registry.example/web:1.1" ||
		out.Images[0].Container != "web" || len(out.Images[0].Objects) != 1 || out.Images[0].Objects[0].Name != "web" {
		t.Errorf("result images %+v", out.Images)
	}
	for _, e := range out.Entries {
		if want := e.Object.Kind == "ConfigMap"; e.Noise != want {
			t.Errorf("%s/%s noise %t, want %t", e.Object.Kind, e.Object.Name, e.Noise, want)
		}
	}
}

// A fork's pull request that grows a StatefulSet's volume claim template
// is flagged offline, before any server refuses it: the risky list names
// the field and says the object must be recreated. An annotation the fold
// input names folds; the change beside it does not.
func TestForkedPullRequestFlagsAnImmutableFieldOffline(t *testing.T) {
	g := newGitRepo(t)
	sts := func(size, build string) string {
		return "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\nspec:\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n" +
			"  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: db, image: 'postgres:17'}]}\n" +
			"  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: " + size + "}}}\n" +
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: build, namespace: shop, annotations: {example.com/build: '" + build + "'}}\ndata: {a: b}\n"
	}
	g.write("deploy/db/db.yaml", sts("1Gi", "1"))
	base := g.commit("db")
	g.write("deploy/db/db.yaml", sts("2Gi", "2"))
	head := g.commit("db: 2Gi")

	gh := newFakeGitHub(t)
	gh.expect(statusCall, commentOn(8))
	res := newRun(t, gh, "pull_request.fork", g.dir, map[string]string{forkHead: head, prBase: base}).
		input("path", "deploy/db").input("fold", "/metadata/annotations/example.com~1build").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	body := strings.Join(gh.commentBodies(), "\n")
	for _, want := range []string{
		"**⚠️ 1 risky change** (1 needs recreation)",
		"⚠️ <b>needs recreation</b> configured <code>StatefulSet/shop/db</code> (deploy/db/db.yaml): <code>spec.volumeClaimTemplates</code> cannot be changed: the object must be recreated",
		"- the unit's own objects: 1 object relabelled: `ConfigMap/shop/build`",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, body)
		}
	}
	if !strings.Contains(res.summary, "<code>spec.volumeClaimTemplates</code> cannot be changed") {
		t.Errorf("the job summary does not name the field:\n%s", res.summary)
	}
	var out struct {
		Entries []struct {
			Object  struct{ Kind string }
			Dangers []struct{ Risk, Field, Consequence string }
		}
	}
	if err := json.Unmarshal([]byte(res.outputs["result"]), &out); err != nil {
		t.Fatal(err)
	}
	for _, e := range out.Entries {
		if e.Object.Kind == "StatefulSet" && (len(e.Dangers) != 1 || e.Dangers[0].Field != "spec.volumeClaimTemplates") {
			t.Errorf("the StatefulSet's dangers in the result: %+v", e.Dangers)
		}
	}
}

// A fork's pull request on a layout of 100 units that changes one values
// file (the configMapGenerator file a HelmRelease's valuesFrom reads)
// renders that unit alone, at base and head, and its comment opens with
// the image change, then says how many units were rendered and lists the
// others in one line.
func TestForkedPullRequestOnAHundredUnitsRendersOne(t *testing.T) {
	charts := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	const ns = "fleet"
	g := newGitRepo(t)
	units := ""
	for i := range 99 {
		name := fmt.Sprintf("app-%03d", i)
		g.write("deploy/"+name+"/settings.yaml", settingsYAML(name+"-settings", "1"))
		units += kustomization(name, ns, "deploy/"+name, "")
	}
	units += kustomization("web", ns, "deploy/web", "")
	g.write("clusters/test/units.yaml", units)
	g.write("clusters/test/flux-system/gotk-sync.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n")
	g.write("deploy/web/kustomization.yaml", "resources: [repository.yaml, release.yaml]\nconfigMapGenerator:\n- name: web-values\n  files: [values.yaml]\ngeneratorOptions:\n  disableNameSuffixHash: true\n")
	g.write("deploy/web/repository.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts}\nspec:\n  interval: 1h\n  url: "+charts.URL+"\n")
	g.write("deploy/web/release.yaml", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web}\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: web\n      version: \"1.0.0\"\n      sourceRef: {kind: HelmRepository, name: charts}\n  valuesFrom:\n  - kind: ConfigMap\n    name: web-values\n")
	g.write("deploy/web/values.yaml", "image:\n  tag: \"1.0\"\n")
	base := g.commit("a hundred units")
	g.write("deploy/web/values.yaml", "image:\n  tag: \"1.1\"\n")
	head := g.commit("web 1.1")

	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	gh.expectTimes(1, commentOn(8))
	res := configRun(t, gh, "pull_request.fork", g, map[string]string{forkHead: head, prBase: base}, ns).input("chart-cache", ".charts").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	bodies := gh.commentBodies()
	if len(bodies) != 1 {
		t.Fatalf("comments %q", bodies)
	}
	body := bodies[0]
	image := "- container `web`: `registry.example/web:1.0` → `registry.example/web:1.1` in `Deployment/" + ns + "/web`"
	images, reach, unit := strings.Index(body, "### 🖼️ Images\n\n"+image), strings.Index(body, "**1 of 100 units rendered**"), strings.Index(body, "### web")
	if images < 0 || reach < 0 || unit < 0 || unit < images {
		t.Errorf("the comment does not open with the image change, then the one unit rendered:\n%s", body)
	}
	if !strings.Contains(body, "not affected (99): app-000, app-001") || strings.Contains(body, "### app-000") {
		t.Errorf("the units not reached are not one line:\n%s", body)
	}
	var out struct {
		Reach struct {
			Rendered    int `json:"rendered"`
			NotAffected int `json:"notAffected"`
		} `json:"reach"`
	}
	if err := json.Unmarshal([]byte(res.outputs["result"]), &out); err != nil {
		t.Fatal(err)
	}
	if out.Reach.Rendered != 1 || out.Reach.NotAffected != 99 {
		t.Errorf("result reach %+v, want 1 rendered and 99 not affected", out.Reach)
	}
}
