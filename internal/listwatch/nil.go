package listwatch

import "reflect"

// isNilPointer reports whether v holds a nil pointer (a typed nil in an
// interface), which v == nil does not catch: what a source or converter
// returns is checked with it before the reflector could panic on it.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
