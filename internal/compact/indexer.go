package compact

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// Indexer shows a client-go store of Records (an informer's, with a
// compact store) as a store of objects, for code that reads an informer's
// cache.Indexer itself (Informer().GetIndexer(), GetStore()): a read
// decodes each object it returns (through the Codec's decoded objects),
// and an object written is made compact first. Keys, index keys and index
// values are the store's own, read without decoding.
type Indexer[T runtime.Object] struct {
	// Store is the informer's store of Records.
	Store cache.Indexer
	Codec *Codec[T]
	// Report is told of a Record that did not decode (never expected: the
	// Codec made it), which List leaves out.
	Report func(error)
}

var _ cache.Indexer = (*Indexer[runtime.Object])(nil)

func (x *Indexer[T]) compact(obj any) (any, error) {
	if t, ok := obj.(T); ok {
		return x.Codec.Compact(t)
	}
	return obj, nil
}

func (x *Indexer[T]) decode(obj any) (any, error) { return x.Codec.Object(obj) }

// decodeAll decodes objs in place, leaving out (and reporting) those that
// do not decode.
func (x *Indexer[T]) decodeAll(objs []any) []any {
	out := objs[:0]
	for _, obj := range objs {
		decoded, err := x.decode(obj)
		if err != nil {
			x.Report(err)
			continue
		}
		out = append(out, decoded)
	}
	return out
}

func (x *Indexer[T]) Add(obj any) error {
	r, err := x.compact(obj)
	if err != nil {
		return err
	}
	return x.Store.Add(r)
}

func (x *Indexer[T]) Update(obj any) error {
	r, err := x.compact(obj)
	if err != nil {
		return err
	}
	return x.Store.Update(r)
}

func (x *Indexer[T]) Delete(obj any) error { return x.Store.Delete(obj) }

func (x *Indexer[T]) List() []any { return x.decodeAll(x.Store.List()) }

func (x *Indexer[T]) ListKeys() []string { return x.Store.ListKeys() }

func (x *Indexer[T]) LastStoreSyncResourceVersion() string {
	return x.Store.LastStoreSyncResourceVersion()
}

func (x *Indexer[T]) Bookmark(rv string) { x.Store.Bookmark(rv) }

func (x *Indexer[T]) Get(obj any) (any, bool, error) {
	item, exists, err := x.Store.Get(obj)
	if err != nil || !exists {
		return item, exists, err
	}
	item, err = x.decode(item)
	return item, err == nil, err
}

func (x *Indexer[T]) GetByKey(key string) (any, bool, error) {
	item, exists, err := x.Store.GetByKey(key)
	if err != nil || !exists {
		return item, exists, err
	}
	item, err = x.decode(item)
	return item, err == nil, err
}

func (x *Indexer[T]) Replace(list []any, rv string) error {
	records := make([]any, 0, len(list))
	for _, obj := range list {
		r, err := x.compact(obj)
		if err != nil {
			return err
		}
		records = append(records, r)
	}
	return x.Store.Replace(records, rv)
}

func (x *Indexer[T]) Resync() error { return x.Store.Resync() }

// Index, like ByIndex, returns the objects Store returns, decoded, with
// its error: a Store may answer objects and an error together (a partial
// answer).
func (x *Indexer[T]) Index(indexName string, obj any) ([]any, error) {
	objs, err := x.Store.Index(indexName, obj)
	if objs == nil {
		return nil, err
	}
	return x.decodeAll(objs), err
}

func (x *Indexer[T]) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return x.Store.IndexKeys(indexName, indexedValue)
}

func (x *Indexer[T]) ListIndexFuncValues(indexName string) []string {
	return x.Store.ListIndexFuncValues(indexName)
}

// ByIndex returns the objects Store returns, decoded, with its error: a
// Store may answer objects and an error together (a partial answer).
func (x *Indexer[T]) ByIndex(indexName, indexedValue string) ([]any, error) {
	objs, err := x.Store.ByIndex(indexName, indexedValue)
	if objs == nil {
		return nil, err
	}
	return x.decodeAll(objs), err
}

func (x *Indexer[T]) GetIndexers() cache.Indexers { return x.Store.GetIndexers() }

// AddIndexers adds index functions that get each object decoded.
func (x *Indexer[T]) AddIndexers(indexers cache.Indexers) error {
	return x.Store.AddIndexers(x.Codec.IndexersOfObjects(indexers))
}

// IndexersOfObjects returns indexers that give each function the object of
// a Record (decoded), and anything else as it is. The namespace index's
// function (cache.MetaNamespaceIndexFunc) gets the Record itself: it reads
// the namespace, which the Record keeps.
func (c *Codec[T]) IndexersOfObjects(indexers cache.Indexers) cache.Indexers {
	out := make(cache.Indexers, len(indexers))
	for name, fn := range indexers {
		if fn == nil || readsNamespaceOnly(fn) {
			out[name] = fn // nil: the store's (or the informer's) own refusal
			continue
		}
		out[name] = func(obj any) ([]string, error) {
			decoded, err := c.Object(obj)
			if err != nil {
				return nil, err
			}
			return fn(decoded)
		}
	}
	return out
}

// readsNamespaceOnly reports whether fn is cache.MetaNamespaceIndexFunc.
func readsNamespaceOnly(fn cache.IndexFunc) bool {
	return reflect.ValueOf(fn).Pointer() == reflect.ValueOf(cache.MetaNamespaceIndexFunc).Pointer()
}
