package testcluster

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubeconfigContext is the context name in the kubeconfig files Start writes.
const KubeconfigContext = "testcluster"

// writeKubeconfig writes cfg as a kubeconfig file (mode 0600) with one
// cluster, user and context, all named KubeconfigContext.
func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[KubeconfigContext] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos[KubeconfigContext] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts[KubeconfigContext] = &clientcmdapi.Context{
		Cluster:   KubeconfigContext,
		AuthInfo:  KubeconfigContext,
		Namespace: "default",
	}
	kc.CurrentContext = KubeconfigContext
	return clientcmd.WriteToFile(*kc, path)
}
