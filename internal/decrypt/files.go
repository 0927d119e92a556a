package decrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
	"sigs.k8s.io/kustomize/api/konfig"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// DecryptFiles decrypts in place the SOPS-encrypted files that the
// secretGenerators of the kustomization at path read (files: and envs:),
// following every local directory listed in resources and components
// recursively, as Flux's DecryptSources does. root must be a scratch copy:
// files are overwritten with their plaintext.
//
// path is relative to root or absolute inside it. Every reference must stay
// inside root, lexically and after resolving symlinks (else the error is an
// *OutsideRootError, naming the kustomization and the entry), and name a
// regular file no larger than Options.MaxFileSize. Files without sops
// metadata are left untouched, as are directories without a kustomization
// file and references that do not exist locally (remote bases; the build
// reports broken ones). Because the bytes on disk are exactly what sops wrote, the
// MAC is verified, as the sops CLI does. It returns how many files it
// rewrote.
func (d *Decryptor) DecryptFiles(ctx context.Context, root, path string) (int, error) {
	walked, err := d.walkFiles(ctx, root, path, d.decryptFile)
	return walked.Rewritten, err
}

// walkFiles rewrites with transform, in the scratch copy at root, the
// files the secretGenerators of the kustomization at path read, following
// its local resources and components (see DecryptFiles for the checks).
// It returns how many files it rewrote, of how many encrypted ones.
func (d *Decryptor) walkFiles(ctx context.Context, root, path string, transform func(ctx context.Context, data []byte, f formats.Format) ([]byte, error)) (Sealed, error) {
	r, err := newFSRoot(root)
	if err != nil {
		return Sealed{}, err
	}
	given := entry{field: "path", path: path}
	start, err := r.rel("", path)
	if err != nil {
		return Sealed{}, given.fail(path, err)
	}
	w := &fileWalker{d: d, ctx: ctx, root: r, dirs: map[string]bool{}, files: map[string]bool{}, transform: transform}
	err = w.visitDir(start, given)
	return Sealed{Rewritten: w.rewritten, Encrypted: w.encrypted}, err
}

// decryptFile decrypts a whole encrypted file, verifying its MAC.
func (d *Decryptor) decryptFile(ctx context.Context, data []byte, f formats.Format) ([]byte, error) {
	return d.decryptData(ctx, data, f, true)
}

// entry is a path as a kustomization lists it, for errors.
type entry struct {
	kustomization string // the listing file, relative to the root; "" for DecryptFiles' path
	field         string // "resource", "component", "secretGenerator file", …
	path          string // as written
}

// fail wraps err, met on the way to rel (the entry's path relative to the
// root): leaving the root is the kustomization's mistake, anything else a
// failure to decrypt rel.
func (e entry) fail(rel string, err error) error {
	if errors.Is(err, ErrOutsideRoot) {
		return &OutsideRootError{Kustomization: e.kustomization, Field: e.field, Entry: e.path, Symlink: errors.Is(err, errSymlinkOut)}
	}
	return &Error{Object: rel, Source: e.kustomization, Err: err}
}

// fileWalker carries the state of one DecryptFiles (or SealFiles) call.
type fileWalker struct {
	d     *Decryptor
	ctx   context.Context
	root  *fsRoot
	dirs  map[string]bool // real directories visited
	files map[string]bool // real files handled
	// transform turns an encrypted file in format f into what the build
	// reads; returning data unchanged leaves the file alone.
	transform func(ctx context.Context, data []byte, f formats.Format) ([]byte, error)
	// rewritten counts the files transform changed; encrypted, the
	// encrypted files handed to it.
	rewritten, encrypted int
}

// visitDir handles the kustomization in dir (relative to the root), which
// from lists.
func (w *fileWalker) visitDir(dir string, from entry) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	real, err := w.root.resolve(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // a remote base, or a broken reference the build reports
	case err != nil:
		return from.fail(dir, err)
	}
	if w.dirs[real] {
		return nil
	}
	w.dirs[real] = true
	if fi, err := w.root.lstat(real); err != nil {
		return from.fail(dir, err)
	} else if !fi.IsDir() {
		return nil // a resource file: its objects go through DecryptObjects
	}

	kusFile, kus, err := w.loadKustomization(real)
	if err != nil || kus == nil {
		return err
	}
	for _, gen := range kus.SecretGenerator {
		for _, src := range gen.FileSources {
			// [key=]path; sops chose the format from the file's own name.
			_, p, ok := strings.Cut(src, "=")
			if !ok {
				p = src
			}
			if err := w.decryptFile(real, entry{kusFile, "secretGenerator file", p}, formats.Binary); err != nil {
				return err
			}
		}
		for _, p := range gen.EnvSources {
			// Env files are dotenv whatever their name.
			if err := w.decryptFile(real, entry{kusFile, "secretGenerator env file", p}, formats.Dotenv); err != nil {
				return err
			}
		}
	}
	var subs []entry
	for _, p := range kus.Resources {
		subs = append(subs, entry{kusFile, "resource", p})
	}
	for _, p := range kus.Components {
		subs = append(subs, entry{kusFile, "component", p})
	}
	for _, e := range subs {
		sub, err := w.root.rel(real, e.path)
		if err != nil {
			return e.fail(e.path, err)
		}
		if err := w.visitDir(sub, e); err != nil {
			return err
		}
	}
	return nil
}

// loadKustomization reads the kustomization file in dir, or returns nil
// when there is none.
func (w *fileWalker) loadKustomization(dir string) (string, *kustypes.Kustomization, error) {
	var found string
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		rel := filepath.Join(dir, name)
		if _, err := w.root.lstat(rel); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return "", nil, &Error{Object: rel, Err: err}
		}
		if found != "" {
			return "", nil, &Error{Object: dir, Err: fmt.Errorf("found both %s and %s", filepath.Base(found), name)}
		}
		found = rel
	}
	if found == "" {
		return "", nil, nil
	}
	real, err := w.root.resolve(found)
	if err != nil {
		return "", nil, entry{field: "kustomization", path: found}.fail(found, err)
	}
	data, err := w.readConfined(real)
	if err != nil {
		return "", nil, &Error{Object: found, Err: err}
	}
	var kus kustypes.Kustomization
	if err := yaml.Unmarshal(data, &kus); err != nil {
		// Not a decryption failure: the kustomization is wrong whatever the
		// keys, and is named as the build names it.
		return "", nil, fmt.Errorf("%s: invalid kustomization: %w", filepath.ToSlash(found), err)
	}
	kus.FixKustomization() // folds legacy bases: and env: into resources and envs
	return found, &kus, nil
}

// decryptFile decrypts the file e, listed by a kustomization in directory
// dir, if it is sops-encrypted.
func (w *fileWalker) decryptFile(dir string, e entry, unknown formats.Format) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if e.path == "" {
		return nil
	}
	rel, err := w.root.rel(dir, e.path)
	if err != nil {
		return e.fail(e.path, err)
	}
	fail := func(err error) error { return e.fail(rel, err) }
	real, err := w.root.resolve(rel)
	if err != nil {
		return fail(err)
	}
	if w.files[real] {
		return nil
	}
	data, err := w.readConfined(real)
	if err != nil {
		return fail(err)
	}
	w.files[real] = true
	f, encrypted := detect(data, formatFor(real, unknown))
	if !encrypted {
		// Encrypted values without the metadata to decrypt them: a
		// truncated or hand-edited file the build must not read as is.
		if bytes.Contains(data, []byte(encValue)) {
			return fail(fmt.Errorf("%w: the file has sops-encrypted values but no sops metadata", ErrMalformed))
		}
		return nil
	}
	w.encrypted++
	out, err := w.transform(w.ctx, data, f)
	if err != nil {
		return fail(err)
	}
	if bytes.Equal(out, data) {
		return nil
	}
	fi, err := w.root.lstat(real)
	if err != nil {
		return fail(err)
	}
	// Replace, not overwrite: the file may be a hard link to the checkout.
	if err := workspace.WriteFile(w.root.path(real), out, fi.Mode().Perm()); err != nil {
		return fail(err)
	}
	w.rewritten++
	return nil
}

// readConfined reads rel, a real path (no symlinks) relative to the root,
// if it is a regular file within the size limit.
func (w *fileWalker) readConfined(rel string) ([]byte, error) {
	fi, err := w.root.lstat(rel)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	limit := w.d.maxFileSize
	if fi.Size() > limit {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, fi.Size(), limit)
	}
	f, err := os.Open(w.root.path(rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read one byte past the limit in case the file grew since Lstat.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return data, nil
}
