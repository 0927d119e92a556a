package health

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestProgressLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		waiting []string
		total   int
		elapsed time.Duration
		want    string
	}{
		{name: "nothing waited for", total: 3, elapsed: 5 * time.Second, want: ""},
		{
			name:    "sorted, elapsed rounded to the second",
			waiting: []string{"Deployment/ns/web (InProgress)", "Deployment/ns/api (InProgress)"},
			total:   4, elapsed: 5*time.Second + 600*time.Millisecond,
			want: "waiting for 2 of 4 object(s) to become ready (6s): Deployment/ns/api (InProgress), Deployment/ns/web (InProgress)\n",
		},
		{
			name:    "five named, the rest counted",
			waiting: []string{"g", "f", "e", "d", "c", "b", "a"},
			total:   9, elapsed: time.Minute,
			want: "waiting for 7 of 9 object(s) to become ready (1m0s): a, b, c, d, e, and 2 more\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := progressLine(tc.waiting, tc.total, tc.elapsed); got != tc.want {
				t.Errorf("progressLine() = %q, want %q", got, tc.want)
			}
		})
	}
}

// syncBuffer is a writer the progress goroutine and the test can share.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// On synctest's fake clock: one line per interval while something is
// waited for, none while nothing is, and none once stopped.
func TestProgressEveryInterval(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var out syncBuffer
		var mu sync.Mutex
		waiting := []string{"Pod/ns/web (InProgress)"}
		stop := startProgress(&out, 5*time.Second, 2, func() []string {
			mu.Lock()
			defer mu.Unlock()
			return waiting
		})
		time.Sleep(11 * time.Second) // ticks at 5s and 10s
		synctest.Wait()
		mu.Lock()
		waiting = nil
		mu.Unlock()
		time.Sleep(5 * time.Second) // tick at 15s: nothing to say
		synctest.Wait()
		stop()
		time.Sleep(time.Minute) // no ticks after stop
		synctest.Wait()

		want := "waiting for 1 of 2 object(s) to become ready (5s): Pod/ns/web (InProgress)\n" +
			"waiting for 1 of 2 object(s) to become ready (10s): Pod/ns/web (InProgress)\n"
		if got := out.String(); got != want {
			t.Errorf("progress written:\n%s\nwant:\n%s", got, want)
		}
	})
}

// blockingWriter holds every Write until release is closed.
type blockingWriter struct {
	started chan struct{} // closed when the first Write begins
	release chan struct{}
	once    sync.Once
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.started) })
	<-w.release
	return len(p), nil
}

// Wait used to return while its progress goroutine could still be writing;
// stop must not return before a line being written is done.
func TestProgressStopWaitsForTheWriteInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := &blockingWriter{started: make(chan struct{}), release: make(chan struct{})}
		stop := startProgress(w, time.Second, 1, func() []string { return []string{"x"} })
		<-w.started // the goroutine is inside Write now

		stopped := make(chan struct{})
		go func() {
			stop()
			close(stopped)
		}()
		synctest.Wait() // everything in the bubble is blocked or done
		select {
		case <-stopped:
			t.Error("stop returned while the progress goroutine was still writing")
		default:
		}
		close(w.release)
		<-stopped
	})
}
