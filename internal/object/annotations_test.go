package object

import "testing"

func TestSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		m      map[string]string
		want   string
		wantOK bool
	}{
		{name: "none"},
		{name: "ours", m: map[string]string{"kustomize-deploy.dev/prune": "disabled"}, want: "disabled", wantOK: true},
		{name: "flux", m: map[string]string{"kustomize.toolkit.fluxcd.io/prune": "disabled"}, want: "disabled", wantOK: true},
		{name: "ours wins", m: map[string]string{"kustomize-deploy.dev/prune": "enabled", "kustomize.toolkit.fluxcd.io/prune": "disabled"}, want: "enabled", wantOK: true},
		{name: "ours wins when empty", m: map[string]string{"kustomize-deploy.dev/prune": "", "kustomize.toolkit.fluxcd.io/prune": "disabled"}, want: "", wantOK: true},
		{name: "other key", m: map[string]string{"kustomize-deploy.dev/ssa": "Merge"}},
		{name: "unprefixed", m: map[string]string{"prune": "disabled"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := Setting(tc.m, PruneKey)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("Setting(%v, %q) = %q, %v; want %q, %v", tc.m, PruneKey, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
