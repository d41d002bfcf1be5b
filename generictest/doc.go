// Package generictest tests controllers built on this library without a
// cluster: the real factories and informers (typed, unstructured and
// metadata-only) over client-go's fake dynamic client, seeded from objects
// or YAML fixtures, started and synced for you, shut down with the test.
//
// Changes made through a Fake (Create, Update, UpdateStatus, Delete,
// WithoutWatch) return once every handler registered on the Fake's
// informers has seen them, so tests need no sleeps; Settle waits likewise
// for the writes the code under test made, through any client. WaitFor
// waits, without polling, until a lister shows the state a controller
// should reach, and fails with a cmp.Diff; Recorder records what a handler
// receives. The Fake waits for its own informers only (NewInformer,
// NewUnstructuredInformer, NewMetadataInformer): an informer the code under
// test makes itself may open its watch after a change, and the fake client
// sends a watch no delete made before the watch opened.
//
// The code under test writes through Fake.Dynamic (client-go's fake
// dynamic client), Fake.Clientset (its fake typed clientset), or clients
// made from Fake.Config (a rest.Config whose transport serves the Fake's
// store in process, for client-go's real typed clientset, dynamic client
// or REST clients) or from Fake.Factory (typed.ClientFor). They all serve
// one store, and every write, whichever the client, reaches the informers
// by their list and watch, checked and changed as kube-apiserver would:
//
//   - every object stored gets a new resourceVersion;
//   - an update, status update or patch (of any type, apply included) that
//     changes nothing, the object it would store being the stored one but
//     for its resourceVersion, is no write: the object keeps its
//     resourceVersion, the write returns it as stored, no watch event is
//     sent and Settle and WaitIdle have nothing to wait for, so that a
//     controller that writes back an unchanged status settles, and may do
//     so again at the same resourceVersion (no 409 Conflict);
//   - an update (or a patch that sets metadata.resourceVersion) whose
//     resourceVersion is set and is not the stored one fails with 409
//     Conflict, saying "the object has been modified; please apply your
//     changes to the latest version and try again"; an empty one is an
//     unconditional update;
//   - metadata.generation is 1 on create (seeded objects have it too) and
//     grows by one at each update or patch that changes anything outside
//     metadata (and outside status, for a resource with a status
//     subresource); a change of metadata alone keeps it;
//   - a resource has a status subresource if it is a built-in kind whose Go
//     type has a status, or a custom resource whose CRD fixture declares
//     subresources.status. Its status is kept as stored by updates and
//     patches of the main resource, and an update or patch of its status
//     subresource (UpdateStatus, a patch of "status") changes its status
//     only, and not its generation. Other resources have no status
//     subresource (404 Not Found), and their status is written, and
//     counted as a change, with the rest;
//   - a delete honours the preconditions of its DeleteOptions (uid,
//     resourceVersion: 409 Conflict);
//   - whole numbers are int64, as the dynamic client reads them from JSON.
//
// Not emulated: defaulting, validation and admission, field ownership
// (managedFields), generateName, the uid and creationTimestamp of a create,
// the reset of the status of a create (a create keeps the status it
// sends), finalizers (a delete is immediate), dry runs, and watches
// through Config (405: watch through Dynamic or Clientset).
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
//	client, _ := kubernetes.NewForConfig(fake.Config()) // the code under test's
//	client.CoreV1().ConfigMaps("team-a").Create(ctx, cm, metav1.CreateOptions{})
//	fake.Settle()
//	// every handler has now seen the ConfigMap
//
// A Fake is for one test; tests with their own Fakes may run in parallel.
// Its clients, Config and Factory are safe for concurrent use; its own
// changes, Settle and the waits are called from the test's goroutine.
package generictest
