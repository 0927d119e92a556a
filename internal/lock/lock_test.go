package lock

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster)) }

func setup(t *testing.T) (client.Client, string) {
	t.Helper()
	c, err := kube.New(cluster.Config, "default", kube.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c.Client, cluster.Namespace(t)
}

// fast keeps the tests short: a lease of 3 s renewed every second, looked
// at every 50 ms.
func fast(holder string, wait time.Duration, progress *syncBuffer) Options {
	o := Options{Holder: holder, Wait: wait, Duration: 3 * time.Second, Poll: 50 * time.Millisecond, ProgressEvery: 100 * time.Millisecond}
	if progress != nil {
		o.Progress = progress
	}
	return o
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
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

func holderOf(t *testing.T, c client.Client, ns, unit string) string {
	t.Helper()
	var l coordinationv1.Lease
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: Name(unit)}, &l); err != nil {
		if apierrors.IsNotFound(err) {
			return ""
		}
		t.Fatal(err)
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// A second run waits for the first, saying who holds the lock, and takes
// it once released; the lease is gone when the last one releases it.
func TestSecondRunWaitsForTheFirst(t *testing.T) {
	t.Parallel()
	c, ns := setup(t)
	first, err := Acquire(t.Context(), c, ns, "web", fast("run-1", time.Minute, nil))
	if err != nil {
		t.Fatal(err)
	}
	var progress syncBuffer
	got := make(chan error, 1)
	var second *Lock
	go func() {
		var err error
		second, err = Acquire(t.Context(), c, ns, "web", fast("run-2", time.Minute, &progress))
		got <- err
	}()
	for !strings.Contains(progress.String(), "held by run-1") {
		select {
		case err := <-got:
			t.Fatalf("the second run did not wait: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := first.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if h := holderOf(t, c, ns, "web"); h != "run-2" {
		t.Errorf("holder %q, want run-2", h)
	}
	if err := second.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	if h := holderOf(t, c, ns, "web"); h != "" {
		t.Errorf("the lease is still there, held by %q", h)
	}
}

// Past the wait, Acquire fails naming the holder.
func TestWaitEndsNamingTheHolder(t *testing.T) {
	t.Parallel()
	c, ns := setup(t)
	first, err := Acquire(t.Context(), c, ns, "web", fast("https://github.com/acme/deploy/actions/runs/42", time.Minute, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release(context.Background())
	_, err = Acquire(t.Context(), c, ns, "web", fast("run-2", 300*time.Millisecond, nil))
	var held *HeldError
	if !errors.As(err, &held) || held.Holder != "https://github.com/acme/deploy/actions/runs/42" ||
		!strings.Contains(err.Error(), "held by https://github.com/acme/deploy/actions/runs/42") {
		t.Fatalf("err = %v", err)
	}
}

// A crashed holder stops renewing: its lease expires and is taken over.
func TestExpiredLeaseIsTakenOver(t *testing.T) {
	t.Parallel()
	c, ns := setup(t)
	stale := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	if err := c.Create(t.Context(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: Name("web")},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("crashed"), LeaseDurationSeconds: ptr.To(int32(60)), AcquireTime: &stale, RenewTime: &stale},
	}); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(t.Context(), c, ns, "web", fast("run-2", 300*time.Millisecond, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	if h := holderOf(t, c, ns, "web"); h != "run-2" {
		t.Errorf("holder %q, want run-2", h)
	}
}

// A lock taken over by someone else is lost: its context ends, and
// releasing it leaves the new holder's lease alone.
func TestLostLockEndsItsContext(t *testing.T) {
	t.Parallel()
	c, ns := setup(t)
	l, err := Acquire(t.Context(), c, ns, "web", fast("run-1", time.Minute, nil))
	if err != nil {
		t.Fatal(err)
	}
	var lease coordinationv1.Lease
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: Name("web")}, &lease); err != nil {
		t.Fatal(err)
	}
	lease.Spec.HolderIdentity = ptr.To("intruder")
	if err := c.Update(t.Context(), &lease); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Context().Done():
	case <-time.After(time.Minute):
		t.Fatal("the lock was not lost")
	}
	if cause := context.Cause(l.Context()); cause == nil || !strings.Contains(cause.Error(), "lost the lock") {
		t.Errorf("cause %v", cause)
	}
	if err := l.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	if h := holderOf(t, c, ns, "web"); h != "intruder" {
		t.Errorf("releasing a lost lock removed the new holder's lease (holder %q)", h)
	}
}
