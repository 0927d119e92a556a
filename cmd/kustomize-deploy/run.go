package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/kustomize-deploy/kustomize-deploy/action"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/version"
)

// Exit codes: 0 success, 1 the operation failed, 2 the command line was wrong.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func usage() string {
	var b strings.Builder
	b.WriteString("Usage: kustomize-deploy <command> [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-8s  %s\n", c.name, c.summary)
	}
	b.WriteString("  action    run as a GitHub Action step (inputs from INPUT_* variables; see action.yml)\n")
	b.WriteString("  version   print the version, commit and Go version of this build\n")
	b.WriteString("\nRun 'kustomize-deploy <command> -h' for the flags of a command.\n")
	return b.String()
}

func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runWith(ctx, args, &env{stdout: stdout, stderr: stderr, getenv: os.Getenv, masker: mask.New()})
}

func runWith(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage())
		return exitUsage
	}
	switch args[0] {
	case "version":
		return runVersion(args[1:], e.stdout, e.stderr)
	case "action":
		// Inside a GitHub Actions step: everything comes from the runner's
		// environment (see action.yml).
		return action.Run(ctx, action.Env{Getenv: e.getenv, Stdout: e.stdout})
	case "-h", "-help", "--help", "help":
		fmt.Fprint(e.stdout, usage())
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return runCommand(ctx, c, args[1:], e)
		}
	}
	fmt.Fprintf(e.stderr, "kustomize-deploy: unknown command %q\n\n%s", args[0], usage())
	return exitUsage
}

// runCommand parses flags and runs c with every output stream masked, so no
// decrypted value reaches the terminal or a CI log.
func runCommand(ctx context.Context, c command, args []string, e *env) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	// Defaults for flags a command does not register (build has no --validation).
	f := &flags{validation: string(result.ValidationServer), output: "text", timeout: pipeline.DefaultOptions().Timeout, prune: true, wait: true, awsKMS: true}
	c.setup(f, fs)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: kustomize-deploy %s [flags]\n\n%s.\n\nFlags:\n", c.name, c.summary)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "kustomize-deploy %s: unexpected arguments %q\n", c.name, fs.Args())
		return exitUsage
	}
	stdout, stderr := e.masker.Writer(e.stdout), e.masker.Writer(e.stderr)
	defer stdout.Flush()
	defer stderr.Flush()
	masked := &env{stdout: stdout, stderr: stderr, getenv: e.getenv, masker: e.masker}
	if path := e.getenv(countRequestsEnv); path != "" {
		masked.requests = &kube.RequestCounter{}
		defer writeRequestCount(path, masked.requests, stderr)
	}
	if path := e.getenv(cpuProfileEnv); path != "" {
		stop, err := startCPUProfile(path)
		if err != nil {
			fmt.Fprintf(stderr, "kustomize-deploy: %s: %v\n", cpuProfileEnv, err)
		} else {
			defer stop()
		}
	}
	err := c.run(ctx, f, masked)
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "kustomize-deploy %s: %v\n", c.name, err)
		return exitUsage
	case errors.Is(err, errReported):
		return exitFail
	default:
		fmt.Fprintf(stderr, "kustomize-deploy %s: %v\n", c.name, err)
		return exitFail
	}
}

// countRequestsEnv, when set, names a file that receives the API requests
// the command sent, counted by method, as JSON (kube.RequestCount) when it
// ends; make bench reads it.
const countRequestsEnv = "KUSTOMIZE_DEPLOY_COUNT_REQUESTS"

// cpuProfileEnv, when set, names a file that receives a CPU profile of the
// command (go tool pprof reads it), to see what bounds a slow run.
const cpuProfileEnv = "KUSTOMIZE_DEPLOY_CPUPROFILE"

func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func writeRequestCount(path string, c *kube.RequestCounter, stderr io.Writer) {
	data, err := json.Marshal(c.Count())
	if err == nil {
		err = os.WriteFile(path, append(data, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "kustomize-deploy: writing the request count (%s): %v\n", countRequestsEnv, err)
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
