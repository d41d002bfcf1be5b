package apiserver

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-api/pkg/apis/apiextensions/v1"

	"github.com/generic-informers/generic/e2e/internal/cluster"
	"github.com/generic-informers/generic/internal/fixtures"
)

// InstallCRDs creates (or updates) the CustomResourceDefinitions of the
// YAML (or JSON) files at paths, several to a file as multi-document YAML,
// and waits until the API server serves each of them: the CRD is
// Established and discovery knows its kind, so that a client (or a
// RESTMapper that resets on a miss) can use it as soon as InstallCRDs
// returns. It is what envtest's CRDInstallOptions do, for this server.
//
// It fails on a file that cannot be read or holds anything but
// apiextensions.k8s.io/v1 CustomResourceDefinitions (nothing is created
// then), on a CRD the server refuses, and when ctx ends before every CRD is
// served.
func (s *Server) InstallCRDs(ctx context.Context, paths ...string) error {
	crds, err := fixtures.Load(paths...)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if crd.GetAPIVersion() != apiextensionsv1.SchemeGroupVersion.String() || crd.GetKind() != "CustomResourceDefinition" {
			return fmt.Errorf("%s %s %q is not an %s CustomResourceDefinition", crd.GetAPIVersion(), crd.GetKind(), crd.GetName(), apiextensionsv1.SchemeGroupVersion)
		}
	}
	c, err := cluster.New(s.Config)
	if err != nil {
		return err
	}
	return c.Apply(ctx, crds...)
}
