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
