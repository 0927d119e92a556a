// Package lock keeps two runs from writing one unit at once: a
// coordination.k8s.io Lease per unit, next to its inventory, held and
// renewed while a run applies, prunes or deletes. A second run waits for
// it; a crashed holder's lease expires and is taken over.
package lock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultWait is how long a run waits for another run of the same unit
// unless told otherwise.
const DefaultWait = 5 * time.Minute

// Options tune Acquire.
type Options struct {
	// Holder says who holds the lock, for whoever waits for it: a
	// workflow run's URL, or user@host and process id; empty means the
	// process id and host.
	Holder string
	// Wait bounds how long Acquire waits for another holder; 0 means
	// DefaultWait.
	Wait time.Duration
	// Duration is how long the lease lasts without renewal (a crashed
	// holder's lease expires after it); 0 means 60s. It is renewed every
	// third of it.
	Duration time.Duration
	// Poll is how often a waiting run looks again; 0 means 1s.
	Poll time.Duration
	// Progress receives a line every ProgressEvery (0: 10s) while waiting.
	Progress      io.Writer
	ProgressEvery time.Duration
}

func (o Options) withDefaults() Options {
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = fmt.Sprintf("pid %d on %s", os.Getpid(), host)
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.Duration <= 0 {
		o.Duration = 60 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 10 * time.Second
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

// Name is the Lease that locks unit's runs.
func Name(unit string) string { return "kustomize-deploy." + unit }

// HeldError is a lock another run held for longer than the wait.
type HeldError struct {
	Unit, Namespace, Holder string
	Since                   time.Time
	Waited                  time.Duration
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("unit %s is being written by another run: Lease %s/%s is held by %s since %s; waited %s",
		e.Unit, e.Namespace, Name(e.Unit), e.Holder, e.Since.UTC().Format(time.RFC3339), e.Waited)
}

// Lock is a held lock.
type Lock struct {
	c     client.Client
	lease *coordinationv1.Lease
	opts  Options
	ctx   context.Context
	stop  context.CancelCauseFunc
	done  chan struct{}
	mu    sync.Mutex
}

// Acquire takes unit's lock in namespace, waiting up to opts.Wait for
// another holder, and keeps renewing it until Release. The lock's Context
// ends if the lock is lost (taken over after renewals failed for a whole
// lease duration): writes under it must stop.
func Acquire(ctx context.Context, c client.Client, namespace, unit string, opts Options) (*Lock, error) {
	opts = opts.withDefaults()
	start := time.Now()
	lastSaid := start
	for {
		lease, held, err := try(ctx, c, namespace, unit, opts)
		if err != nil {
			return nil, fmt.Errorf("taking the lock of unit %s (Lease %s/%s): %w", unit, namespace, Name(unit), err)
		}
		if lease != nil {
			return hold(ctx, c, lease, opts), nil
		}
		waited := time.Since(start)
		if waited >= opts.Wait {
			return nil, &HeldError{Unit: unit, Namespace: namespace, Holder: ptr.Deref(held.Spec.HolderIdentity, "?"), Since: acquired(held), Waited: waited.Round(time.Second)}
		}
		if time.Since(lastSaid) >= opts.ProgressEvery {
			lastSaid = time.Now()
			fmt.Fprintf(opts.Progress, "waiting for the lock of unit %s, held by %s since %s (%s of %s)\n",
				unit, ptr.Deref(held.Spec.HolderIdentity, "?"), acquired(held).UTC().Format(time.RFC3339), waited.Round(time.Second), opts.Wait)
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(opts.Poll):
		}
	}
}

// try takes the lease if it is free or expired. It returns the lease it
// took, or the lease another holder has.
func try(ctx context.Context, c client.Client, namespace, unit string, opts Options) (mine, theirs *coordinationv1.Lease, err error) {
	now := metav1.NewMicroTime(time.Now())
	want := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: Name(unit), Labels: map[string]string{"app.kubernetes.io/managed-by": "kustomize-deploy"}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(opts.Holder),
			LeaseDurationSeconds: ptr.To(int32(opts.Duration / time.Second)),
			AcquireTime:          &now,
			RenewTime:            &now,
		},
	}
	err = c.Create(ctx, want)
	switch {
	case err == nil:
		return want, nil, nil
	case !apierrors.IsAlreadyExists(err):
		return nil, nil, err
	}
	live := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(want), live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, live, nil // released in between: try again
		}
		return nil, nil, err
	}
	if !expired(live, time.Now()) {
		return nil, live, nil
	}
	// Take the expired lease over, only if nobody renewed it meanwhile.
	want.ResourceVersion = live.ResourceVersion
	if err := c.Update(ctx, want); err != nil {
		if apierrors.IsConflict(err) {
			return nil, live, nil
		}
		return nil, nil, err
	}
	return want, nil, nil
}

// expired reports whether the lease has no holder or was not renewed for
// its whole duration.
func expired(l *coordinationv1.Lease, now time.Time) bool {
	if ptr.Deref(l.Spec.HolderIdentity, "") == "" || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return now.After(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

func acquired(l *coordinationv1.Lease) time.Time {
	if l.Spec.AcquireTime != nil {
		return l.Spec.AcquireTime.Time
	}
	return l.CreationTimestamp.Time
}

func hold(ctx context.Context, c client.Client, lease *coordinationv1.Lease, opts Options) *Lock {
	lctx, stop := context.WithCancelCause(ctx)
	l := &Lock{c: c, lease: lease, opts: opts, ctx: lctx, stop: stop, done: make(chan struct{})}
	go l.renew()
	return l
}

// Context ends when the lock is lost or released.
func (l *Lock) Context() context.Context { return l.ctx }

// renew renews the lease every third of its duration; when it cannot for
// a whole duration, or finds another holder, the lock is lost.
func (l *Lock) renew() {
	defer close(l.done)
	tick := time.NewTicker(l.opts.Duration / 3)
	defer tick.Stop()
	renewed := time.Now()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-tick.C:
		}
		err := l.renewOnce()
		switch {
		case err == nil:
			renewed = time.Now()
		case errors.Is(err, errTaken) || time.Since(renewed) >= l.opts.Duration:
			l.stop(fmt.Errorf("lost the lock of unit %s: %w", l.lease.Name, err))
			return
		}
	}
}

var errTaken = errors.New("another run holds it now")

func (l *Lock) renewOnce() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	lease := l.lease.DeepCopy()
	now := metav1.NewMicroTime(time.Now())
	lease.Spec.RenewTime = &now
	if err := l.c.Update(l.ctx, lease); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return errTaken
		}
		return err
	}
	l.lease = lease
	return nil
}

// Release stops renewing and deletes the lease, unless another run holds
// it by now. It is safe to call more than once.
func (l *Lock) Release(ctx context.Context) error {
	l.stop(errors.New("released"))
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lease == nil {
		return nil
	}
	lease := l.lease
	l.lease = nil
	err := l.c.Delete(ctx, lease, client.Preconditions{ResourceVersion: &lease.ResourceVersion})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("releasing the lock of unit %s: %w", lease.Name, err)
	}
	return nil
}
