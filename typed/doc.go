// Package typed is the scheme instantiation of the generic core: informers
// and listers for any Go type registered in a runtime.Scheme, built-in
// (*corev1.Pod) or a CRD's Go type, with no informer-gen or lister-gen.
//
// Objects are decoded straight into T by a REST client that uses the
// scheme's codecs, as protobuf where T supports it and the server offers it
// (built-in types), as JSON otherwise (CRDs), and never pass through
// unstructured. The GroupVersionKind of T comes from the scheme and its
// GroupVersionResource from a RESTMapper (discovery by default).
//
//	factory, err := typed.NewFactory(restConfig, scheme.Scheme)
//	pods, err := typed.InformerFor[*corev1.Pod](factory)
//	factory.Start(ctx)
//	factory.WaitForCacheSync(ctx)
//	pod, err := pods.Lister().Namespace("default").Get("web-0") // a *corev1.Pod
//
// A CRD Go type needs only DeepCopyObject and its List type registered in
// the scheme next to it.
package typed
