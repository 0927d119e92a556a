package health

import "github.com/kustomize-deploy/kustomize-deploy/internal/object"

// ReadyOnceApplied reports whether kstatus judges id's kind ready as soon
// as it exists (ConfigMaps, Secrets, CronJobs: its alwaysReady kinds), so
// that waiting for one just applied can only confirm what the apply did.
func ReadyOnceApplied(id object.ID) bool {
	switch id.Group + "/" + id.Kind {
	case "/ConfigMap", "/Secret", "batch/CronJob":
		return true
	}
	return false
}
