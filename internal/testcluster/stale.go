package testcluster

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

const (
	tempDirPrefix = "kd-testcluster-"
	ownerFile     = "owner.pid"
)

// sweepStaleDirs removes temporary cluster directories whose owning process
// is gone: a test binary killed hard (its children die with it through
// Pdeathsig) cannot clean up after itself, so the next start does.
func sweepStaleDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempDirPrefix+"*"))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(dir)
		}
	}
}
