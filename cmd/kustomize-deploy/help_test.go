package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
)

// writeOnly are the flags only a run that writes honours: waiting, the
// lock, dependencies, the revision guard, Helm release records.
var writeOnly = []string{"depends-on", "wait", "health-check", "allow-rollback", "lock-timeout", "wait-for-dependencies", "remove-helm-release-records"}

// Each command's --help lists the flags it honours, no others: a diff
// writes nothing, so it neither locks, waits, checks dependencies, guards
// the revision order nor removes Helm records; a build reaches no cluster
// at all. Those flags are usage errors there, not silently ignored.
func TestHelpListsOnlyWhatTheCommandHonours(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }, masker: mask.New()}
	root := newRootCommand(e)
	flagsOf := func(name string) []string {
		cmd, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { out = append(out, f.Name) })
		return out
	}
	for cmd, want := range map[string]struct{ has, lacks []string }{
		"apply": {has: writeOnly},
		"drift": {has: writeOnly}, // --correct applies
		"diff":  {has: []string{"prune", "max-prune", "protect", "validation", "service-account", "timeout", "base", "offline"}, lacks: writeOnly},
		"build": {has: []string{"path", "image", "substitute", "helm-controller"}, lacks: append([]string{"kubeconfig", "namespace", "validation", "prune", "timeout", "service-account"}, writeOnly...)},
	} {
		got := flagsOf(cmd)
		for _, f := range want.has {
			if !slices.Contains(got, f) {
				t.Errorf("%s --help lacks --%s, which it honours", cmd, f)
			}
		}
		for _, f := range want.lacks {
			if slices.Contains(got, f) {
				t.Errorf("%s --help lists --%s, which it does not honour", cmd, f)
			}
		}
	}
	c := &cli{t: t, env: map[string]string{}}
	for _, args := range [][]string{
		{"diff", "--name", "x", "--path", "testdata/plain", "--wait=false"},
		{"diff", "--name", "x", "--path", "testdata/plain", "--lock-timeout", "1m"},
		{"build", "--path", "testdata/plain", "--remove-helm-release-records"},
	} {
		o := c.runAsIs(args...)
		flag := ""
		for _, a := range args {
			if strings.HasPrefix(a, "--") {
				flag, _, _ = strings.Cut(a, "=")
			}
		}
		if o.code != exitUsage || !strings.Contains(o.stderr, "unknown flag: "+flag) {
			t.Errorf("%q: exit %d, stderr %q: want a usage error naming the flag", args, o.code, o.stderr)
		}
	}
}
