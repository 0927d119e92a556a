// Command release-pin makes the release commit's changes (see
// internal/release): it pins the image in action.yml and the version,
// repository and checksums of the setup action, in the repository at
// --root. .github/workflows/release.yml runs it once the image is pushed.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kustomize-deploy/kustomize-deploy/internal/release"
)

func main() {
	root := flag.String("root", ".", "the repository's work tree")
	image := flag.String("image", "", "ghcr.io/<owner>/<name>:<tag>@sha256:<digest> to pin in action.yml")
	version := flag.String("version", "", "the release, v<major>.<minor>.<patch>")
	repo := flag.String("repository", "", "<owner>/<name> whose releases hold the binaries")
	sums := flag.String("checksums", "", "the release binaries' checksums.txt (sha256sum format)")
	flag.Parse()
	if err := pin(*root, *image, *version, *repo, *sums); err != nil {
		fmt.Fprintln(os.Stderr, "release-pin:", err)
		os.Exit(1)
	}
}

func pin(root, image, version, repo, sumsPath string) error {
	sums, err := os.ReadFile(sumsPath)
	if err != nil {
		return err
	}
	if err := release.CheckChecksums(sums); err != nil {
		return err
	}
	edit := func(rel string, change func([]byte) ([]byte, error)) error {
		path := filepath.Join(root, rel)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out, err := change(data)
		if err != nil {
			return err
		}
		return os.WriteFile(path, out, 0o644)
	}
	if err := edit("action.yml", func(b []byte) ([]byte, error) { return release.PinImage(b, image) }); err != nil {
		return err
	}
	if err := edit(filepath.Join("setup", "action.yml"), func(b []byte) ([]byte, error) { return release.PinSetup(b, version, repo) }); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, "setup", "checksums.txt"), sums, 0o644)
}
