// Package notify posts a run's events to the Providers of Flux's
// notification Alerts (notification.toolkit.fluxcd.io v1beta3, and
// v1beta2 as still served), as notification-controller would with no
// controller in the cluster: a unit's Kustomization and the HelmReleases
// it rendered send one event each when the run changed something or
// failed, never on a no-op (see Events); every Alert that takes an event
// (eventSources, eventSeverity, inclusionList, exclusionList; see
// Alert.matches) posts it, with its eventMetadata and summary, to its
// Provider in that Provider type's payload (one file per family:
// generic.go, slack.go, teams.go, googlechat.go, matrix.go, telegram.go,
// chat.go, alerting.go, grafana.go, github.go).
//
// A Provider's Secrets are read when it is first posted to, through
// Options.Secret, and every value in them is masked at once; errors never
// quote an address. A post that fails is a Delivery with Err set: the
// caller warns, never fails the run.
package notify
