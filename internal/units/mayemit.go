package units

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
)

// Rendering every unit before the run to find the Kustomizations it emits
// (see discover) costs a scratch copy and a build per unit; most units
// (an app's manifests) can emit none. A unit built from the checkout is
// rendered only when a file it may read mentions a Flux API group: its
// build reads its directory, its spec.components, and what their
// kustomization files reach with a "../" path (each such path, wherever it
// appears in the file, counts: a comment only makes it render once more),
// and nothing else once a remote resource ("://") is ruled out.

// fluxGroups are the API groups of the objects discovery reads (Flux
// Operator's: a FluxInstance's sync, a ResourceSet's Kustomizations).
var fluxGroups = []string{"kustomize.toolkit.fluxcd.io", "source.toolkit.fluxcd.io", "source.extensions.fluxcd.io", "notification.toolkit.fluxcd.io", "fluxcd.controlplane.io"}

// lockdownFlags are the controller flags of Flux's multi-tenancy
// lockdown: a unit whose files set one (a patch of gotk-components.yaml's
// Deployments) is rendered too, for the lockdown it declares
// (config.Lockdown).
var lockdownFlags = []string{"--" + config.FlagNoCrossNamespaceRefs, "--" + config.FlagDefaultServiceAccount, "--" + config.FlagNoRemoteBases}

// emitNeedles are what a file that may emit something read mentions.
var emitNeedles = append(append([]string(nil), fluxGroups...), lockdownFlags...)

// upPath is a relative path going up, in a kustomization file.
var upPath = regexp.MustCompile(`\.\./[^\s"',\]\}#]*`)

// emitIndex knows which files of a checkout mention a Flux API group,
// and what each kustomization file reaches.
type emitIndex struct {
	flux           []string // slash-separated, relative to the root
	kustomizations []kustomizationFile
}

// kustomizationFile is a kustomization file's path and what it reaches
// outside its directory: the "../" paths it holds, resolved against it,
// and whether it names a remote resource (or could not be read).
type kustomizationFile struct {
	path   string
	ups    []string
	remote bool
}

// newEmitIndex reads the YAML files snap lists below root.
func newEmitIndex(snap *workspace.Snapshot, root string) *emitIndex {
	x := &emitIndex{}
	for _, f := range snap.Files() {
		base := path.Base(f)
		isKustomization := base == "kustomization.yaml" || base == "kustomization.yml" || base == "Kustomization"
		switch path.Ext(f) {
		case ".yaml", ".yml", ".json":
		default:
			if !isKustomization {
				continue
			}
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			x.flux = append(x.flux, f) // unreadable: assume the worst
			continue
		}
		if isKustomization {
			k := kustomizationFile{path: f, remote: strings.Contains(string(data), "://")}
			for _, up := range upPath.FindAllString(string(data), -1) {
				k.ups = append(k.ups, path.Join(path.Dir(f), up))
			}
			x.kustomizations = append(x.kustomizations, k)
		}
		for _, g := range emitNeedles {
			if strings.Contains(string(data), g) {
				x.flux = append(x.flux, f)
				break
			}
		}
	}
	return x
}

// mayEmit says whether a unit building dir (relative to the root,
// slash-separated) with these spec.components may emit a Flux object.
func (x *emitIndex) mayEmit(dir string, components []string) bool {
	roots := []string{path.Clean(dir)}
	for _, c := range components {
		roots = append(roots, path.Join(dir, c))
	}
	for i := 0; i < len(roots); i++ {
		for _, k := range x.kustomizations {
			if !under(k.path, roots[i]) {
				continue
			}
			if k.remote {
				return true
			}
			for _, p := range k.ups {
				if strings.HasPrefix(p, "../") || p == ".." {
					return true // outside the root: the build refuses it, or reads what it may
				}
				if !covered(p, roots) {
					roots = append(roots, p)
				}
			}
		}
	}
	for _, f := range x.flux {
		if covered(f, roots) {
			return true
		}
	}
	return false
}

// under says whether p is dir or below it ("." holds everything).
func under(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

func covered(p string, roots []string) bool {
	for _, r := range roots {
		if under(p, r) {
			return true
		}
	}
	return false
}
