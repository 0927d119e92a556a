// Package testcluster runs a real, local Kubernetes control plane for tests
// and demos: etcd, kube-apiserver, kube-controller-manager, kube-scheduler
// and kwok, which plays the kubelet on fake nodes so that pods really move
// through Pending, Running and Ready and Deployments really roll out.
//
// Every binary is built from Go modules pinned in hack/tools/ (see
// EnsureBinaries) and cached outside the checkout, so fresh clones on the same
// machine reuse them. Everything listens on 127.0.0.1 on free ports, every
// process runs in its own process group and dies with the process that
// started it, and Stop removes what Start created.
//
// A test package starts one cluster in TestMain:
//
//	var cluster *testcluster.Cluster
//
//	func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster)) }
//
// and each test takes a fresh namespace with cluster.Namespace(t).
package testcluster
