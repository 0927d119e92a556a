package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/kustomize-deploy/kustomize-deploy/action"
)

func newActionCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "action",
		Short: "Run as a GitHub Action step (inputs from INPUT_* variables; see action.yml)",
		Long: `Action is what the GitHub Action runs: it reads the step's inputs (INPUT_*
variables) and the event (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, ...), runs the
unit in the mode the event calls for, and reports through step outputs, the
job summary, a sticky pull request comment and a commit status. Set the same
variables to reproduce a workflow run locally.`,
		Example: `  INPUT_PATH=clusters/prod/app INPUT_MODE=diff GITHUB_EVENT_NAME=workflow_dispatch \
    GITHUB_OUTPUT=/tmp/out GITHUB_STEP_SUMMARY=/tmp/summary kustomize-deploy action`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The action masks its own output, and must print its
			// ::add-mask:: commands as they are.
			env := action.Env{Getenv: e.getenv, Stdout: e.raw, TempDir: runnerTemp(e.getenv), Requests: e.requests}
			if code := action.Run(cmd.Context(), env); code != exitOK {
				return exitStatus(code)
			}
			return nil
		},
	}
}

// runnerTemp is the job's temp dir, RUNNER_TEMP, when this process can
// see it (the Action runs on the runner): the runner empties it when the
// job ends, however the process ended, so a kubeconfig written from an
// input never outlives the job, even on a self-hosted runner. Else ""
// (the system's temp dir): a container on an older runner is given the
// variable without the directory.
func runnerTemp(getenv func(string) string) string {
	dir := getenv("RUNNER_TEMP")
	if dir == "" {
		return ""
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}
