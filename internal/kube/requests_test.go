package kube_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestRequestCounterCountsByMethodAndDryRun(t *testing.T) {
	t.Parallel()
	var c kube.RequestCounter
	rt := c.Wrap(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	}))
	send := func(method, url string) {
		req, err := http.NewRequest(method, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { send(http.MethodGet, "https://api/api/v1/namespaces/a/configmaps/x") })
	}
	wg.Wait()
	send(http.MethodPatch, "https://api/api/v1/namespaces/a/configmaps/x?fieldManager=m&dryRun=All")
	send(http.MethodPatch, "https://api/api/v1/namespaces/a/configmaps/x?fieldManager=m")

	got := c.Count()
	if got.Total != 12 {
		t.Errorf("Count().Total = %d, want 12", got.Total)
	}
	if diff := cmp.Diff(map[string]int{"GET": 10, "PATCH": 1, "PATCH dryRun": 1}, got.ByMethod); diff != "" {
		t.Errorf("Count().ByMethod mismatch (-want +got):\n%s", diff)
	}
}

func TestRequestCounterCountsByResource(t *testing.T) {
	t.Parallel()
	var c kube.RequestCounter
	rt := c.Wrap(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	}))
	for _, req := range []struct{ method, url string }{
		{http.MethodGet, "https://api/version"},
		{http.MethodGet, "https://api/api"},
		{http.MethodGet, "https://api/apis"},
		{http.MethodGet, "https://api/api/v1"},
		{http.MethodGet, "https://api/apis/apps/v1"},
		{http.MethodGet, "https://api/api/v1/namespaces/a"},
		{http.MethodPut, "https://api/api/v1/namespaces/a/finalize"},
		{http.MethodGet, "https://api/api/v1/namespaces"},
		{http.MethodPatch, "https://api/api/v1/namespaces/a/configmaps/x?fieldManager=m"},
		{http.MethodPatch, "https://api/api/v1/namespaces/a/configmaps/y?fieldManager=m"},
		{http.MethodPatch, "https://api/api/v1/namespaces/a/configmaps/y?fieldManager=m&dryRun=All"},
		{http.MethodGet, "https://api/apis/apps/v1/namespaces/a/deployments"},
		{http.MethodPut, "https://api/apis/apps/v1/namespaces/a/deployments/web/status"},
		{http.MethodGet, "https://api/apis/rbac.authorization.k8s.io/v1/clusterroles/admin"},
		{http.MethodGet, "https://api/healthz"},
	} {
		r, err := http.NewRequest(req.method, req.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.RoundTrip(r); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int{
		"GET version": 1, "GET discovery": 4, "GET namespaces": 2, "PUT namespaces/finalize": 1,
		"PATCH configmaps": 2, "PATCH dryRun configmaps": 1, "GET deployments.apps": 1,
		"PUT deployments.apps/status": 1, "GET clusterroles.rbac.authorization.k8s.io": 1, "GET other": 1,
	}
	if diff := cmp.Diff(want, c.Count().ByResource); diff != "" {
		t.Errorf("Count().ByResource mismatch (-want +got):\n%s", diff)
	}
}

func TestNewCountsEveryRequestOfItsClients(t *testing.T) {
	t.Parallel()
	var served int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api":
			_ = json.NewEncoder(w).Encode(metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
		case "/apis":
			_ = json.NewEncoder(w).Encode(metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}})
		case "/api/v1":
			_ = json.NewEncoder(w).Encode(metav1.APIResourceList{
				TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
				GroupVersion: "v1",
				APIResources: []metav1.APIResource{{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: []string{"get"}}},
			})
		case "/api/v1/namespaces/a/configmaps/x":
			_ = json.NewEncoder(w).Encode(corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
				ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "x"},
			})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	var counter kube.RequestCounter
	opts := kube.DefaultOptions()
	opts.Requests = &counter
	c, err := kube.New(&rest.Config{Host: srv.URL}, "a", opts)
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := c.Client.Get(context.Background(), client.ObjectKey{Namespace: "a", Name: "x"}, &cm); err != nil {
		t.Fatal(err)
	}
	imp, err := c.Impersonate("a", "deployer")
	if err != nil {
		t.Fatal(err)
	}
	if err := imp.Client.Get(context.Background(), client.ObjectKey{Namespace: "a", Name: "x"}, &cm); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	if got := counter.Count().Total; got != served || got < 2 {
		t.Errorf("counted %d request(s), the server answered %d (want equal, at least the 2 GETs)", got, served)
	}
}

// Wrote tells a run that sent only reads and dry-runs from one that may
// have written: a lock taken is a write.
func TestRequestCounterWrote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		sent  [][2]string // method, URL
		wrote bool
	}{
		{name: "nothing"},
		{name: "reads and dry-runs", sent: [][2]string{{http.MethodGet, "https://api/api/v1/namespaces/a/secrets/inv"}, {http.MethodPatch, "https://api/api/v1/namespaces/a/configmaps/x?dryRun=All"}, {http.MethodHead, "https://api/version"}}},
		{name: "a lock taken", sent: [][2]string{{http.MethodPost, "https://api/apis/coordination.k8s.io/v1/namespaces/a/leases"}}, wrote: true},
		{name: "an object applied", sent: [][2]string{{http.MethodGet, "https://api/x"}, {http.MethodPatch, "https://api/api/v1/namespaces/a/configmaps/x?fieldManager=m"}}, wrote: true},
		{name: "a delete", sent: [][2]string{{http.MethodDelete, "https://api/api/v1/namespaces/a/configmaps/x"}}, wrote: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c kube.RequestCounter
			rt := c.Wrap(roundTripFunc(func(*http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
			}))
			for _, s := range tc.sent {
				req, _ := http.NewRequest(s[0], s[1], nil)
				if _, err := rt.RoundTrip(req); err != nil {
					t.Fatal(err)
				}
			}
			if got := c.Wrote(); got != tc.wrote {
				t.Errorf("Wrote() = %v, want %v", got, tc.wrote)
			}
		})
	}
}
