// Package generic provides type-parameterized informers and listers.
package generic
