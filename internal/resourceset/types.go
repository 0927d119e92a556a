// Package resourceset expands Flux Operator's ResourceSets
// (fluxcd.controlplane.io/v1) in-process, as the operator's ResourceSet
// and ResourceSetInputProvider controllers would in a cluster: the input
// sets are read from spec.inputs and from the ResourceSetInputProviders
// spec.inputsFrom names (type Static, or the open pull requests, branches
// or tags of a GitHub repository, read through GitHub's REST API with the
// run's token), combined as spec.inputStrategy says, and every template of
// spec.resources and spec.resourcesTemplate is executed once per input set
// with the operator's << >> delimiters and functions. The objects it
// generates are the unit's own: applied, inventoried and pruned with the
// rest of its objects, so objects generated for an input that is gone
// (a pull request closed) are garbage-collected by the next run.
//
// It reads and returns objects; it never writes to a cluster and prints
// nothing.
package resourceset

import (
	"bytes"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is Flux Operator's API group.
const Group = "fluxcd.controlplane.io"

// The kinds this package reads.
var (
	SetKind      = schema.GroupKind{Group: Group, Kind: "ResourceSet"}
	ProviderKind = schema.GroupKind{Group: Group, Kind: "ResourceSetInputProvider"}
)

// Annotations and labels of the operator's that a ResourceSet's templates
// or its generated objects carry.
const (
	reconcileAnnotation = Group + "/reconcile"
	disabledValue       = "disabled"
	// The owner labels the operator sets on every generated object.
	ownerNameLabel      = "resourceset." + Group + "/name"
	ownerNamespaceLabel = "resourceset." + Group + "/namespace"
	// OwnerNameLabel and OwnerNamespaceLabel are on every object a
	// ResourceSet generates (the operator's labels): they name it.
	OwnerNameLabel, OwnerNamespaceLabel = ownerNameLabel, ownerNamespaceLabel
)

// Input provider types.
const (
	TypeStatic            = "Static"
	TypeGitHubBranch      = "GitHubBranch"
	TypeGitHubTag         = "GitHubTag"
	TypeGitHubPullRequest = "GitHubPullRequest"
)

// knownTypes are every type the operator's API accepts: those above are
// read, the others refused by name.
var knownTypes = []string{
	"Static", "GitHubBranch", "GitHubTag", "GitHubPullRequest",
	"GitLabBranch", "GitLabTag", "GitLabMergeRequest", "GitLabEnvironment",
	"AzureDevOpsBranch", "AzureDevOpsTag", "AzureDevOpsPullRequest",
	"AWSCodeCommitBranch", "AWSCodeCommitTag", "AWSCodeCommitPullRequest",
	"GiteaBranch", "GiteaTag", "GiteaPullRequest",
	"OCIArtifactTag", "ACRArtifactTag", "ECRArtifactTag", "GARArtifactTag",
	"ExternalService", "ExternalArtifact",
}

// resourceSet is a ResourceSet as the operator's API has it (v1).
type resourceSet struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       setSpec           `json:"spec"`
	Status     json.RawMessage   `json:"status,omitempty"`
}

type setSpec struct {
	CommonMetadata     *commonMetadata   `json:"commonMetadata,omitempty"`
	InputStrategy      *inputStrategy    `json:"inputStrategy,omitempty"`
	Inputs             []map[string]any  `json:"inputs,omitempty"`
	InputsFrom         []providerRef     `json:"inputsFrom,omitempty"`
	Resources          []json.RawMessage `json:"resources,omitempty"`
	ResourcesTemplate  string            `json:"resourcesTemplate,omitempty"`
	Steps              []json.RawMessage `json:"steps,omitempty"`
	DependsOn          []dependency      `json:"dependsOn,omitempty"`
	ServiceAccountName string            `json:"serviceAccountName,omitempty"`
	Wait               bool              `json:"wait,omitempty"`
}

type commonMetadata struct {
	Annotations map[string]string `json:"annotations,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
}

type inputStrategy struct {
	Name                  string `json:"name,omitempty"`
	IncludeEmptyProviders bool   `json:"includeEmptyProviders,omitempty"`
}

type providerRef struct {
	APIVersion string                `json:"apiVersion,omitempty"`
	Kind       string                `json:"kind,omitempty"`
	Name       string                `json:"name,omitempty"`
	Selector   *metav1.LabelSelector `json:"selector,omitempty"`
}

type dependency struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
	Ready      bool   `json:"ready,omitempty"`
	ReadyExpr  string `json:"readyExpr,omitempty"`
}

// inputProvider is a ResourceSetInputProvider as the operator's API has
// it (v1).
type inputProvider struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       providerSpec      `json:"spec"`
	Status     json.RawMessage   `json:"status,omitempty"`
}

type providerSpec struct {
	Type               string          `json:"type"`
	URL                string          `json:"url,omitempty"`
	ServiceAccountName string          `json:"serviceAccountName,omitempty"`
	SecretRef          *localRef       `json:"secretRef,omitempty"`
	CertSecretRef      *localRef       `json:"certSecretRef,omitempty"`
	Insecure           bool            `json:"insecure,omitempty"`
	DefaultValues      map[string]any  `json:"defaultValues,omitempty"`
	Filter             *filterSpec     `json:"filter,omitempty"`
	Skip               *skipSpec       `json:"skip,omitempty"`
	Schedule           json.RawMessage `json:"schedule,omitempty"`
	Selectors          json.RawMessage `json:"selectors,omitempty"`
}

type localRef struct {
	Name string `json:"name"`
}

type filterSpec struct {
	IncludeBranch      string   `json:"includeBranch,omitempty"`
	ExcludeBranch      string   `json:"excludeBranch,omitempty"`
	IncludeTag         string   `json:"includeTag,omitempty"`
	ExcludeTag         string   `json:"excludeTag,omitempty"`
	IncludeEnvironment string   `json:"includeEnvironment,omitempty"`
	ExcludeEnvironment string   `json:"excludeEnvironment,omitempty"`
	Labels             []string `json:"labels,omitempty"`
	Limit              int      `json:"limit,omitempty"`
	Semver             string   `json:"semver,omitempty"`
}

type skipSpec struct {
	Labels []string `json:"labels,omitempty"`
}

// decodeStrict reads u into out as the API server would with strict
// field validation: a field the API does not have is an error naming it.
func decodeStrict(u *unstructured.Unstructured, out any) error {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber() // see numbers
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("does not read as %s: %w", u.GroupVersionKind().Kind, err)
	}
	return nil
}
