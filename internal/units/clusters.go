package units

import (
	"sync"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// Clusters makes a Config.Cluster that connects once to each cluster:
// connect("") is the default cluster (units without spec.kubeConfig),
// connect(name) the one whose kubeconfig stands in for the Secret name.
func Clusters(connect func(secret string) (*kube.Clients, error)) func(*config.KubeConfig) (*kube.Clients, string, error) {
	var mu sync.Mutex
	cache := map[string]*kube.Clients{}
	return func(kc *config.KubeConfig) (*kube.Clients, string, error) {
		name := ""
		if kc != nil {
			name = kc.SecretName
		}
		mu.Lock()
		defer mu.Unlock()
		if c, ok := cache[name]; ok {
			return c, name, nil
		}
		c, err := connect(name)
		if err != nil {
			return nil, "", err
		}
		cache[name] = c
		return c, name, nil
	}
}
