package pipeline

import (
	"context"
	"errors"
	"testing"
)

// A step that does not stop when its context ends is not waited for: the
// caller gets the cancellation's cause at once; one that ends first gives
// its own result.
func TestInterruptible(t *testing.T) {
	t.Parallel()
	v, err := interruptible(t.Context(), func() (int, error) { return 7, nil })
	if v != 7 || err != nil {
		t.Errorf("a step that ends: %d %v", v, err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	stopped := errors.New("stopped by interrupt")
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	go func() { <-started; cancel(stopped) }()
	_, err = interruptible(ctx, func() (int, error) {
		close(started)
		<-release // a build that does not look at ctx
		return 0, nil
	})
	if !errors.Is(err, stopped) {
		t.Errorf("a step left behind: %v, want the cause", err)
	}
}
