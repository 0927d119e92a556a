package helm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
)

// A chart from a GitRepository that is another repository is read from
// the tree Checkout.Repository resolves it to: its values files from
// that tree, the chart confined to it, its revision in where it came
// from; what the resolver refuses fails naming the field and the source;
// without a resolver, it is refused as before.
func TestExpandChartOfAnotherRepository(t *testing.T) {
	this := checkoutOf(t, map[string]string{"charts/web": "web"}, map[string]string{"charts/web/values-prod.yaml": "greeting: from-this-checkout\n"})
	other := checkoutOf(t, map[string]string{"charts/web": "web"}, map[string]string{"charts/web/values-prod.yaml": "greeting: from-the-other-repository\n"})
	spec := "  chart:\n    spec:\n      chart: CHART\n      sourceRef: {kind: GitRepository, name: shop}\n      valuesFiles: [./charts/web/values.yaml, ./charts/web/values-prod.yaml]\n"
	resolved := func(ctx context.Context, ref helm.Reference) (helm.GitTree, error) {
		if ref != (helm.Reference{Kind: "GitRepository", Name: "shop", Namespace: "apps"}) {
			return helm.GitTree{}, errors.New("asked for " + ref.String())
		}
		return helm.GitTree{Dir: other, Revision: "main@sha1:0123abc"}, nil
	}
	refused := func(ctx context.Context, ref helm.Reference) (helm.GitTree, error) {
		return helm.GitTree{}, errors.New("GitRepository apps/shop is another repository, and fetching sources is off")
	}
	for _, tc := range []struct {
		name     string
		chart    string
		resolve  func(ctx context.Context, ref helm.Reference) (helm.GitTree, error)
		greeting string
		from     string
		err      []string
	}{
		{name: "read from its tree", chart: "./charts/web", resolve: resolved, greeting: "from-the-other-repository", from: "./charts/web of GitRepository/apps/shop at main@sha1:0123abc"},
		{name: "refused by the resolver", chart: "./charts/web", resolve: refused, err: []string{"spec.chart.spec.sourceRef GitRepository/apps/shop: GitRepository apps/shop is another repository, and fetching sources is off"}},
		{name: "out of its tree", chart: "../../etc", resolve: resolved, err: []string{"spec.chart.spec.sourceRef GitRepository/apps/shop: at revision main@sha1:0123abc: chart directory etc is not in the repository"}},
		{name: "no resolver", chart: "./charts/web", err: []string{"its spec.url https://github.com/other/charts is not this checkout's origin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, sources := objs(t, gitRepository("https://github.com/other/charts"), release(strings.Replace(spec, "CHART", tc.chart, 1)))
			opts := (&helm.Options{Checkout: &helm.Checkout{Remote: "https://github.com/acme/shop"}}).InCheckout(this)
			if tc.resolve != nil {
				opts = opts.WithRepository(tc.resolve)
			}
			out, err := helm.Expand(t.Context(), in, sources, *opts)
			if len(tc.err) > 0 {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c := out.Charts[0]; c.From != tc.from || c.Chart != "web" || c.Version != "1.0.0" || c.Digest == "" {
				t.Errorf("chart %+v, want from %q", c, tc.from)
			}
			cm := byKind(out.Objects, "ConfigMap")
			if got, _, _ := unstructured.NestedString(cm.Object, "data", "greeting"); got != tc.greeting {
				t.Errorf("greeting %q, want %q (values files from the chart's repository)", got, tc.greeting)
			}
		})
	}
}

// One GitRepository is this repository for a HelmRelease's chart exactly
// when it is for a Kustomization (source.Identity): any case, port,
// .git or scheme of its URL.
func TestExpandChartOfThisRepositoryAnySpelling(t *testing.T) {
	this := checkoutOf(t, map[string]string{"charts/web": "web"}, map[string]string{"charts/web/values-prod.yaml": "greeting: from-this-checkout\n"})
	spec := "  chart:\n    spec:\n      chart: ./charts/web\n      sourceRef: {kind: GitRepository, name: shop}\n"
	for _, url := range []string{"https://github.com/acme/shop", "https://GitHub.com/Acme/Shop.git", "ssh://git@github.com:22/acme/shop.git", "git@github.com:acme/shop", "https://github.com:443/acme/shop/"} {
		in, sources := objs(t, gitRepository(url), release(spec))
		opts := (&helm.Options{Checkout: &helm.Checkout{Remote: "https://github.com/acme/shop"}}).InCheckout(this)
		if _, err := helm.Expand(t.Context(), in, sources, *opts); err != nil {
			t.Errorf("%s: %v", url, err)
		}
	}
}
