// Package generictest tests controllers built on this library without a
// cluster: the real factories and informers (typed and unstructured) over
// client-go's fake dynamic client, seeded from objects or YAML fixtures,
// started and synced for you, shut down with the test.
//
// Changes made through a Fake (Create, Update, Delete, WithoutWatch) return
// once every handler registered on the Fake's informers has seen them, so
// tests need no sleeps; WaitFor waits, without polling, until a lister
// shows the state a controller should reach, and fails with a cmp.Diff;
// Recorder records what a handler receives. The Fake waits for its own
// informers only: an informer the code under test makes itself over
// Fake.Dynamic may open its watch after a change, and the fake client
// sends a watch no delete made before the watch opened.
//
// The code under test writes through Fake.Dynamic (client-go's fake
// dynamic client) or Fake.Clientset (its fake typed clientset): both serve
// one store, and every write, whichever the client, is stamped with a new
// resourceVersion and reaches the informers by their list and watch.
//
// The Fake learns what each of its informers selects (namespace, label and
// field selectors, shard: the factory's options and the informer's own)
// from the informer's requests, and a change waits only for the handlers
// of the informers that see it. It serves as an API server without the
// ShardedListAndWatch feature gate: it ignores a request's ShardSelector,
// and a sharded informer keeps its shard on the client, as against such a
// server.
//
// Every wait is bounded (Timeout, 30 seconds by default): one that is not
// met fails the test, saying what it waited for and what it saw.
//
//	fake := generictest.New(t, scheme, generictest.Files("testdata/widgets.yaml"))
//	widgets := generictest.NewInformer[*v1.Widget](fake)
//	rec := generictest.NewRecorder[*v1.Widget]()
//	widgets.AddEventHandler(rec)
//	fake.Delete(widget)
//	// rec.Events() now ends with {DELETED team-a/small}
//
// A Fake is for one test; tests with their own Fakes may run in parallel.
package generictest
