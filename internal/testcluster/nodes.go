package testcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// createFakeNodes registers n Nodes that kwok manages (selected by
// fakeNodeAnnotation). kwok fills in their status and keeps them Ready.
func createFakeNodes(ctx context.Context, client kubernetes.Interface, n int) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("250"),
	}
	for i := range n {
		name := fmt.Sprintf("kwok-node-%d", i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Annotations: map[string]string{fakeNodeAnnotation: "fake"},
				Labels: map[string]string{
					"type":                   "kwok",
					"kubernetes.io/hostname": name,
					"kubernetes.io/os":       "linux",
					"kubernetes.io/arch":     "amd64",
				},
			},
			Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
		}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating fake node %s: %w", name, err)
		}
	}
	return nil
}
