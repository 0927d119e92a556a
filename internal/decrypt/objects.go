package decrypt

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// DecryptObjects decrypts, in place, the objects of a kustomize build:
//
//   - every object with a top-level "sops" field is a SOPS-encrypted
//     manifest and is replaced by its plaintext (Flux's DecryptResource);
//   - in a Secret, every data entry that is a whole sops-encrypted file (a
//     secretGenerator source DecryptFiles could not reach, e.g. in a remote
//     base) is decrypted in its own format, as Flux does.
//
// Decrypted content replaces obj.Object; the pointers stay. Afterwards any
// Secret that still carries sops data fails with *StillEncryptedError and is
// left as it was. sources maps an object to the file it was built from,
// for error messages. Failures are collected per object and joined.
//
// The MAC of a built manifest is not verified, exactly like Flux, whose
// checkSopsMac is off by default "as arbitrary data gets injected into most
// resources, causing the integrity check to fail": kustomize adds a
// namespace, labels, annotations or a name prefix after encryption, and
// serialising the object loses the key order the MAC was computed in.
// Every encrypted value is still authenticated on its own: sops seals it
// with AES-GCM using the value's path in the document as additional data,
// so a changed or moved ciphertext fails to decrypt. Files decrypted by
// DecryptFiles and the whole-file data entries are unchanged bytes, and for
// them the MAC is verified.
func (d *Decryptor) DecryptObjects(ctx context.Context, objs []*unstructured.Unstructured, sources map[object.ID]string) error {
	var errs []error
	for _, u := range objs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if u == nil {
			continue
		}
		id := object.IDOf(u)
		src := sources[id]
		decrypted, err := d.decryptObject(ctx, u.Object)
		if err != nil {
			errs = append(errs, &Error{Object: id.String(), Source: src, Err: err})
			continue
		}
		if field := stillEncrypted(decrypted); field != "" {
			errs = append(errs, &StillEncryptedError{Object: id.String(), Source: src, Field: field})
			continue
		}
		u.Object = decrypted
	}
	return errors.Join(errs...)
}

// decryptObject returns obj decrypted, or obj itself when there was nothing
// to decrypt. It never modifies obj.
func (d *Decryptor) decryptObject(ctx context.Context, obj map[string]interface{}) (map[string]interface{}, error) {
	out := obj
	if _, ok := obj["sops"]; ok {
		m, err := d.decryptManifest(ctx, obj)
		if err != nil {
			return nil, err
		}
		out = m
	}
	if isSecret(out) {
		return d.decryptDataEntries(ctx, out)
	}
	return out, nil
}

// decryptManifest decrypts a whole sops-encrypted object. JSON is the common
// form of a built object, so it goes through sops's JSON store.
func (d *Decryptor) decryptManifest(ctx context.Context, obj map[string]interface{}) (map[string]interface{}, error) {
	in, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	plain, err := d.decryptData(ctx, in, formats.Json, false)
	if err != nil {
		return nil, err
	}
	var out map[string]interface{}
	// utiljson keeps integers as int64, as unstructured expects.
	if err := utiljson.Unmarshal(plain, &out); err != nil {
		return nil, fmt.Errorf("%w: decrypted manifest is not a JSON object", ErrMalformed)
	}
	return out, nil
}

// decryptDataEntries decrypts the Secret data entries that hold a whole
// sops-encrypted file. It copies obj before changing anything.
func (d *Decryptor) decryptDataEntries(ctx context.Context, obj map[string]interface{}) (map[string]interface{}, error) {
	data, _ := obj["data"].(map[string]interface{})
	var changed map[string]interface{}
	for _, key := range sortedKeys(data) {
		s, ok := data[key].(string)
		if !ok {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			continue // not base64: let the apply step report it
		}
		f, encrypted := detect(raw, formatFor(key, formats.Binary))
		if !encrypted {
			continue
		}
		plain, err := d.decryptData(ctx, raw, f, true)
		if err != nil {
			return nil, fmt.Errorf("data key '%s': %w", key, err)
		}
		if changed == nil {
			changed = make(map[string]interface{}, len(data))
			for k, v := range data {
				changed[k] = v
			}
		}
		changed[key] = base64.StdEncoding.EncodeToString(plain)
	}
	if changed == nil {
		return obj, nil
	}
	out := make(map[string]interface{}, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	out["data"] = changed
	return out, nil
}

// stillEncrypted returns where obj still holds sops data, or "".
func stillEncrypted(obj map[string]interface{}) string {
	if _, ok := obj["sops"]; ok {
		return "sops"
	}
	if !isSecret(obj) {
		return ""
	}
	data, _ := obj["data"].(map[string]interface{})
	for _, key := range sortedKeys(data) {
		s, _ := data[key].(string)
		if strings.Contains(s, encValue) {
			return "data." + key
		}
		if raw, err := base64.StdEncoding.DecodeString(s); err == nil && strings.Contains(string(raw), encValue) {
			return "data." + key
		}
	}
	stringData, _ := obj["stringData"].(map[string]interface{})
	for _, key := range sortedKeys(stringData) {
		if s, _ := stringData[key].(string); strings.Contains(s, encValue) {
			return "stringData." + key
		}
	}
	return ""
}

// isSecret reports whether obj is a core/v1 Secret.
func isSecret(obj map[string]interface{}) bool {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	return kind == "Secret" && apiVersion == "v1"
}

func sortedKeys(m map[string]interface{}) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// HoldsCiphertext says whether DecryptObjects has anything to decrypt in
// u, or would refuse it as still encrypted: SOPS metadata, or a Secret's
// value holding SOPS ciphertext.
func HoldsCiphertext(u *unstructured.Unstructured) bool {
	return u != nil && stillEncrypted(u.Object) != ""
}
