package object

import "strings"

// EncryptedPrefix starts every value sops encrypted, in every format.
const EncryptedPrefix = "ENC[AES256_GCM,data:"

// IsEncrypted reports whether v is one value sops encrypted:
// ENC[AES256_GCM,data:…,iv:…,tag:…,type:…]. Decryption replaces such
// values; diffs mask the ones left (an offline diff decrypts nothing).
func IsEncrypted(v string) bool {
	return strings.HasPrefix(v, EncryptedPrefix) && strings.HasSuffix(v, "]")
}
