package pipeline

import (
	"context"
	"fmt"
)

// interruptible runs step, which does not stop halfway when ctx ends
// (kustomize's build of a large unit takes seconds), and returns as soon
// as either is done: a cancelled run records what it did and releases its
// lock at once, not when the step would have ended. A step left behind
// runs on until it ends, its result dropped; what it reads may be removed
// under it meanwhile (its scratch copy), which only ends it sooner.
func interruptible[T any](ctx context.Context, step func() (T, error)) (T, error) {
	type outcome struct {
		v   T
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		v, err := step()
		done <- outcome{v, err}
	}()
	select {
	case o := <-done:
		return o.v, o.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("stopped while building: %w", context.Cause(ctx))
	}
}
