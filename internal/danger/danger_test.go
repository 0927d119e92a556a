package danger

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

func obj(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	if text == "" {
		return nil
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(text), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const (
	sts = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\nspec:\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n  replicas: 1\n"
)

// want is the field and risk of each danger (consequences are the rules'
// wording, checked where it matters).
type want struct{ Risk, Field string }

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, now string
		want     []want
	}{
		{"statefulset volumeClaimTemplates",
			sts + "  volumeClaimTemplates: [{metadata: {name: data}, spec: {resources: {requests: {storage: 1Gi}}}}]\n",
			sts + "  volumeClaimTemplates: [{metadata: {name: data}, spec: {resources: {requests: {storage: 2Gi}}}}]\n",
			[]want{{RiskRecreate, "spec.volumeClaimTemplates"}}},
		{"statefulset serviceName and podManagementPolicy",
			sts, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\nspec:\n  serviceName: db-headless\n  podManagementPolicy: Parallel\n  selector: {matchLabels: {app: db}}\n  replicas: 1\n",
			[]want{{RiskRecreate, "spec.serviceName"}, {RiskRecreate, "spec.podManagementPolicy"}}},
		{"statefulset selector", sts, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\nspec:\n  serviceName: db\n  selector: {matchLabels: {app: db2}}\n  replicas: 1\n",
			[]want{{RiskRecreate, "spec.selector"}}},
		{"statefulset replicas is no danger", sts, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\nspec:\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n  replicas: 3\n", nil},
		{"deployment selector",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {selector: {matchLabels: {app: web}}, replicas: 1}\n",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {selector: {matchLabels: {app: web, tier: front}}, replicas: 1}\n",
			[]want{{RiskRecreate, "spec.selector"}}},
		{"daemonset selector",
			"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec: {selector: {matchLabels: {app: a}}}\n",
			"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec: {selector: {matchLabels: {app: b}}}\n",
			[]want{{RiskRecreate, "spec.selector"}}},
		{"replicaset selector",
			"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec: {selector: {matchLabels: {app: a}}}\n",
			"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec: {selector: {matchLabels: {app: b}}}\n",
			[]want{{RiskRecreate, "spec.selector"}}},
		{"deployment replicas is no danger",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {selector: {matchLabels: {app: web}}, replicas: 1}\n",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {selector: {matchLabels: {app: web}}, replicas: 2}\n", nil},
		{"job template",
			"apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}\nspec: {template: {spec: {containers: [{name: m, image: m:1}]}}}\n",
			"apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}\nspec: {template: {spec: {containers: [{name: m, image: m:2}]}}}\n",
			[]want{{RiskRecreate, "spec.template"}}},
		{"pvc storage class",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {storageClassName: standard, accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}\n",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {storageClassName: fast, accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}\n",
			[]want{{RiskRecreate, "spec.storageClassName"}}},
		{"pvc access modes",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}\n",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 10Gi}}}\n",
			[]want{{RiskRecreate, "spec.accessModes"}}},
		{"pvc shrink",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {resources: {requests: {storage: 10Gi}}}\n",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {resources: {requests: {storage: 5000Mi}}}\n",
			[]want{{RiskRecreate, "spec.resources.requests.storage"}}},
		{"pvc growth is no danger",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {resources: {requests: {storage: 10Gi}}}\n",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {resources: {requests: {storage: 20Gi}}}\n", nil},
		{"service clusterIP",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {clusterIP: 10.0.0.10}\n",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {clusterIP: 10.0.0.11}\n",
			[]want{{RiskRecreate, "spec.clusterIP"}}},
		{"service type",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: LoadBalancer, ports: [{port: 80}]}\n",
			[]want{{RiskService, "spec.type"}}},
		{"service type ClusterIP spelled out is no change",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: ClusterIP, ports: [{port: 80}]}\n", nil},
		{"immutable configmap data",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nimmutable: true\ndata: {a: \"1\"}\n",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nimmutable: true\ndata: {a: \"2\"}\n",
			[]want{{RiskRecreate, "data"}}},
		{"immutable secret unset",
			"apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nimmutable: true\ndata: {a: MQ==}\n",
			"apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {a: MQ==}\n",
			[]want{{RiskRecreate, "immutable"}}},
		{"mutable configmap data is no danger",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"1\"}\n",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nimmutable: true\ndata: {a: \"2\"}\n", nil},
		{"namespace deleted", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n", "", []want{{RiskDataLoss, "Namespace"}}},
		{"namespace created is no danger", "", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n", nil},
		{"crd deleted", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n", "", []want{{RiskDataLoss, "CustomResourceDefinition"}}},
		{"pvc deleted", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n", "", []want{{RiskDataLoss, "PersistentVolumeClaim"}}},
		{"configmap deleted is no danger here (the prune is listed)", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "", nil},
		{"clusterrole grants every verb",
			"", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\nrules: [{apiGroups: [\"\"], resources: [pods], verbs: [\"*\"]}]\n",
			[]want{{RiskGrant, "rules[].verbs"}}},
		{"role grants every resource of every group, newly",
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r, namespace: a}\nrules: [{apiGroups: [\"*\"], resources: [pods], verbs: [get]}]\n",
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r, namespace: a}\nrules: [{apiGroups: [\"*\"], resources: [\"*\"], verbs: [get, list]}]\n",
			[]want{{RiskGrant, "rules[].resources"}}},
		{"clusterrolebinding to cluster-admin",
			"", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: ci, namespace: ci}]\n",
			[]want{{RiskGrant, "roleRef"}}},
		{"rolebinding already to cluster-admin is no new grant",
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: b, namespace: a}\nroleRef: {kind: ClusterRole, name: cluster-admin}\nsubjects: []\n",
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: b, namespace: a}\nroleRef: {kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: User, name: bob}]\n", nil},
		{"kustomization prune off",
			"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec: {prune: true, path: ./apps}\n",
			"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec: {prune: false, path: ./apps}\n",
			[]want{{RiskPruneOff, "spec.prune"}}},
		{"kustomization prune on",
			"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec: {path: ./apps}\n",
			"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec: {prune: true, path: ./apps}\n",
			[]want{{RiskPruneOn, "spec.prune"}}},
		{"kustomization suspended",
			"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec: {prune: true}\n",
			"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec: {prune: true, suspend: true}\n",
			[]want{{RiskSuspend, "spec.suspend"}}},
		{"helmrelease resumed",
			"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: web}\nspec: {suspend: true}\n",
			"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: web}\nspec: {}\n",
			[]want{{RiskResume, "spec.suspend"}}},
		{"unchanged", sts, sts, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []want
			for _, d := range Check(obj(t, tc.old), obj(t, tc.now)) {
				if d.Consequence == "" {
					t.Errorf("%s has no consequence", d.Field)
				}
				got = append(got, want{d.Risk, d.Field})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("dangers (-want +got):\n%s", diff)
			}
		})
	}
}

// The consequence says what happens, in words a reviewer acts on.
func TestCheckSaysTheConsequence(t *testing.T) {
	got := Check(obj(t, "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {resources: {requests: {storage: 10Gi}}}\n"),
		obj(t, "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {resources: {requests: {storage: 5Gi}}}\n"))
	want := []result.Danger{{Risk: RiskRecreate, Field: "spec.resources.requests.storage",
		Consequence: "shrinks the claim from 10Gi to 5Gi: a claim only grows; the object must be recreated, and its data moved"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
