// Command release-pin makes the release commit's changes (see
// internal/release): it pins the version and repository of the release
// binary in action.yml and in the setup action, and writes the binaries'
// checksums next to install.sh (setup/checksums.txt), in the repository at
// --root. .github/workflows/release.yml runs it once the binaries are
// built.
package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/kustomize-deploy/kustomize-deploy/internal/release"
)

func main() {
	root := flag.String("root", ".", "the repository's work tree")
	image := flag.String("image", "", "no longer pinned: action.yml runs the release binary, not the image (accepted so older release workflows still run)")
	version := flag.String("version", "", "the release, v<major>.<minor>.<patch>")
	repo := flag.String("repository", "", "<owner>/<name> whose releases hold the binaries")
	sums := flag.String("checksums", "", "the release binaries' checksums.txt (sha256sum format)")
	flag.Parse()
	if *image != "" {
		fmt.Fprintf(os.Stderr, "release-pin: --image %s is not pinned anywhere: action.yml installs the release binary\n", *image)
	}
	if err := pin(*root, *version, *repo, *sums, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release-pin:", err)
		os.Exit(1)
	}
}

// pin edits action.yml and setup/action.yml and writes setup/checksums.txt;
// nothing is written unless every edit succeeds.
func pin(root, version, repo, sumsPath string, log io.Writer) error {
	sums, err := os.ReadFile(sumsPath)
	if err != nil {
		return err
	}
	if err := release.CheckChecksums(sums); err != nil {
		return err
	}
	files := map[string][]byte{filepath.Join("setup", "checksums.txt"): sums}
	for rel, change := range map[string]func([]byte, string, string) ([]byte, error){
		"action.yml":                         release.PinAction,
		filepath.Join("setup", "action.yml"): release.PinSetup,
	} {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return err
		}
		if files[rel], err = change(data, version, repo); err != nil {
			return err
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.Join(root, rel), files[rel], 0o644); err != nil {
			return err
		}
		fmt.Fprintf(log, "pinned %s\n", rel)
	}
	return nil
}
