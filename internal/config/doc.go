// Package config reads a Flux repository's Kustomization objects
// (kustomize.toolkit.fluxcd.io v1, v1beta2 and v1beta1) and turns each
// into a Unit: the typed, validated description of one directory to
// build and apply. It is pure: it reads files, never a cluster.
//
// Reading is strict, as the Kubernetes API server is with a CRD's schema:
// a field that the object's API version does not have is an error, and
// so is a field Flux has but kustomize-deploy cannot honour (CEL
// expressions, workload identity). Fields that only steer Flux's own
// scheduling (interval, retryInterval) are checked and reported in
// Set.Notes, since kustomize-deploy runs once. spec.sourceRef is kept on
// the Unit, with the sources found beside it (GitRepositories,
// OCIRepositories, Buckets, ArtifactGenerators), for the units package to
// resolve: what a unit builds is what its source names.
package config
