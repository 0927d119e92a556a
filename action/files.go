package action

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// The runner's file commands (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) are
// written here rather than through go-githubactions, which panics when
// the variable is unset or the file cannot be written, and uses one fixed
// heredoc delimiter that a value could contain. A file we cannot write is
// a warning: the run's result must not depend on it.

// fileCommands writes the runner's file commands, each file found
// through getenv.
type fileCommands struct {
	getenv func(string) string
	gha    *githubactions.Action
	// warned records the files already reported unwritable.
	warned map[string]bool
}

// setOutput appends name=value to GITHUB_OUTPUT.
func (f *fileCommands) setOutput(name, value string) {
	delim := delimiter(value)
	f.append("GITHUB_OUTPUT", "step outputs", fmt.Sprintf("%s<<%s\n%s\n%s\n", name, delim, value, delim))
}

// addSummary appends markdown to GITHUB_STEP_SUMMARY.
func (f *fileCommands) addSummary(markdown string) {
	f.append("GITHUB_STEP_SUMMARY", "the job summary", markdown+"\n")
}

// append appends data to the file the runner names in the variable env.
// Each missing or unwritable file is reported once.
func (f *fileCommands) append(env, what, data string) {
	path := f.getenv(env)
	err := appendFile(path, data)
	if err == nil || f.warned[env] {
		return
	}
	if f.warned == nil {
		f.warned = map[string]bool{}
	}
	f.warned[env] = true
	if path == "" {
		f.gha.Warningf("%s is not set: %s are not written (not running in GitHub Actions?)", env, what)
		return
	}
	f.gha.Warningf("%s: %s are not written: %v", env, what, err)
}

func appendFile(path, data string) error {
	if path == "" {
		return os.ErrNotExist
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// delimiter is a heredoc delimiter that does not occur in value, random as
// the runner's own toolkit makes them.
func delimiter(value string) string {
	for {
		b := make([]byte, 16)
		_, _ = rand.Read(b) // never fails
		d := "ghadelimiter_" + hex.EncodeToString(b)
		if !strings.Contains(value, d) {
			return d
		}
	}
}
