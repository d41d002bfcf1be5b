// Package kwatch is the program behind e2e/cmd/kwatch: it watches resources
// through the library as a controller would see them, prints the initial
// sync's progress, one line per event and a summary, and, against the
// embedded API server with no resource named, runs a scripted demo.
package kwatch
