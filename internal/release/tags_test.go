package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The release's tag step (hack/release-tags.sh, as release.yml runs it on
// the release commit) moves vX.Y and vX to each release of their line,
// forward only; a prerelease moves none. Run against a local remote.
func TestReleaseTagsMoveForwardOnly(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("../../hack/release-tags.sh")
	if err != nil {
		t.Fatal(err)
	}
	remote := t.TempDir()
	git(t, remote, "init", "--bare", "-q")
	work := t.TempDir()
	git(t, work, "init", "-q")
	git(t, work, "remote", "add", "origin", remote)
	commit := func(msg string) string {
		t.Helper()
		git(t, work, "commit", "-q", "--allow-empty", "-m", msg)
		return git(t, work, "rev-parse", "HEAD")
	}
	release := func(tag string) {
		t.Helper()
		cmd := exec.Command("bash", script, tag)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("release-tags.sh %s: %v\n%s", tag, err, out)
		}
	}
	// tags is what the remote's tags point at (commits, annotated tags
	// peeled).
	tags := func() map[string]string {
		t.Helper()
		out := git(t, work, "ls-remote", "--tags", "origin")
		m := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			sha, ref, ok := strings.Cut(l, "\t")
			if !ok {
				continue
			}
			name := strings.TrimPrefix(ref, "refs/tags/")
			if peeled, ok := strings.CutSuffix(name, "^{}"); ok {
				m[peeled] = sha
			} else if _, seen := m[name]; !seen {
				m[name] = sha
			}
		}
		return m
	}
	check := func(step string, want map[string]string) {
		t.Helper()
		got := tags()
		for tag, sha := range want {
			if got[tag] != sha {
				t.Errorf("%s: %s at %.7s, want %.7s", step, tag, got[tag], sha)
			}
		}
	}

	a := commit("release v1.0.0")
	release("v1.0.0")
	check("v1.0.0", map[string]string{"v1.0.0": a, "v1.0": a, "v1": a})

	b := commit("release v1.1.0")
	release("v1.1.0")
	check("v1.1.0", map[string]string{"v1.1.0": b, "v1.1": b, "v1": b, "v1.0": a})

	// A patch of the older line moves that line only.
	git(t, work, "checkout", "-q", a)
	c := commit("release v1.0.1")
	release("v1.0.1")
	check("v1.0.1", map[string]string{"v1.0.1": c, "v1.0": c, "v1": b, "v1.1": b})

	// A prerelease moves nothing but its own tag.
	git(t, work, "checkout", "-q", b)
	d := commit("release v1.2.0-rc.1")
	release("v1.2.0-rc.1")
	check("v1.2.0-rc.1", map[string]string{"v1.2.0-rc.1": d, "v1": b})
	if _, ok := tags()["v1.2"]; ok {
		t.Error("a prerelease made v1.2")
	}

	// Release 10 of a line sorts after 9, not after 1.
	for _, v := range []string{"v1.9.0", "v1.10.0"} {
		commit("release " + v)
		release(v)
	}
	e := git(t, work, "rev-parse", "HEAD")
	check("v1.10.0", map[string]string{"v1": e, "v1.10": e})

	// A new major leaves the old one alone.
	f := commit("release v2.0.0")
	release("v2.0.0")
	check("v2.0.0", map[string]string{"v2": f, "v2.0": f, "v1": e})
}
