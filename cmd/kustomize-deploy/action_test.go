package main

import (
	"path/filepath"
	"testing"
)

// The action's temp files (a kubeconfig from the input, the PR base's
// worktree) go to RUNNER_TEMP when the binary can see it: the runner
// empties it when the job ends.
func TestActionTempDirIsTheRunners(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, file, "")
	for value, want := range map[string]string{
		dir:                        dir,
		"":                         "",
		"/home/runner/work/_temp":  "", // given to a container that does not have it
		file:                       "",
		filepath.Join(dir, "gone"): "",
	} {
		if got := runnerTemp(func(k string) string { return map[string]string{"RUNNER_TEMP": value}[k] }); got != want {
			t.Errorf("RUNNER_TEMP=%q: temp dir %q, want %q", value, got, want)
		}
	}
}
