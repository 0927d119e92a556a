package object

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// emitYAML writes m byte for byte as yaml.v2's Marshal writes it (keys in
// its order, scalars in the style its emitter picks, lines folded where
// it folds them, block scalars with its hints), for the documents it
// knows how to write: every key and string printable ASCII or line
// breaks, no key over 128 bytes or of several lines, no multi-line
// string the emitter would double-quote or keep with "|+". It writes a
// chart's objects several times faster than the emitter, which goes
// through an event per node and a buffer per document. ok is false for a
// document it does not write; the caller marshals that one with yaml.v2.
func emitYAML(m map[string]any) (out []byte, ok bool) {
	e := &emitter{whitespace: true, indention: true, b: make([]byte, 0, 1024)}
	if !e.node(m, -1, false) {
		return nil, false
	}
	if e.column != 0 {
		e.b = append(e.b, '\n')
	}
	return e.b, true
}

// emitter is the part of libyaml's emitter state that decides where
// lines break and spaces go: the column, and whether what was written
// last was whitespace or an indentation.
type emitter struct {
	b          []byte
	column     int
	whitespace bool
	indention  bool
}

const (
	bestIndent = 2
	bestWidth  = 80
	// maxSimpleKey is the longest key written as "key:".
	maxSimpleKey = 128
)

func (e *emitter) put(c byte) {
	e.b = append(e.b, c)
	e.column++
}

func (e *emitter) write(s string) {
	e.b = append(e.b, s...)
	e.column += len(s)
}

func (e *emitter) putBreak() {
	e.b = append(e.b, '\n')
	e.column = 0
}

func (e *emitter) writeIndent(indent int) {
	if indent < 0 {
		indent = 0
	}
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.putBreak()
	}
	for e.column < indent {
		e.put(' ')
	}
	e.whitespace = true
	e.indention = true
}

func (e *emitter) writeIndicator(s string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.put(' ')
	}
	e.write(s)
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

// node writes v, a value of a collection whose indent is indent (-1 at
// the root); mapping says it is a mapping's value.
func (e *emitter) node(v any, indent int, mapping bool) bool {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			e.writeIndicator("{", true, true, false)
			e.writeIndicator("}", false, false, false)
			return true
		}
		return e.mapping(v, increase(indent, false))
	case []any:
		if len(v) == 0 {
			e.writeIndicator("[", true, true, false)
			e.writeIndicator("]", false, false, false)
			return true
		}
		seqIndent := increase(indent, mapping && !e.indention)
		for _, item := range v {
			e.writeIndent(seqIndent)
			e.writeIndicator("-", true, false, true)
			if !e.node(item, seqIndent, false) {
				return false
			}
		}
		return true
	case string:
		return e.str(v, increase(indent, false), false)
	case nil:
		e.plain("null", increase(indent, false), false)
	case bool:
		e.plain(strconv.FormatBool(v), increase(indent, false), false)
	case int64:
		e.plain(strconv.FormatInt(v, 10), increase(indent, false), false)
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		e.plain(s, increase(indent, false), false)
	default:
		return false
	}
	return true
}

// increase is libyaml's indent for a collection or scalar in one at
// indent; an indentless sequence (a mapping's value) keeps it.
func increase(indent int, indentless bool) int {
	switch {
	case indent < 0:
		return 0
	case indentless:
		return indent
	}
	return indent + bestIndent
}

func (e *emitter) mapping(m map[string]any, indent int) bool {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !printableASCII(k) || len(k) > maxSimpleKey || longDigitRun(k) {
			return false // a key the emitter writes otherwise, or orders by its runes
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	for i, k := range keys {
		if i > 0 && !keyLess(keys[i-1], k) {
			return false // no strict order: the emitter's sort would pick one of its own
		}
		e.writeIndent(indent)
		if !e.str(k, increase(indent, false), true) {
			return false
		}
		e.writeIndicator(":", false, false, false)
		if !e.node(m[k], indent, true) {
			return false
		}
	}
	return true
}

// str writes a string scalar in the style yaml.v2 asks for and libyaml
// settles on; key says it is a mapping's (simple) key.
func (e *emitter) str(s string, indent int, key bool) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 || c > 0x7e) && c != '\n' {
			return false
		}
	}
	a := analyze(s)
	if strings.Contains(s, "\n") {
		if !a.blockAllowed || literalKeeps(s) {
			return false
		}
		e.literal(s, indent)
		return true
	}
	if !plainResolvesToString(s) {
		e.doubleQuoted(s, indent, !key)
		return true
	}
	switch {
	case a.blockPlainAllowed && !(key && s == ""):
		e.plain(s, indent, !key)
	case a.singleQuotedAllowed:
		e.singleQuoted(s, indent, !key)
	default:
		e.doubleQuoted(s, indent, !key)
	}
	return true
}

// analysis is what libyaml's scalar analysis finds of a printable ASCII
// string: which styles may write it.
type analysis struct {
	blockPlainAllowed, singleQuotedAllowed, blockAllowed bool
}

func analyze(s string) analysis {
	if s == "" {
		return analysis{blockPlainAllowed: true, singleQuotedAllowed: true}
	}
	blockIndicators := strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...")
	var lineBreaks, leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	var previousSpace, previousBreak bool
	precededByWhitespace := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		followedByWhitespace := i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == '\t'
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				blockIndicators = true
			case '?', ':', '-':
				if followedByWhitespace {
					blockIndicators = true
				}
			}
		} else {
			switch c {
			case ':':
				if followedByWhitespace {
					blockIndicators = true
				}
			case '#':
				if precededByWhitespace {
					blockIndicators = true
				}
			}
		}
		switch c {
		case ' ':
			if i == 0 {
				leadingSpace = true
			}
			if i+1 == len(s) {
				trailingSpace = true
			}
			if previousBreak {
				breakSpace = true
			}
			previousSpace, previousBreak = true, false
		case '\n':
			lineBreaks = true
			if i == 0 {
				leadingBreak = true
			}
			if i+1 == len(s) {
				trailingBreak = true
			}
			if previousSpace {
				spaceBreak = true
			}
			previousSpace, previousBreak = false, true
		default:
			previousSpace, previousBreak = false, false
		}
		precededByWhitespace = c == ' ' || c == '\t' || c == '\n'
	}
	a := analysis{blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak || lineBreaks || blockIndicators {
		a.blockPlainAllowed = false
	}
	if trailingSpace {
		a.blockAllowed = false
	}
	if breakSpace {
		a.blockPlainAllowed, a.singleQuotedAllowed = false, false
	}
	if spaceBreak {
		a.blockPlainAllowed, a.singleQuotedAllowed, a.blockAllowed = false, false, false
	}
	return a
}

func (e *emitter) plain(s string, indent int, allowBreaks bool) {
	if !e.whitespace {
		e.put(' ')
	}
	spaces := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if allowBreaks && !spaces && e.column > bestWidth && !(i+1 < len(s) && s[i+1] == ' ') {
				e.writeIndent(indent)
			} else {
				e.put(' ')
			}
			spaces = true
			continue
		}
		e.put(s[i])
		e.indention = false
		spaces = false
	}
	e.whitespace = false
	e.indention = false
}

func (e *emitter) singleQuoted(s string, indent int, allowBreaks bool) {
	e.writeIndicator("'", true, false, false)
	spaces := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if allowBreaks && !spaces && e.column > bestWidth && i > 0 && i < len(s)-1 && s[i+1] != ' ' {
				e.writeIndent(indent)
			} else {
				e.put(' ')
			}
			spaces = true
			continue
		}
		if s[i] == '\'' {
			e.put('\'')
		}
		e.put(s[i])
		e.indention = false
		spaces = false
	}
	e.writeIndicator("'", false, false, false)
	e.whitespace = false
	e.indention = false
}

// doubleQuoted writes a string without line breaks (str sends those to
// literal or refuses them).
func (e *emitter) doubleQuoted(s string, indent int, allowBreaks bool) {
	e.writeIndicator(`"`, true, false, false)
	spaces := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			e.put('\\')
			e.put(c)
			spaces = false
		case ' ':
			if allowBreaks && !spaces && e.column > bestWidth && i > 0 && i < len(s)-1 {
				e.writeIndent(indent)
				if s[i+1] == ' ' {
					e.put('\\')
				}
			} else {
				e.put(' ')
			}
			spaces = true
		default:
			e.put(c)
			spaces = false
		}
	}
	e.writeIndicator(`"`, false, false, false)
	e.whitespace = false
	e.indention = false
}

// literalKeeps says whether libyaml writes s with "|+" (it ends with two
// line breaks, or is one), which leaves the document open-ended.
func literalKeeps(s string) bool {
	return s == "\n" || strings.HasSuffix(s, "\n\n")
}

func (e *emitter) literal(s string, indent int) {
	e.writeIndicator("|", true, false, false)
	if s[0] == ' ' || s[0] == '\n' {
		e.writeIndicator(strconv.Itoa(bestIndent), false, false, false)
	}
	if !strings.HasSuffix(s, "\n") {
		e.writeIndicator("-", false, false, false)
	}
	e.putBreak()
	e.indention, e.whitespace = true, true
	breaks := true
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			e.putBreak()
			e.indention, breaks = true, true
			continue
		}
		if breaks {
			e.writeIndent(indent)
		}
		e.put(s[i])
		e.indention, breaks = false, false
	}
}

// printableASCII says whether k is printable ASCII, no line breaks.
func printableASCII(k string) bool {
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// longDigitRun says whether k holds a run of digits whose number
// overflows yaml.v2's comparison of keys: its order is no order then.
func longDigitRun(k string) bool {
	run := 0
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			run = 0
			continue
		}
		if run++; run > 18 {
			return true
		}
	}
	return false
}

// keyLess is yaml.v2's order of string keys: letters before other
// characters, runs of digits by their number. It compares printable
// ASCII keys (mapping refuses others before sorting), where a rune is a
// byte, unicode.IsLetter is [A-Za-z] and unicode.IsDigit is [0-9].
func keyLess(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		al, bl := isLetter(a[i]), isLetter(b[i])
		if al && bl {
			return a[i] < b[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if a[i] == '0' || b[i] == '0' {
			for j := i - 1; j >= 0 && isDigit(a[j]); j-- {
				if a[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		for ai = i; ai < len(a) && isDigit(a[ai]); ai++ {
			an = an*10 + int64(a[ai]-'0')
		}
		for bi = i; bi < len(b) && isDigit(b[bi]); bi++ {
			bn = bn*10 + int64(b[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return a[i] < b[i]
	}
	return len(a) < len(b)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Values that a plain scalar would be read as other than a string, as
// yaml.v2 resolves them (YAML 1.1).
var (
	notStrings = map[string]bool{
		"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "true": true, "True": true, "TRUE": true,
		"on": true, "On": true, "ON": true, "n": true, "N": true, "no": true, "No": true, "NO": true,
		"false": true, "False": true, "FALSE": true, "off": true, "Off": true, "OFF": true,
		"": true, "~": true, "null": true, "Null": true, "NULL": true,
		".nan": true, ".NaN": true, ".NAN": true, ".inf": true, ".Inf": true, ".INF": true,
		"+.inf": true, "+.Inf": true, "+.INF": true, "-.inf": true, "-.Inf": true, "-.INF": true,
	}
	yamlStyleFloat     = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	base60Float        = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)
	timestampFormats   = []string{"2006-1-2T15:4:5.999999999Z07:00", "2006-1-2t15:4:5.999999999Z07:00", "2006-1-2 15:4:5.999999999", "2006-1-2"}
	mapHintCharacters  = "yYnNtTfFoO~"
	signHintCharacters = "+-"
)

// plainResolvesToString says whether yaml.v2 writes s as a plain scalar
// (read back as a string), not quoted.
func plainResolvesToString(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	digit := c >= '0' && c <= '9'
	if !digit && c != '.' && strings.IndexByte(mapHintCharacters, c) < 0 && strings.IndexByte(signHintCharacters, c) < 0 {
		return true // yaml.v2 looks no further than the first character
	}
	if notStrings[s] {
		return false
	}
	switch {
	case strings.IndexByte(mapHintCharacters, c) >= 0:
		return true
	case c == '.':
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case digit || strings.IndexByte(signHintCharacters, c) >= 0:
		if isTimestamp(s) {
			return false
		}
		plain := strings.ReplaceAll(s, "_", "")
		if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return false
		}
		if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return false
		}
		if yamlStyleFloat.MatchString(plain) {
			if _, err := strconv.ParseFloat(plain, 64); err == nil {
				return false
			}
		}
		if rest, ok := strings.CutPrefix(plain, "0b"); ok {
			if _, err := strconv.ParseInt(rest, 2, 64); err == nil {
				return false
			}
			if _, err := strconv.ParseUint(rest, 2, 64); err == nil {
				return false
			}
		} else if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
			if _, err := strconv.ParseInt("-"+rest, 2, 64); err == nil {
				return false
			}
		}
		// A base-60 float reads as a string, but yaml.v2 quotes it.
		return !(strings.IndexByte(s, ':') >= 0 && base60Float.MatchString(s))
	}
	return true
}

func isTimestamp(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, f := range timestampFormats {
		if _, err := time.Parse(f, s); err == nil {
			return true
		}
	}
	return false
}
