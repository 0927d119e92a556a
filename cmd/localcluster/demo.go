package main

import (
	"context"
	"fmt"
	"io"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// demo shows the cluster doing real work: a Deployment is scheduled onto the
// kwok nodes and its pods go Running and Ready. (The engine's end-to-end demo
// replaces this once `kustomize-deploy apply` exists.)
func demo(ctx context.Context, cfg *rest.Config, out io.Writer) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "nodes:\n")
	for _, n := range nodes.Items {
		fmt.Fprintf(out, "  %-12s ready=%v\n", n.Name, testcluster.NodeReady(&n))
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "demo"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "hello"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "hello"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := client.AppsV1().Deployments("demo").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return err
	}
	fmt.Fprintf(out, "created deployment demo/hello (3 replicas); waiting for it to roll out\n")
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		got, err := client.AppsV1().Deployments("demo").Get(ctx, "hello", metav1.GetOptions{})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  deployment demo/hello: %d/%d ready\n", got.Status.ReadyReplicas, *got.Spec.Replicas)
		if got.Status.ReadyReplicas == *got.Spec.Replicas && got.Status.ObservedGeneration == got.Generation {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("deployment demo/hello did not roll out: %w", ctx.Err())
		case <-time.After(time.Second):
		}
	}
	pods, err := client.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{LabelSelector: "app=hello"})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "pods:\n")
	for _, p := range pods.Items {
		fmt.Fprintf(out, "  %-28s %-8s node=%s ip=%s\n", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.PodIP)
	}
	return nil
}
