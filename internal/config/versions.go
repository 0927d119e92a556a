package config

import (
	"regexp"
	"strings"
)

// Kinds and the API groups Read looks for.
const (
	fluxGroup = "kustomize.toolkit.fluxcd.io"
	// legacyGroup is the group of the Kustomization of Flux's first
	// kustomize-controller (v1alpha1, 2020), before the toolkit's: refused,
	// by name (see refusal).
	legacyGroup = "kustomize.fluxcd.io"
	// kustomizeGroup is kustomize's own kustomization.yaml, which is not
	// a Flux object.
	kustomizeGroup    = "kustomize.config.k8s.io"
	kustomizationKind = "Kustomization"
	configMapKind     = "ConfigMap"
	secretKind        = "Secret"
)

// version is an API version of Flux's Kustomization, oldest first.
type version int

const (
	v1beta1 version = iota + 1
	v1beta2
	v1
)

var versionNames = map[version]string{v1beta1: "v1beta1", v1beta2: "v1beta2", v1: "v1"}

func (v version) String() string { return versionNames[v] }

func (v version) apiVersion() string { return fluxGroup + "/" + v.String() }

// parseVersion returns the version of a kustomize.toolkit.fluxcd.io
// apiVersion.
func parseVersion(apiVersion string) (version, bool) {
	name, ok := strings.CutPrefix(apiVersion, fluxGroup+"/")
	if !ok {
		return 0, false
	}
	for v, n := range versionNames {
		if n == name {
			return v, true
		}
	}
	return 0, false
}

// fluxDuration is the syntax v1 and v1beta2 enforce on durations
// (+kubebuilder:validation:Pattern); v1beta1 takes any Go duration.
var fluxDuration = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`)

func (v version) durationPattern() *regexp.Regexp {
	if v == v1beta1 {
		return nil
	}
	return fluxDuration
}

// fieldVersions are the fields only some versions have (from
// kustomize-controller's api/v1, v1beta2 and v1beta1 types), so that the
// same field in another version is reported with the versions that know
// it. Paths have their list indexes removed.
var fieldVersions = map[string]string{
	"spec.commonMetadata":                    "v1beta2 and v1 have it",
	"spec.wait":                              "v1beta2 and v1 have it",
	"spec.components":                        "v1beta2 and v1 have it",
	"spec.kubeConfig.configMapRef":           "v1beta2 and v1 have it",
	"spec.kubeConfig.secretRef.key":          "v1beta2 and v1 have it",
	"spec.postBuild.substituteFrom.optional": "v1beta2 and v1 have it",
	"spec.deletionPolicy":                    "v1 has it",
	"spec.namePrefix":                        "v1 has it",
	"spec.nameSuffix":                        "v1 has it",
	"spec.ignoreMissingComponents":           "v1 has it",
	"spec.buildMetadata":                     "v1 has it",
	"spec.healthCheckExprs":                  "v1 has it",
	"spec.ignore":                            "v1 has it",
	"spec.postBuild.substituteStrategy":      "v1 has it",
	"spec.decryption.serviceAccountName":     "v1 has it",
	"spec.dependsOn.readyExpr":               "v1 has it",
	"spec.validation":                        "v1beta1 and v1beta2 have it",
	"spec.patchesStrategicMerge":             "v1beta1 and v1beta2 have it; v1 has spec.patches",
	"spec.patchesJson6902":                   "v1beta1 and v1beta2 have it; v1 has spec.patches",
}

// fieldHints point from fields people write by mistake to Flux's own.
var fieldHints = map[string]string{
	// Dropped before v1beta1 for privilege escalation in multi-tenancy
	// (kustomize-controller commit 0c91702).
	"spec.serviceAccount":   "(Flux's field is spec.serviceAccountName)",
	"spec.driftIgnoreRules": "(Flux's drift ignore rules are spec.ignore)",
}

// hint explains an unknown field at path, if it can.
func (d *decoder) hint(path string) string {
	if d.version == 0 {
		return ""
	}
	canonical := listIndex.ReplaceAllString(path, "")
	if h := fieldHints[canonical]; h != "" {
		return h
	}
	if vs := fieldVersions[canonical]; vs != "" {
		return "in " + d.version.apiVersion() + " (only " + vs + ")"
	}
	return ""
}

var listIndex = regexp.MustCompile(`\[[^\]]*\]`)

// orList renders "a", "b" and "c" as `"a", "b" or "c"`.
func orList(items []string) string {
	var b strings.Builder
	for i, s := range items {
		switch {
		case i == 0:
		case i == len(items)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(`"` + s + `"`)
	}
	return b.String()
}
