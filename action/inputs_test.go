package action

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

func inputs(vars map[string]string) (Inputs, error) {
	gha := githubactions.New(githubactions.WithGetenv(func(k string) string { return vars[k] }))
	return readInputs(gha)
}

func TestInputDefaults(t *testing.T) {
	in, err := inputs(map[string]string{"INPUT_PATH": "./clusters/prod/apps"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Name != "clusters-prod-apps" || in.Mode != ModeAuto || !in.Prune || !in.Wait || in.Timeout != 5*time.Minute ||
		in.Comment != "auto" || !in.Status || in.DriftAction != "correct" || in.FailOnDrift ||
		in.QPS != 1000 || in.Burst != 2000 || in.Recheck {
		t.Errorf("defaults: %+v", in)
	}
}

func TestInputLists(t *testing.T) {
	in, err := inputs(map[string]string{
		"INPUT_PATH": "apps", "INPUT_DEPENDS-ON": "infra, crds\nbase",
		"INPUT_IMAGES": "web=registry.example/web:2\n# comment\n\napi=:v3\n", "INPUT_SUBSTITUTE": "A=1\nB=two words",
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(in.DependsOn, "|") != "infra|crds|base" || len(in.Images) != 2 || in.Substitute[1] != "B=two words" {
		t.Errorf("lists: %+v", in)
	}
}

func TestInputErrorsNameEveryBadInput(t *testing.T) {
	_, err := inputs(map[string]string{"INPUT_MODE": "yolo", "INPUT_PRUNE": "maybe", "INPUT_TIMEOUT": "soon", "INPUT_COMMENT": "loud",
		"INPUT_KUBE-API-QPS": "fast", "INPUT_KUBE-API-BURST": "-3", "INPUT_RECHECK": "sometimes"})
	if err == nil {
		t.Fatal("bad inputs accepted")
	}
	for _, name := range []string{"'mode'", "'prune'", "'timeout'", "'comment'", "'path'", "'kube-api-qps'", "'kube-api-burst'", "'recheck'"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name input %s: %v", name, err)
		}
	}
}

func TestResolveMode(t *testing.T) {
	for event, want := range map[string]result.Mode{
		"pull_request": result.ModeDiff, "pull_request_target": result.ModeDiff, "merge_group": result.ModeDiff, "push": result.ModeApply, "workflow_dispatch": result.ModeApply, "schedule": result.ModeDrift,
	} {
		if got, err := resolveMode(ModeAuto, event); err != nil || got != want {
			t.Errorf("%s: %s %v, want %s", event, got, err, want)
		}
	}
	if _, err := resolveMode(ModeAuto, "issue_comment"); err == nil {
		t.Error("auto mode accepted issue_comment")
	}
	if got, _ := resolveMode(string(result.ModeDelete), "push"); got != result.ModeDelete {
		t.Error("an explicit mode was overridden")
	}
}

// A value that parses but is out of range is refused once, where the
// CLI's flags are checked too (spec), and named by its input.
func TestOutOfRangeInputsAreNamed(t *testing.T) {
	in, err := inputs(map[string]string{"INPUT_PATH": t.TempDir(), "INPUT_TIMEOUT": "-1m", "INPUT_MAX-PRUNE": "-2", "INPUT_MAX-COLLECT": "-1", "INPUT_LOCK-TIMEOUT": "-5s"})
	if err != nil {
		t.Fatalf("inputs that parse were refused before the engine's check: %v", err)
	}
	r := &runner{in: in, ev: &event{}, mode: result.ModeApply, masker: mask.New(), env: Env{Getenv: func(string) string { return "" }}}
	_, err = r.options(t.Context())
	for _, want := range []string{"input 'timeout': want a positive duration", "input 'max-prune': want a count of objects", "input 'max-collect': want a count of units", "input 'lock-timeout': want a duration"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one saying %q", err, want)
		}
	}
}

// The sources input maps sources to directories of the workspace, one
// KIND/NAMESPACE/NAME=DIR line each; a bad line is named, and so is the
// input without config.
func TestInputSources(t *testing.T) {
	in, err := inputs(map[string]string{"INPUT_CONFIG": "clusters/prod",
		"INPUT_SOURCES": "GitRepository/flux-system/podinfo=podinfo\n# a comment\n\nOCIRepository/apps/manifests = pulled/manifests\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[config.SourceRef]string{
		{Kind: "GitRepository", Namespace: "flux-system", Name: "podinfo"}: "podinfo",
		{Kind: "OCIRepository", Namespace: "apps", Name: "manifests"}:      "pulled/manifests",
	}
	if len(in.Sources) != len(want) {
		t.Fatalf("sources: %v", in.Sources)
	}
	for ref, dir := range want {
		if in.Sources[ref] != dir {
			t.Errorf("%s: %q, want %q", ref, in.Sources[ref], dir)
		}
	}
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"INPUT_CONFIG": "c", "INPUT_SOURCES": "podinfo=../podinfo"}, "input 'sources': want KIND/NAMESPACE/NAME=DIR"},
		{map[string]string{"INPUT_CONFIG": "c", "INPUT_SOURCES": "HelmRepository/a/b=dir"}, "input 'sources': \"HelmRepository/a/b=dir\": the kind is GitRepository"},
		{map[string]string{"INPUT_CONFIG": "c", "INPUT_SOURCES": "GitRepository/a/b=x\nGitRepository/a/b=y"}, "input 'sources': GitRepository/a/b is mapped twice"},
		{map[string]string{"INPUT_PATH": "apps", "INPUT_SOURCES": "GitRepository/a/b=x"}, "input 'sources': only with 'config'"},
	} {
		if _, err := inputs(tc.vars); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.vars, err, tc.want)
		}
	}
}

// oci-secrets are NAME=$VARIABLE or NAME=FILE lines, read with config
// only.
func TestInputOCISecrets(t *testing.T) {
	in, err := inputs(map[string]string{"INPUT_CONFIG": "clusters/prod", "INPUT_OCI-SECRETS": "regcred=$REGCRED\n# a comment\nghcr = auth/ghcr.json\n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.OCISecrets) != 2 || in.OCISecrets["regcred"] != "$REGCRED" || in.OCISecrets["ghcr"] != "auth/ghcr.json" {
		t.Errorf("oci-secrets: %v", in.OCISecrets)
	}
	if _, err := inputs(map[string]string{"INPUT_PATH": "apps", "INPUT_OCI-SECRETS": "regcred=$REGCRED"}); err == nil || !strings.Contains(err.Error(), "input 'oci-secrets': only with 'config'") {
		t.Errorf("oci-secrets without config: %v", err)
	}
}

// Tags pick a configuration's units (and HelmReleases), abort-on-error
// stops a configuration's units;
// rollback's revision is a number, with mode rollback only.
func TestInputSelectionAndRollback(t *testing.T) {
	in, err := inputs(map[string]string{"INPUT_CONFIG": "clusters/prod", "INPUT_INCLUDE-TAGS": "backend, frontend", "INPUT_EXCLUDE-TAGS": "slow", "INPUT_ABORT-ON-ERROR": "true"})
	if err != nil || !slices.Equal(in.IncludeTags, []string{"backend", "frontend"}) || !slices.Equal(in.ExcludeTags, []string{"slow"}) || !in.AbortOnError {
		t.Errorf("inputs %+v, %v", in, err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"INPUT_PATH": "apps", "INPUT_ABORT-ON-ERROR": "true"}, "input 'abort-on-error': only with 'config'"},
		{map[string]string{"INPUT_PATH": "apps", "INPUT_ALL-UNITS": "true"}, "input 'all-units': only with 'config'"},
		{map[string]string{"INPUT_PATH": "apps", "INPUT_TO-REVISION": "3"}, "input 'to-revision': only with mode rollback"},
		{map[string]string{"INPUT_PATH": "apps", "INPUT_MODE": "rollback", "INPUT_TO-REVISION": "three"}, "input 'to-revision': want a revision number"},
		{map[string]string{"INPUT_CONFIG": "clusters/prod", "INPUT_MODE": "rollback"}, "input 'mode': rollback is of one unit"},
	} {
		if _, err := inputs(tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.env, err, tc.want)
		}
	}
	if in, err := inputs(map[string]string{"INPUT_PATH": "apps", "INPUT_MODE": "rollback", "INPUT_TO-REVISION": "3"}); err != nil || in.ToRevision != 3 {
		t.Errorf("mode rollback: %+v, %v", in.ToRevision, err)
	}
}

// Flux's lockdown inputs override the configuration's when given, and
// leave it when empty: default-service-account names the account,
// no-cross-namespace-refs is true or false; both only with config.
func TestInputLockdown(t *testing.T) {
	in, err := inputs(map[string]string{"INPUT_CONFIG": "clusters/prod"})
	if err != nil || in.DefaultServiceAccount != nil || in.NoCrossNamespaceRefs != nil {
		t.Errorf("not given: %v %v, %v", in.DefaultServiceAccount, in.NoCrossNamespaceRefs, err)
	}
	in, err = inputs(map[string]string{"INPUT_CONFIG": "clusters/prod", "INPUT_DEFAULT-SERVICE-ACCOUNT": "tenant", "INPUT_NO-CROSS-NAMESPACE-REFS": "false"})
	if err != nil || in.DefaultServiceAccount == nil || *in.DefaultServiceAccount != "tenant" || in.NoCrossNamespaceRefs == nil || *in.NoCrossNamespaceRefs {
		t.Errorf("given: %v %v, %v", in.DefaultServiceAccount, in.NoCrossNamespaceRefs, err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"INPUT_CONFIG": "clusters/prod", "INPUT_NO-CROSS-NAMESPACE-REFS": "yes"}, "input 'no-cross-namespace-refs': want true or false"},
		{map[string]string{"INPUT_PATH": "apps", "INPUT_DEFAULT-SERVICE-ACCOUNT": "default"}, "input 'default-service-account': only with 'config'"},
		{map[string]string{"INPUT_PATH": "apps", "INPUT_NO-CROSS-NAMESPACE-REFS": "true"}, "input 'no-cross-namespace-refs': only with 'config'"},
	} {
		if _, err := inputs(tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.env, err, tc.want)
		}
	}
}
