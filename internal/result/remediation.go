package result

import "fmt"

// Remediation is what a run did about a Helm release whose install or
// upgrade failed, as its HelmRelease's remediation says and as
// helm-controller does: a rollback to the release last applied
// successfully, or an uninstall.
type Remediation struct {
	// HelmRelease names it: HelmRelease/namespace/name.
	HelmRelease string `json:"helmRelease"`
	// Action is what failed: install, upgrade or test.
	Action string `json:"action"`
	// Attempt is which attempt failed (from 1); Retried says another
	// followed it.
	Attempt int  `json:"attempt"`
	Retried bool `json:"retried,omitempty"`
	// Strategy is rollback or uninstall.
	Strategy string `json:"strategy"`
	// Revision and Chart, of a rollback, are the revision the release
	// was rolled back to and its chart (name and version).
	Revision string `json:"revision,omitempty"`
	Chart    string `json:"chart,omitempty"`
	// Applied and Deleted count the objects re-applied and deleted.
	Applied int `json:"applied"`
	Deleted int `json:"deleted"`
	// Error says why the remediation itself failed, if it did.
	Error string `json:"error,omitempty"`
}

func (r Remediation) String() string {
	s := fmt.Sprintf("%s: %s failed (attempt %d); ", r.HelmRelease, r.Action, r.Attempt)
	switch r.Strategy {
	case "rollback":
		s += fmt.Sprintf("rolled back to revision %s", short12(r.Revision))
		if r.Chart != "" {
			s += " (chart " + r.Chart + ")"
		}
		s += fmt.Sprintf(": %d object(s) re-applied, %d deleted", r.Applied, r.Deleted)
	default:
		s += fmt.Sprintf("uninstalled: %d object(s) deleted", r.Deleted)
	}
	if r.Error != "" {
		s += "; the remediation failed: " + r.Error
	}
	if r.Retried {
		s += "; retried"
	}
	return s
}

func short12(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
