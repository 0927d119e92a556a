package object

import "testing"

func TestIsEncrypted(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{
		"ENC[AES256_GCM,data:bXk=,iv:aXY=,tag:dGFn,type:str]": true,
		"ENC[AES256_GCM,data:bXk=,iv:aXY=,tag:dGFn,type:int]": true,
		"ENC[AES256_GCM,data:truncated":                       false,
		"s3cr3t":                                              false,
		"":                                                    false,
		"prefix ENC[AES256_GCM,data:bXk=,type:str]": false,
	} {
		if got := IsEncrypted(v); got != want {
			t.Errorf("IsEncrypted(%q) = %v, want %v", v, got, want)
		}
	}
}
