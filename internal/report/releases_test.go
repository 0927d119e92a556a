package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A unit's Helm releases are reported with their chart and what became of
// their objects; hooks and the unit's other objects are not counted in.
func TestReleaseLines(t *testing.T) {
	dep := object.ID{Group: "apps", Kind: "Deployment", Namespace: "apps", Name: "web"}
	svc := object.ID{Kind: "Service", Namespace: "apps", Name: "web"}
	job := object.ID{Group: "batch", Kind: "Job", Namespace: "apps", Name: "migrate"}
	own := object.ID{Kind: "ConfigMap", Namespace: "apps", Name: "own"}
	r := &result.Result{
		Releases: []result.Release{{HelmRelease: "HelmRelease/apps/web", Chart: "web", Version: "1.1.0", Digest: "0123456789abcdef", Objects: []object.ID{dep, svc}}},
		Entries: []result.Entry{
			{Object: dep, Action: result.Configured}, {Object: svc, Action: result.Unchanged}, {Object: own, Action: result.Created},
			{Object: job, Action: result.Created, Stage: result.StageHooks, Release: "HelmRelease/apps/web"},
		},
	}
	r.NameReleases()
	if r.Entries[0].Release != "HelmRelease/apps/web" || r.Entries[2].Release != "" {
		t.Errorf("entries' releases: %+v", r.Entries)
	}
	want := []string{"release HelmRelease/apps/web: chart web 1.1.0 (sha256:0123456789ab), 2 object(s): 1 configured, 1 unchanged"}
	if got := releaseLines(r); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	var text strings.Builder
	Text(&text, r, false)
	if !strings.Contains(text.String(), want[0]) {
		t.Errorf("the text report lacks the release:\n%s", text.String())
	}
	if md := Markdown([]*result.Result{r}, MarkdownOptions{}); !strings.Contains(md, "release HelmRelease/apps/web: chart web 1.1.0") {
		t.Errorf("the comment lacks the release:\n%s", md)
	}
}

// A release installed as another identity, or to another cluster, than
// its unit says so in the text and in the comment.
func TestReleaseLinesSayAnotherIdentity(t *testing.T) {
	t.Parallel()
	r := &result.Result{Releases: []result.Release{{HelmRelease: "HelmRelease/apps/web", Chart: "web", Version: "1.1.0",
		InstalledAs: "system:serviceaccount:apps:dev-team on the cluster of kubeConfig Secret spoke"}}}
	want := []string{"release HelmRelease/apps/web: chart web 1.1.0, installed as system:serviceaccount:apps:dev-team on the cluster of kubeConfig Secret spoke, 0 object(s)"}
	if got := releaseLines(r); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if md := Markdown([]*result.Result{r}, MarkdownOptions{}); !strings.Contains(md, "installed as system:serviceaccount:apps:dev-team on the cluster of kubeConfig Secret spoke") {
		t.Errorf("the comment lacks how the release is installed:\n%s", md)
	}
}

// Within a stage, a release's objects are listed under it, after the
// unit's own, in the text and in the comment's lists.
func TestReleaseObjectsAreNestedUnderTheirRelease(t *testing.T) {
	t.Parallel()
	id := func(kind, name string) object.ID { return object.ID{Kind: kind, Namespace: "apps", Name: name} }
	r := &result.Result{
		Unit: "apps", Mode: result.ModeApply, Ready: true, Reason: result.ReasonApplySucceed,
		Releases: []result.Release{
			{HelmRelease: "HelmRelease/apps/web", Chart: "web", Version: "1.1.0", Objects: []object.ID{id("Service", "web")}},
			{HelmRelease: "HelmRelease/apps/db", Chart: "db", Version: "2.0.0", Objects: []object.ID{id("Service", "db")}},
		},
		Entries: []result.Entry{
			{Object: id("Service", "db"), Stage: result.StageResources, Action: result.Created},
			{Object: id("Service", "web"), Stage: result.StageResources, Action: result.Configured, Source: "apps/web.yaml"},
			{Object: id("ConfigMap", "own"), Stage: result.StageResources, Action: result.Created, Source: "apps/own.yaml"},
		},
	}
	r.NameReleases()
	var text strings.Builder
	Text(&text, r, false)
	want := "resources:\n" +
		"  created     ConfigMap/apps/own  apps/own.yaml\n" +
		"  HelmRelease/apps/web (chart web 1.1.0):\n" +
		"    configured  Service/apps/web    apps/web.yaml\n" +
		"  HelmRelease/apps/db (chart db 2.0.0):\n" +
		"    created     Service/apps/db\n"
	if !strings.Contains(text.String(), want) {
		t.Errorf("the text report:\n%s\nwant it to hold:\n%s", text.String(), want)
	}
	md := Markdown([]*result.Result{r}, MarkdownOptions{})
	wantMD := "- created `ConfigMap/apps/own` (apps/own.yaml)\n" +
		"- HelmRelease/apps/web (chart web 1.1.0)\n" +
		"  - configured `Service/apps/web` (apps/web.yaml)\n" +
		"- HelmRelease/apps/db (chart db 2.0.0)\n" +
		"  - created `Service/apps/db`\n"
	if !strings.Contains(md, wantMD) {
		t.Errorf("the comment:\n%s\nwant it to hold:\n%s", md, wantMD)
	}
}
