package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// bareParallel is how many server-side applies the bare creates keep in
// flight: kustomize-deploy's own (internal/apply).
const bareParallel = 8

// bareManager is the bare creates' field manager.
const bareManager = "bench-bare-creates"

// bareCreates is the API server's floor for a first deploy of the
// manifests in dir: the same objects sent from this process as
// server-side applies, with kustomize-deploy's client settings (its rate
// limits, transport and request timeout: kube.New with the default
// options) and as many in flight, the Namespaces first; no build, no
// inventory, no lock, no wait. The files are read before the clock
// starts; connecting (discovery of the kinds) is timed, as it is in a
// run.
func bareCreates(ctx context.Context, cfg *rest.Config, dir string, timeout time.Duration) measurement {
	objs, err := readManifests(dir)
	if err != nil {
		return measurement{Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	c, err := kube.New(cfg, "default", kube.DefaultOptions())
	if err != nil {
		return measurement{Err: err}
	}
	var namespaces, rest []*unstructured.Unstructured
	for _, u := range objs {
		if u.GetKind() == "Namespace" {
			namespaces = append(namespaces, u)
		} else {
			rest = append(rest, u)
		}
	}
	for _, batch := range [][]*unstructured.Unstructured{namespaces, rest} {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(bareParallel)
		for _, u := range batch {
			g.Go(func() error {
				if err := c.Client.Patch(gctx, u, client.Apply, client.ForceOwnership, client.FieldOwner(bareManager)); err != nil {
					return fmt.Errorf("%s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return measurement{Wall: time.Since(start), Err: err}
		}
	}
	m := measurement{Wall: time.Since(start)}
	if err := rolledOut(ctx, c.Client, namespaces); err != nil {
		m.Err = fmt.Errorf("waiting for the rollouts: %w", err)
		return m
	}
	m.RolledOut = time.Since(start)
	return m
}

// rolledOut polls, every rolloutPoll, until every Deployment in the
// namespaces is rolled out (its controller observed its generation and
// all its replicas are updated and available), as kstatus has it: the
// bare creates' Deployments, whose rollouts the bare creates' time does
// not include, while a run that waits for health pays for them.
func rolledOut(ctx context.Context, c client.Client, namespaces []*unstructured.Unstructured) error {
	for {
		done := true
		for _, ns := range namespaces {
			var list appsv1.DeploymentList
			if err := c.List(ctx, &list, client.InNamespace(ns.GetName())); err != nil {
				return err
			}
			for _, d := range list.Items {
				want := int32(1)
				if d.Spec.Replicas != nil {
					want = *d.Spec.Replicas
				}
				st := d.Status
				if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != want || st.AvailableReplicas != want || st.Replicas != want {
					done = false
				}
			}
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rolloutPoll):
		}
	}
}

// rolloutPoll is how often rolledOut looks: finer than any tool's own
// wait, so the floor it sets is not the poll's.
const rolloutPoll = 20 * time.Millisecond

// readManifests reads the one object of each file in dir, in name order.
func readManifests(dir string) ([]*unstructured.Unstructured, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var out []*unstructured.Unstructured
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, errors.New(dir + ": no manifests")
	}
	return out, nil
}
