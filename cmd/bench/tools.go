package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// Tool names, in the order they run and appear in the report.
const (
	toolKubectl = "kubectl"
	toolKapp    = "kapp"
	toolOurs    = "kustomize-deploy"
)

// countRequestsEnv makes kustomize-deploy write its API request count to a
// file (see cmd/kustomize-deploy).
const countRequestsEnv = "KUSTOMIZE_DEPLOY_COUNT_REQUESTS"

// tool knows the command lines of one deployer. Every tool runs as a
// subprocess with its own defaults (client rate limits included), as users
// get it; only the flags needed to run unattended, prune and use the bench
// cluster are set.
type tool struct {
	name string
	bin  string
	// apply and diff return the arguments for deploying dir as suite.
	apply, diff func(suite, dir string) []string
	// diffOK says whether an exit code of diff is success (kubectl diff
	// exits 1 when it finds differences).
	diffOK func(code int) bool
	// counts is true for kustomize-deploy, which can count its requests.
	counts bool
	// env is added to the tool's environment.
	env []string
	// needsNamespace: the suite's Namespace must exist before the first
	// deploy (created untimed).
	needsNamespace bool
	// keepStdout keeps what the command prints on stdout in the
	// measurement (it goes to the log as well).
	keepStdout bool
}

// kubectlTool prunes with an ApplySet whose parent is a Secret in the
// suite's Namespace: classic `--prune -l` refuses objects created by
// server-side apply. ApplySets are still alpha in kubectl 1.37
// (KUBECTL_APPLYSET=true), and the parent is written before any object, so
// the Namespace must exist first. kubectl diff has no --applyset: it shows
// the ApplySet label as a difference (and exits 1), as it does for users.
func kubectlTool(bin, kubeconfig string) tool {
	apply := func(suite, dir string) []string {
		return []string{"apply", "--server-side", "--kubeconfig", kubeconfig, "-n", suite, "-f", dir,
			"--prune", "--applyset=" + suite}
	}
	diff := func(suite, dir string) []string {
		return []string{"diff", "--server-side", "--kubeconfig", kubeconfig, "-n", suite, "-f", dir}
	}
	return tool{
		name: toolKubectl, bin: bin, apply: apply, diff: diff,
		diffOK:         func(code int) bool { return code == 0 || code == 1 },
		env:            []string{"KUBECTL_APPLYSET=true"},
		needsNamespace: true,
	}
}

func kappTool(bin, kubeconfig string) tool {
	base := func(suite, dir string) []string {
		// The app record lives in default: the suite's Namespace is one of
		// the objects deployed.
		return []string{"deploy", "--kubeconfig", kubeconfig, "-n", "default", "-a", suite, "-f", dir}
	}
	apply := func(suite, dir string) []string { return append(base(suite, dir), "--yes") }
	diff := func(suite, dir string) []string { return append(base(suite, dir), "--diff-run") }
	return tool{name: toolKapp, bin: bin, apply: apply, diff: diff, diffOK: func(code int) bool { return code == 0 }}
}

func oursTool(bin, kubeconfig string, wait bool) tool {
	base := func(cmd, suite, dir string) []string {
		return []string{cmd, "--kubeconfig", kubeconfig, "--inventory-namespace", "default", "--name", suite, "--path", dir}
	}
	return tool{
		name: toolOurs,
		bin:  bin,
		// diff waits for nothing, and has no --wait.
		apply: func(suite, dir string) []string {
			return append(base("apply", suite, dir), fmt.Sprintf("--wait=%t", wait))
		},
		diff:   func(suite, dir string) []string { return base("diff", suite, dir) },
		diffOK: func(code int) bool { return code == 0 },
		counts: true,
	}
}

// oursConfigTool runs a directory of Flux Kustomizations as many units
// (apply --config); its second result gives the arguments for the
// configuration in dir of the repository at root. Wait, prune and timeout
// are each Kustomization's own (--wait is refused with --config). The JSON
// result gives every unit's start and duration.
func oursConfigTool(bin, kubeconfig string) (tool, func(root, dir string) []string) {
	apply := func(root, dir string) []string {
		return []string{"apply", "--config", dir, "--root", root, "--kubeconfig", kubeconfig,
			"--inventory-namespace", "default", "--output", "json"}
	}
	return tool{name: toolOurs, bin: bin, counts: true, keepStdout: true}, apply
}

// measurement is one command's cost.
type measurement struct {
	Wall time.Duration
	// RolledOut, for the bare creates, is the time until the Deployments
	// they created were rolled out as well (0 for the tools' runs).
	RolledOut time.Duration
	// MaxRSS is the peak resident set size of the process, in bytes.
	MaxRSS int64
	// CPU is the process's user and system time: on a loaded machine,
	// steadier than its wall time.
	CPU time.Duration
	// Requests is what kustomize-deploy counted; nil for other tools.
	Requests *kube.RequestCount
	// Phases are kustomize-deploy's steps, from its progress lines.
	Phases []phase
	// Err is set when the command failed; the measurement is still shown.
	Err error
	// Stdout is what the command printed there, for tools that keep it.
	Stdout []byte
}

// phase is a step of a kustomize-deploy run and when it started.
type phase struct {
	Name  string
	Start time.Duration
}

// phaseMarkers map the start of kustomize-deploy's progress lines
// (internal/pipeline) to the step they begin.
var phaseMarkers = []struct{ prefix, phase string }{
	{"building ", "build"},
	{"checking ", "validate"},
	{"validating ", "validate"},
	{"dry-running ", "validate"},
	{"applying ", "apply"},
	{"pruning ", "prune"},
	{"waiting up to ", "wait"},
}

// stampWriter prefixes every line written to w with the time since start,
// so the logs show where a run spends its time, and notes when each of
// kustomize-deploy's steps began.
type stampWriter struct {
	w      io.Writer
	start  time.Time
	mu     sync.Mutex
	midLn  bool
	phases []phase
}

func (s *stampWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		line, rest, found := bytes.Cut(p, []byte("\n"))
		if !s.midLn {
			at := time.Since(s.start)
			fmt.Fprintf(s.w, "[%8.3fs] ", at.Seconds())
			for _, m := range phaseMarkers {
				if bytes.HasPrefix(line, []byte(m.prefix)) {
					s.phases = append(s.phases, phase{Name: m.phase, Start: at})
				}
			}
		}
		if _, err := s.w.Write(line); err != nil {
			return 0, err
		}
		if !found {
			s.midLn = true
			break
		}
		if _, err := io.WriteString(s.w, "\n"); err != nil {
			return 0, err
		}
		s.midLn = false
		p = rest
	}
	return n, nil
}

// measure runs bin with args, its output going to logPath, and returns its
// wall time and peak RSS (from the child's rusage).
func measure(ctx context.Context, t tool, args []string, ok func(int) bool, home, logPath string, timeout time.Duration) measurement {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	logFile, err := os.Create(logPath)
	if err != nil {
		return measurement{Err: err}
	}
	defer logFile.Close()
	// Buffered: a command's output (a configuration's JSON result is
	// tens of thousands of lines) is read as fast as it is written, so
	// that the time measured is the command's, not the log's writes.
	log := bufio.NewWriterSize(logFile, 1<<20)
	defer log.Flush()
	fmt.Fprintf(log, "$ %s %s\n", t.bin, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, t.bin, args...)
	out := &stampWriter{w: log}
	cmd.Stdout, cmd.Stderr = out, out
	var stdout bytes.Buffer
	if t.keepStdout {
		cmd.Stdout = io.MultiWriter(out, &stdout)
	}
	// Nothing from the developer's environment may steer the tools (a
	// KUBECONFIG, kubectl's discovery cache, a kapp config): only what they
	// need to run. HOME is shared by every run, so kubectl keeps its
	// discovery cache between runs as it does for a user.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C"}
	cmd.Env = append(cmd.Env, t.env...)
	countFile := logPath + ".requests.json"
	if t.counts {
		cmd.Env = append(cmd.Env, countRequestsEnv+"="+countFile)
	}
	start := time.Now()
	out.start = start
	err = cmd.Run()
	m := measurement{Wall: time.Since(start), Phases: out.phases}
	if t.keepStdout {
		m.Stdout = stdout.Bytes()
	}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			m.MaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
			m.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		m.Err = fmt.Errorf("timed out after %s (see %s)", timeout, logPath)
	case errors.As(err, &exit) && ok(exit.ExitCode()):
	case err != nil:
		m.Err = fmt.Errorf("%v (see %s)", err, logPath)
	}
	if t.counts {
		if data, err := os.ReadFile(countFile); err == nil {
			var rc kube.RequestCount
			if json.Unmarshal(data, &rc) == nil {
				m.Requests = &rc
			}
		}
	}
	return m
}
