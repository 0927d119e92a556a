package health

import (
	"context"
	"fmt"
	"sort"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

var workloads = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicaSet": true}

// unreadyPods names the pods of a workload that are not ready, with the
// reason from their Ready condition, so a failed rollout points at the pod
// to look at rather than only at its Deployment.
func unreadyPods(ctx context.Context, c *kube.Clients, rs *event.ResourceStatus) []string {
	if rs.Resource == nil || rs.Identifier.GroupKind.Group != "apps" || !workloads[rs.Identifier.GroupKind.Kind] {
		return nil
	}
	selector, ok := podSelector(rs.Resource)
	if !ok {
		return nil
	}
	var pods corev1.PodList
	if err := c.Client.List(ctx, &pods, client.InNamespace(rs.Identifier.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil
	}
	var out []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if msg, ready := podReady(&p); !ready {
			out = append(out, fmt.Sprintf("pod %s not ready: %s", p.Name, msg))
		}
	}
	sort.Strings(out)
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("%d more pods not ready", len(out)-5))
	}
	return out
}

// podSelector is the label selector of a workload's pods (spec.selector).
func podSelector(u *unstructured.Unstructured) (labels.Selector, bool) {
	sel, found, err := unstructured.NestedMap(u.Object, "spec", "selector")
	if err != nil || !found {
		return nil, false
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sel, &ls); err != nil {
		return nil, false
	}
	selector, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || selector.Empty() {
		return nil, false
	}
	return selector, true
}

func podReady(p *corev1.Pod) (string, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			msg := c.Message
			if msg == "" {
				msg = c.Reason
			}
			if msg == "" {
				msg = "phase " + string(p.Status.Phase)
			}
			return msg, c.Status == corev1.ConditionTrue
		}
	}
	return "phase " + string(p.Status.Phase), false
}
