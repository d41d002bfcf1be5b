package apiserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
)

// InstallCRDs creates the CustomResourceDefinitions of the YAML (or JSON)
// files at paths, several to a file as multi-document YAML, and waits
// until the API server serves each of them: the CRD is Established and
// discovery lists its resource in every served version, so that a client
// (or a RESTMapper that resets on a miss) can use it as soon as
// InstallCRDs returns. It is what envtest's CRDInstallOptions do, for this
// server.
//
// It fails on a file that cannot be read or holds anything but
// apiextensions.k8s.io/v1 CustomResourceDefinitions (nothing is created
// then), on a CRD the server refuses, and when ctx ends before every CRD is
// served.
func (s *Server) InstallCRDs(ctx context.Context, paths ...string) error {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, path := range paths {
		read, err := readCRDs(path)
		if err != nil {
			return err
		}
		crds = append(crds, read...)
	}
	client, err := apiextensionsclient.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
		}
	}
	disco, err := discovery.NewDiscoveryClientForConfig(s.Config)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if err := waitServed(ctx, client, disco, crd); err != nil {
			return err
		}
	}
	return nil
}

// readCRDs reads the CRDs of one file.
func readCRDs(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var crds []*apiextensionsv1.CustomResourceDefinition
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return crds, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := utilyaml.Unmarshal(doc, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		switch {
		case crd.APIVersion == "" && crd.Kind == "":
			continue // an empty document
		case crd.APIVersion != apiextensionsv1.SchemeGroupVersion.String() || crd.Kind != "CustomResourceDefinition":
			return nil, fmt.Errorf("%s: %s %s %q is not an %s CustomResourceDefinition", path, crd.APIVersion, crd.Kind, crd.Name, apiextensionsv1.SchemeGroupVersion)
		}
		crds = append(crds, crd)
	}
}

// waitServed waits until crd is Established and discovery lists its
// resource in each served version.
func waitServed(ctx context.Context, client apiextensionsclient.Interface, disco discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) error {
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil || !established(got) {
			return false, nil //nolint:nilerr // not readable or not established yet: poll again
		}
		for _, v := range got.Spec.Versions {
			if v.Served && !discovered(disco, got.Spec.Group+"/"+v.Name, got.Spec.Names.Plural) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not served: %w", crd.Name, err)
	}
	return nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return slices.ContainsFunc(crd.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
		return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
	})
}

// discovered reports whether discovery lists plural in groupVersion.
func discovered(disco discovery.DiscoveryInterface, groupVersion, plural string) bool {
	resources, err := disco.ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == plural })
}
