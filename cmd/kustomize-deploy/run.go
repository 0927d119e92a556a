package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/kustomize-deploy/kustomize-deploy/internal/version"
)

// Exit codes: 0 success, 1 the operation failed, 2 the command line was wrong.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

const usage = `Usage: kustomize-deploy <command> [flags]

Commands:
  version   print the version, commit and Go version of this build

Run 'kustomize-deploy <command> -h' for the flags of a command.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "version":
		return runVersion(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "kustomize-deploy: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	output := fs.String("output", "text", "output format: text or json")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	info := version.Get()
	switch *output {
	case "text":
		fmt.Fprintln(stdout, info)
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(info); err != nil {
			fmt.Fprintf(stderr, "kustomize-deploy: %v\n", err)
			return exitFail
		}
	default:
		fmt.Fprintf(stderr, "kustomize-deploy version: --output must be text or json, not %q\n", *output)
		return exitUsage
	}
	return exitOK
}
