package health

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// startProgress writes a line about what is still not ready to w every
// interval. The poller reports changes only, so progress runs on its own
// clock. stop ends it and returns only once the goroutine has exited, so
// nothing reaches w after the caller has moved on.
func startProgress(w io.Writer, every time.Duration, total int, waiting func() []string) (stop func()) {
	start := time.Now()
	tick := time.NewTicker(every)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				if line := progressLine(waiting(), total, time.Since(start)); line != "" {
					io.WriteString(w, line)
				}
			}
		}
	})
	return func() {
		close(quit)
		wg.Wait()
		tick.Stop()
	}
}

// progressLine says which of total objects are still waited for, the
// first five by name; "" when none is.
func progressLine(waiting []string, total int, elapsed time.Duration) string {
	if len(waiting) == 0 {
		return ""
	}
	w := append([]string(nil), waiting...)
	sort.Strings(w)
	n := len(w)
	if n > 5 {
		w = append(w[:5], fmt.Sprintf("and %d more", n-5))
	}
	return fmt.Sprintf("waiting for %d of %d object(s) to become ready (%s): %s\n",
		n, total, elapsed.Round(time.Second), strings.Join(w, ", "))
}
