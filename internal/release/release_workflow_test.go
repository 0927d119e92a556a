package release

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// releaseJob is what the rules below read of a job.
type releaseJob struct {
	Needs       any               `json:"needs"`
	Permissions map[string]string `json:"permissions"`
	Steps       []struct {
		Name string            `json:"name"`
		Uses string            `json:"uses"`
		Run  string            `json:"run"`
		With map[string]string `json:"with"`
	} `json:"steps"`
}

func parseJobs(t *testing.T, path string) (topWrites bool, jobs map[string]releaseJob) {
	t.Helper()
	data := []byte(strings.Replace(string(read(t, path)), "\non:", "\n\"on\":", 1))
	var w struct {
		Permissions any                   `json:"permissions"`
		Jobs        map[string]releaseJob `json:"jobs"`
	}
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return strings.Contains(fmt.Sprint(w.Permissions), "write"), w.Jobs
}

var (
	pinnedUses = regexp.MustCompile(`^[A-Za-z0-9-]+/[A-Za-z0-9._/-]+@[0-9a-f]{40}$`)
	// the line of a step using an action pinned by SHA, with its version
	versionComment = regexp.MustCompile(`uses: (\S+) # v[0-9]+\.[0-9]+\.[0-9]+\b`)
)

// In every job that can write contents or packages (a compromised tag of
// a third-party action there could publish anything), third-party actions
// are pinned by full commit SHA with the version as a comment, which is
// what dependabot reads and updates. actions/* and github/* are GitHub's
// own; ./ is this checkout.
func TestWritingJobsPinThirdPartyActions(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../.github/workflows/*.yml")
	checked := 0
	for _, f := range files {
		raw := string(read(t, f))
		commented := map[string]bool{}
		for _, m := range versionComment.FindAllStringSubmatch(raw, -1) {
			commented[m[1]] = true
		}
		topWrites, jobs := parseJobs(t, f)
		for name, j := range jobs {
			writes := topWrites && j.Permissions == nil
			for scope, level := range j.Permissions {
				writes = writes || (level == "write" && (scope == "contents" || scope == "packages"))
			}
			if !writes {
				continue
			}
			for _, s := range j.Steps {
				if s.Uses == "" || strings.HasPrefix(s.Uses, "./") || strings.HasPrefix(s.Uses, "actions/") || strings.HasPrefix(s.Uses, "github/") {
					continue
				}
				checked++
				if !pinnedUses.MatchString(s.Uses) {
					t.Errorf("%s: job %s uses %s: pin it by full commit SHA (# vX.Y.Z comment)", f, name, s.Uses)
				} else if !commented[s.Uses] {
					t.Errorf("%s: job %s uses %s without a '# vX.Y.Z' comment on its line", f, name, s.Uses)
				}
			}
		}
	}
	if checked < 5 {
		t.Errorf("only %d third-party steps in writing jobs checked: the rule checks nothing", checked)
	}
}

// The release publishes nothing before its gate job passed (tag on main,
// CI green for the commit), and runs the image and the release files it
// built before any push: the image pushed to the registry, the tags moved,
// the GitHub release.
func TestReleaseIsGatedAndSmokeTestedBeforePublishing(t *testing.T) {
	t.Parallel()
	_, jobs := parseJobs(t, "../../.github/workflows/release.yml")
	gate, ok := jobs["gate"]
	if !ok {
		t.Fatal("release.yml has no gate job")
	}
	for scope, level := range gate.Permissions {
		if level == "write" {
			t.Errorf("the gate job may write %s: it only reads", scope)
		}
	}
	runsGate := false
	for _, s := range gate.Steps {
		runsGate = runsGate || strings.Contains(s.Run, "./cmd/release-gate") && strings.Contains(s.Run, "--commit \"$GITHUB_SHA\"")
	}
	if !runsGate {
		t.Error("the gate job does not run cmd/release-gate on the tagged commit")
	}
	for name, j := range jobs {
		if name == "gate" {
			continue
		}
		if fmt.Sprint(j.Needs) != "gate" && !strings.Contains(fmt.Sprint(j.Needs), "gate") {
			t.Errorf("job %s does not need the gate job (needs: %v)", name, j.Needs)
		}
	}
	rel, ok := jobs["release"]
	if !ok {
		t.Fatal("release.yml has no release job")
	}
	first := func(match func(name, uses, run string, with map[string]string) bool) int {
		for i, s := range rel.Steps {
			if match(s.Name, s.Uses, s.Run, s.With) {
				return i
			}
		}
		return -1
	}
	smokeImage := first(func(_, _, run string, _ map[string]string) bool {
		return strings.Contains(run, "docker run") && strings.Contains(run, "build --path examples/") && strings.Contains(run, "version")
	})
	checkFiles := first(func(_, _, run string, _ map[string]string) bool { return strings.Contains(run, "make release-check") })
	publish := first(func(_, uses, run string, with map[string]string) bool {
		return with["push"] == "true" || strings.Contains(run, "git push") || strings.Contains(run, "release-tags.sh") ||
			strings.Contains(run, "gh release") || strings.Contains(uses, "login-action")
	})
	// The tags move with the script TestReleaseTagsMoveForwardOnly runs,
	// on the release commit (after release-pin).
	tags := first(func(_, _, run string, _ map[string]string) bool {
		return strings.Contains(run, `hack/release-tags.sh "$GITHUB_REF_NAME"`)
	})
	pin := first(func(_, _, run string, _ map[string]string) bool { return strings.Contains(run, "./cmd/release-pin") })
	if tags < 0 || pin < 0 || tags < pin || (tags == pin && strings.Index(rel.Steps[tags].Run, "release-tags.sh") < strings.Index(rel.Steps[tags].Run, "git commit")) {
		t.Errorf("the release job does not run hack/release-tags.sh on the release commit (step %d, release-pin at %d)", tags, pin)
	}
	switch {
	case smokeImage < 0:
		t.Error("the release job never runs the image (version, build of examples/)")
	case checkFiles < 0:
		t.Error("the release job never runs make release-check")
	case publish < 0:
		t.Error("the release job publishes nothing: the rule checks nothing")
	case publish < smokeImage || publish < checkFiles:
		t.Errorf("step %d (%s) publishes before the image is run (step %d) and the release files are checked (step %d)",
			publish, rel.Steps[publish].Name, smokeImage, checkFiles)
	}
	for i, s := range rel.Steps[:max(smokeImage, 0)] {
		if strings.Contains(s.Uses, "build-push-action") && s.With["load"] != "true" {
			t.Errorf("step %d builds the image without loading it to run it first", i)
		}
	}
}
