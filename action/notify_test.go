package action

import (
	"strings"
	"testing"
)

// A configuration whose unit holds github and githubdispatch Providers
// (no Secret: the job's token, for the job's own server) and an Alert of
// each: a push that changes the unit sets the Provider's commit status on
// the pushed commit and sends one repository_dispatch, through the job's
// GitHub API; a second push of the same commit, a no-op, sends nothing
// more.
func TestConfigNotifiesGitHub(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newGitRepo(t)
	repo.write("deploy/app/settings.yaml", settingsYAML("app-settings", "1"))
	repo.write("deploy/app/notifications.yaml", `apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {name: status}
spec:
  type: github
  address: https://github.com/acme/deployments
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {name: dispatch}
spec:
  type: githubdispatch
  address: https://github.com/acme/deployments
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {name: status}
spec:
  providerRef: {name: status}
  eventSources: [{kind: Kustomization, name: app}]
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {name: dispatch}
spec:
  providerRef: {name: dispatch}
  eventSources: [{kind: Kustomization, name: '*'}]
`)
	repo.write("clusters/test/units.yaml", kustomization("app", ns, "deploy/app", ""))
	repo.write("clusters/test/flux-system/gotk-sync.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n")
	head := repo.commit("app with notifications")
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	gh.expectTimes(1, "POST /repos/acme/deployments/dispatches")
	for _, run := range []string{"first push", "second push (no-op)"} {
		res := configRun(t, gh, "push", repo, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig).run()
		if res.code != exitOK {
			t.Fatalf("%s: exit %d\n%s", run, res.code, res.stdout)
		}
	}
	var flux []map[string]any
	for _, s := range statusesByContext(gh) {
		for _, st := range s {
			if strings.HasPrefix(st["context"].(string), "kustomization/app/") {
				flux = append(flux, st)
			}
		}
	}
	if len(flux) != 1 || flux[0]["state"] != "success" || flux[0]["sha"] != head || flux[0]["description"] != "reconciliation succeeded" {
		t.Errorf("the github Provider's statuses: %v", flux)
	}
	gh.mu.Lock()
	defer gh.mu.Unlock()
	if len(gh.dispatches) != 1 {
		t.Fatalf("dispatches %v", gh.dispatches)
	}
	d := gh.dispatches[0]
	payload, _ := d["client_payload"].(map[string]any)
	if d["event_type"] != "Kustomization/app."+ns || payload["reason"] != "ReconciliationSucceeded" || !strings.Contains(payload["message"].(string), "ConfigMap/"+ns+"/app-settings created") {
		t.Errorf("dispatch %v", d)
	}
	for _, auth := range gh.auth {
		if auth != "Bearer ghs_testtoken0123456789" {
			t.Errorf("GitHub was sent %q, not the job's token", auth)
		}
	}
}
