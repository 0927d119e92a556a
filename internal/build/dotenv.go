package build

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ParseDotenv reads variables for --substitute-from FILE. Each line is
// KEY=VALUE, optionally preceded by "export ". Blank lines and lines
// starting with # are ignored. VALUE may be 'single quoted' (taken
// literally), "double quoted" (\", \\ and \n are unescaped) or bare (trimmed,
// and a " #" starts a comment). A later line overrides an earlier one.
// Errors name file:line.
func ParseDotenv(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // editors on Windows add a BOM
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "export "))
		k, v, err := parseDotenvLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		vars[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vars, nil
}

// parseDotenvLine parses one trimmed, non-comment line.
func parseDotenvLine(line string) (string, string, error) {
	k, v, ok := strings.Cut(line, "=")
	if !ok {
		return "", "", errors.New("expected KEY=VALUE, got a line without '='")
	}
	k = strings.TrimSpace(k)
	if !varName.MatchString(k) {
		return "", "", fmt.Errorf("variable name %q is invalid: it must match %s", k, varName)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return k, "", nil
	}
	switch q := v[0]; q {
	case '\'', '"':
		val, rest, err := unquote(v)
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", k, err)
		}
		if rest = strings.TrimSpace(rest); rest != "" && !strings.HasPrefix(rest, "#") {
			return "", "", fmt.Errorf("%s: unexpected %q after the closing quote", k, rest)
		}
		return k, val, nil
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return k, v, nil
}

// unquote reads a quoted value at the start of s and returns it and what
// follows the closing quote. Values may not span lines.
func unquote(s string) (val, rest string, err error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), s[i+1:], nil
		case c == '\\' && q == '"' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case '"', '\\':
				b.WriteByte(s[i])
			default:
				b.WriteByte('\\')
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("missing closing %c (values cannot span lines)", q)
}

// ParseKeyValue splits a KEY=VALUE flag value. VALUE is taken literally
// and may be empty or contain '='. Errors never quote the value, which may
// be secret.
func ParseKeyValue(s string) (k, v string, err error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("expected KEY=VALUE, got %d character(s) without '='", len(s))
	}
	if !varName.MatchString(k) {
		return "", "", fmt.Errorf("variable name %q is invalid: it must match %s", k, varName)
	}
	return k, v, nil
}
