package testcluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one control-plane binary running in its own process group, with
// its output in a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // set when done is closed
}

// spawner starts every child from one OS thread that never exits. Children get
// Pdeathsig=SIGKILL, which the kernel sends when the *thread* that started them
// dies; pinning that thread for the life of the process means a test binary
// that panics, times out or is killed takes its cluster with it.
var spawner = sync.OnceValue(func() chan func() {
	ch := make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the process
		for f := range ch {
			f()
		}
	}()
	return ch
})

func startProcess(name, bin string, args []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), "GOTRACEBACK=all")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

	started := make(chan error, 1)
	spawner() <- func() { started <- cmd.Start() }
	if err := <-started; err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		if p.err == nil {
			return true, fmt.Errorf("%s exited", p.name)
		}
		return true, fmt.Errorf("%s exited: %w", p.name, p.err)
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, then SIGKILL if it has not ended
// within grace. It returns once the process has been reaped.
func (p *process) stop(grace time.Duration) {
	if ok, _ := p.exited(); ok {
		killGroup(p.cmd.Process.Pid, syscall.SIGKILL) // leftovers of the group, if any
		return
	}
	killGroup(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		killGroup(p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	killGroup(p.cmd.Process.Pid, syscall.SIGKILL)
}

func killGroup(pid int, sig syscall.Signal) {
	if err := syscall.Kill(-pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = syscall.Kill(pid, sig)
	}
}

// logTail returns the last n lines of the process's log, for error messages.
func (p *process) logTail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    ")
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.String()
}
