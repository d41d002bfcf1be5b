package encodedsize

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// JSON returns len(json.Marshal(v)) for the values an unstructured object
// holds (map[string]any, []any, string, bool, nil, the integer and float
// kinds, json.Number), walking v once and allocating nothing; for a value
// of any other kind in it, it asks json.Marshal for that value. A value
// json.Marshal cannot encode (a NaN or an infinite float, a channel) counts
// as 0 bytes, where json.Marshal fails.
//
// It reads v only, and is safe for concurrent use with other readers of v.
func JSON(v any) int {
	switch v := v.(type) {
	case nil:
		return len("null")
	case map[string]any:
		return object(v)
	case []any:
		return array(v)
	case string:
		return String(v)
	case bool:
		if v {
			return len("true")
		}
		return len("false")
	case int64:
		return intLen(v)
	case float64:
		return floatLen(v, 64)
	case int:
		return intLen(int64(v))
	case int32:
		return intLen(int64(v))
	case int16:
		return intLen(int64(v))
	case int8:
		return intLen(int64(v))
	case uint64:
		return uintLen(v)
	case uint:
		return uintLen(uint64(v))
	case uint32:
		return uintLen(uint64(v))
	case uint16:
		return uintLen(uint64(v))
	case uint8:
		return uintLen(uint64(v))
	case float32:
		return floatLen(float64(v), 32)
	case json.Number:
		if v == "" {
			return 1 // json.Marshal writes an empty Number as 0
		}
		return len(v)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(data)
}

// object is the length of {"key":value,...}; a nil map is null.
func object(m map[string]any) int {
	if m == nil {
		return len("null")
	}
	n := 2 // {}
	for key, value := range m {
		n += String(key) + 1 + JSON(value) // "key":value
	}
	if len(m) > 1 {
		n += len(m) - 1 // commas
	}
	return n
}

// array is the length of [value,...]; a nil slice is null.
func array(a []any) int {
	if a == nil {
		return len("null")
	}
	n := 2 // []
	for _, value := range a {
		n += JSON(value)
	}
	if len(a) > 1 {
		n += len(a) - 1
	}
	return n
}

// String returns the length of s as encoding/json writes a string: quoted,
// with HTML characters escaped (<, >, & as \u003c...), control characters
// escaped, U+2028 and U+2029 as \u2028 and \u2029, and each invalid UTF-8
// byte as the replacement character (see invalidByteLen).
func String(s string) int {
	n := 2 // the quotes
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			n += int(asciiLen[b])
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			n += invalidByteLen
		case c == '\u2028' || c == '\u2029':
			n += len(`\u2028`)
		default:
			n += size
		}
		i += size
	}
	return n
}

// invalidByteLen is the length of what encoding/json writes for a byte
// that is not valid UTF-8: U+FFFD, written as itself (3 bytes) by the
// json/v2-based encoding/json of Go 1.27 (GOEXPERIMENT=jsonv2, the
// default), escaped (\ufffd, 6 bytes) by the one before.
var invalidByteLen = func() int {
	data, _ := json.Marshal("\xff")
	return len(data) - 2
}()

// asciiLen is the length of each ASCII byte in an encoding/json string:
// 1, 2 for those escaped with a backslash ("\\n"), 6 for those escaped as
// \u00XX (other control characters, and <, > and &, which encoding/json
// escapes for HTML).
var asciiLen = func() (lengths [utf8.RuneSelf]uint8) {
	for b := range lengths {
		switch {
		case b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
			lengths[b] = 2
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			lengths[b] = uint8(len(`\u0000`))
		default:
			lengths[b] = 1
		}
	}
	return lengths
}()

func intLen(i int64) int {
	var buf [20]byte
	return len(strconv.AppendInt(buf[:0], i, 10))
}

func uintLen(u uint64) int {
	var buf [20]byte
	return len(strconv.AppendUint(buf[:0], u, 10))
}

// floatLen is the length of f as encoding/json writes a float of bits
// bits: as ES6 converts a number to a string; 0 for NaN and infinities,
// which it cannot write.
func floatLen(f float64, bits int) int {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, format, -1, bits)
	n := len(b)
	if format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		n-- // e-09 is written e-9
	}
	return n
}
