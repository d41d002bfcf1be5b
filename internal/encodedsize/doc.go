// Package encodedsize measures how many bytes an object's encoding takes,
// without encoding it: JSON counts the bytes encoding/json's Marshal would
// write for a value of the kinds an unstructured object holds, walking it
// once and allocating nothing.
//
// It imports nothing of this module.
package encodedsize
