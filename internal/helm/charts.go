package helm

import "github.com/kustomize-deploy/kustomize-deploy/internal/source/helmrepo"

// Charts are fetched from their sources by helmrepo, part of
// internal/source; helm renders them. These names are helmrepo's.
type (
	// Fetcher fetches charts (helmrepo.Fetcher).
	Fetcher = helmrepo.Fetcher
	// Fetched is a chart fetched, loaded.
	Fetched = helmrepo.Fetched
	// Repository is a HelmRepository; OCISource an OCI chart's source.
	Repository = helmrepo.Repository
	OCISource  = helmrepo.OCISource
	// Credentials are what a chart source's Secrets hold.
	Credentials = helmrepo.Credentials
)
