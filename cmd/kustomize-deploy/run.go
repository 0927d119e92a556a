package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

// Exit codes: 0 success, 1 the operation failed, 2 the command line was wrong.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// env is what a command sees of the world; tests replace it.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	masker         *mask.Masker
	// requests counts API requests: what tells, when a signal comes,
	// whether the run wrote anything; and written out when
	// KUSTOMIZE_DEPLOY_COUNT_REQUESTS is set (make bench). Nil in tests
	// that do not count.
	requests *kube.RequestCounter
	// cloud reaches the clouds' token, cluster and key services (Google,
	// Azure, Vault); nil means each client's default. Tests set it.
	cloud *http.Client
	// sigstore is the trust keyless signatures are verified against
	// (zero: Sigstore's public good); tests give their own.
	sigstore ocisource.Sigstore
	// raw is the unmasked stdout, for the action, which masks on its own
	// (and must print ::add-mask:: commands unmasked), and for output
	// masked by where values came from (see plain).
	raw io.Writer
}

// plain is stdout for what is masked already, by where values came from:
// results whose texts were masked by value (MaskTexts) and whose diffs
// show Git's text as it is, and rendered objects. Masking them by value
// again would hide every word a secret also holds. What went to stdout
// before is flushed first, so the output keeps its order.
func (e *env) plain() io.Writer {
	if f, ok := e.stdout.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
	if e.raw == nil {
		return e.stdout
	}
	return e.raw
}

func run(args []string, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	requests := &kube.RequestCounter{}
	// Nothing to record while nothing was written to a cluster (no lock
	// taken either); the action reports to GitHub on its way out, and
	// keeps the grace whatever it wrote.
	idle := func() bool { return !requests.Wrote() && (len(args) == 0 || args[0] != "action") }
	ctx, done := onSignals(context.Background(), sigs, stderr, os.Exit, stopGrace, idle)
	defer done()
	return runWith(ctx, args, &env{stdout: stdout, stderr: stderr, getenv: os.Getenv, masker: mask.New(), requests: requests})
}

// stopGrace is how long a run may take to stop after SIGINT or SIGTERM
// (GitHub cancels a job with SIGINT, then SIGTERM); idleGrace, one that
// has written nothing and holds no lock: it has nothing to record, and
// waits for nothing but its own cleanup (a build of a large unit, which
// does not stop halfway, would hold it for seconds).
const (
	stopGrace = 10 * time.Second
	idleGrace = 500 * time.Millisecond
)

// exitSignalled is the exit code of a run ended by a signal (as a shell's
// 128+SIGINT).
const exitSignalled = 130

// onSignals returns a context that the first signal on sigs cancels: the
// run stops starting writes and ends with what it has done recorded (the
// inventory holds every object it may have written before any write) and
// its lock released. A second signal, or grace passing first, exits at
// once through exit; so does idleGrace passing while idle says the run
// has written nothing (nil: never idle). done ends the watch when the run
// returns.
func onSignals(parent context.Context, sigs <-chan os.Signal, stderr io.Writer, exit func(int), grace time.Duration, idle func() bool) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	finished := make(chan struct{})
	go func() {
		var sig os.Signal
		select {
		case sig = <-sigs:
		case <-finished:
			return
		}
		quiet := idle != nil && idle()
		if quiet {
			fmt.Fprintf(stderr, "kustomize-deploy: %v: stopping: nothing was written, nothing to record\n", sig)
		} else {
			fmt.Fprintf(stderr, "kustomize-deploy: %v: stopping: no new writes; what was done is being recorded and the lock released (a second signal exits at once)\n", sig)
		}
		cancel(fmt.Errorf("stopped by %v", sig))
		wait := grace
		if quiet {
			wait = min(idleGrace, grace)
		}
		timer := time.NewTimer(wait)
		defer timer.Stop()
		for {
			select {
			case <-finished:
				return
			case sig = <-sigs:
				fmt.Fprintf(stderr, "kustomize-deploy: %v again: exiting now; a lock left held expires on its own\n", sig)
				exit(exitSignalled)
				return
			case <-timer.C:
				if quiet && !idle() {
					// A write was under way: give it the whole grace.
					quiet = false
					timer.Reset(grace - wait)
					continue
				}
				if quiet {
					fmt.Fprintln(stderr, "kustomize-deploy: exiting now: nothing was written")
				} else {
					fmt.Fprintf(stderr, "kustomize-deploy: did not stop within %s: exiting now; a lock left held expires on its own\n", grace)
				}
				exit(exitSignalled)
				return
			}
		}
	}()
	return ctx, func() {
		close(finished)
		cancel(nil)
	}
}

// runWith runs the command line with every output stream masked, so no
// decrypted value reaches the terminal or a CI log, and maps the outcome
// to an exit code.
func runWith(ctx context.Context, args []string, e *env) int {
	stdout, stderr := e.masker.Writer(e.stdout), e.masker.Writer(e.stderr)
	defer stdout.Flush()
	defer stderr.Flush()
	masked := &env{stdout: stdout, stderr: stderr, getenv: e.getenv, masker: e.masker, raw: e.stdout, cloud: e.cloud, sigstore: e.sigstore, requests: e.requests}
	if path := e.getenv(countRequestsEnv); path != "" {
		if masked.requests == nil {
			masked.requests = &kube.RequestCounter{}
		}
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

	root := newRootCommand(masked)
	if flag := oldStyleFlag(root, args); flag != "" {
		fmt.Fprintf(stderr, "kustomize-deploy: long flags take two dashes: %s\n", flag)
		return exitUsage
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	var status exitStatus
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &status):
		return int(status)
	case errors.Is(err, errReported):
		return exitFail
	case isUsage(err):
		fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for usage.\n", cmd.CommandPath(), err, cmd.CommandPath())
		return exitUsage
	default:
		fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), err)
		if hint := fixHint(err); hint != "" {
			fmt.Fprintln(stderr, "hint: "+hint)
		}
		return exitFail
	}
}

// usageError is a command-line mistake: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// isUsage reports whether err is a command-line mistake: ours, or cobra's
// own (an unknown command; flag errors go through flagError).
func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command ")
}

// exitStatus ends the program with its code, the outcome having been
// reported already (the action does its own reporting).
type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// errReported marks a failure whose result was already printed.
var errReported = errors.New("reported")

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
