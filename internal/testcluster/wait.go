package testcluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// waitHTTP polls url until it answers 200, p exits, or timeout passes. With a
// rest config the request is authenticated and trusts the cluster CA.
func waitHTTP(ctx context.Context, p *process, url string, cfg *rest.Config, timeout time.Duration) error {
	client := &http.Client{Timeout: 5 * time.Second}
	if cfg != nil {
		var err error
		if client, err = rest.HTTPClientFor(cfg); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "no answer yet"
	for {
		if ok, err := p.exited(); ok {
			return fmt.Errorf("%w before it was ready; last lines of %s:\n%s", err, p.logPath, p.logTail(30))
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, body)
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s (%s); last lines of %s:\n%s", p.name, timeout, last, p.logPath, p.logTail(30))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitUsable waits until workloads can run: the default service account
// exists (the controller manager is working) and every fake node is Ready
// with no not-ready taint left (kwok and the node lifecycle controller are).
func (c *Cluster) waitUsable(ctx context.Context, client kubernetes.Interface, nodes int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	check := func() (string, error) {
		if _, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return "default service account not created yet", nil
			}
			return "", err
		}
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", err
		}
		ready := 0
		for _, n := range list.Items {
			if NodeReady(&n) {
				ready++
			}
		}
		if ready < nodes {
			return fmt.Sprintf("%d of %d nodes ready", ready, nodes), nil
		}
		return "", nil
	}
	for {
		if err := c.Exited(); err != nil {
			return err
		}
		waiting, err := check()
		if err == nil && waiting == "" {
			return nil
		}
		if err != nil {
			waiting = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster not usable: %s (logs in %s)", waiting, c.logPath("*"))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// NodeReady reports whether a node is Ready and carries no not-ready or
// unreachable taint, so pods can be scheduled onto it.
func NodeReady(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false
		}
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
