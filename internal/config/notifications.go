package config

import (
	"bytes"
	"slices"

	yaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// notificationGroup is Flux's notification-controller API group: its
// Providers and Alerts are read for the run to post its units' events
// (see notify), its Receivers are left to the units (which do not apply
// them).
const notificationGroup = "notification.toolkit.fluxcd.io"

// notificationKind says whether an object of apiVersion and kind is a
// notification Provider or Alert, which Read keeps.
func notificationKind(apiVersion, kind string) bool {
	return groupOf(apiVersion) == notificationGroup && (kind == NotificationProvider || kind == NotificationAlert)
}

// notification keeps a Provider or an Alert as written: what names it
// (its problems are the run's notifications' to report, as warnings,
// never the configuration's).
func (r *reader) notification(file string, line int, apiVersion, kind string, n *yaml.Node, text docText) {
	ref := Ref{Namespace: "default"}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != "metadata" {
			continue
		}
		meta := resolve(n.Content[i+1])
		if meta.Kind != yaml.MappingNode {
			break
		}
		ref.Name = topString(meta, "name")
		if ns := topString(meta, "namespace"); ns != "" {
			ref.Namespace = ns
		}
	}
	r.notifications = append(r.notifications, &Notification{
		Kind: kind, APIVersion: apiVersion, Ref: ref, File: file, Line: line, Raw: bytes.Clone(text.body()),
	})
}

// addNotifications adds the Providers and Alerts a build emitted (found),
// emitted by chain, unless s holds them already as they are.
func (s *Set) addNotifications(found []*Notification, chain []Ref) {
	for _, n := range found {
		if slices.ContainsFunc(s.Notifications, func(m *Notification) bool {
			return m.Kind == n.Kind && m.Ref == n.Ref && bytes.Equal(m.Raw, n.Raw)
		}) {
			continue
		}
		n.EmittedBy = slices.Clone(chain)
		s.Notifications = append(s.Notifications, n)
	}
}
