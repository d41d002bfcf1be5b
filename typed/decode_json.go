package typed

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// jsonFormat is the wireFormat of JSON, in which the API server serves
// custom resources. It reads with apimachinery's JSON reader, case-sensitive
// as the codecs' JSON serializer is.
type jsonFormat struct{}

// jsonList is a list with its items left encoded.
type jsonList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []json.RawMessage `json:"items"`
}

// jsonKey is the part of an object that names it.
type jsonKey struct {
	Metadata struct {
		Namespace       string `json:"namespace"`
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

func (jsonFormat) kindOf(data []byte) (schema.GroupVersionKind, error) {
	var typeMeta metav1.TypeMeta
	if err := utiljson.Unmarshal(data, &typeMeta); err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("typed: kind of JSON object: %w", err)
	}
	return schema.FromAPIVersionAndKind(typeMeta.APIVersion, typeMeta.Kind), nil
}

func (jsonFormat) keyOf(data []byte) objectKey {
	var key jsonKey
	if err := utiljson.Unmarshal(data, &key); err != nil {
		return objectKey{}
	}
	return objectKey{namespace: key.Metadata.Namespace, name: key.Metadata.Name, resourceVersion: key.Metadata.ResourceVersion}
}

func (jsonFormat) splitList(data []byte) (metav1.ListMeta, [][]byte, error) {
	var list jsonList
	if err := utiljson.Unmarshal(data, &list); err != nil {
		return metav1.ListMeta{}, nil, fmt.Errorf("typed: JSON list: %w", err)
	}
	items := make([][]byte, len(list.Items))
	for i, item := range list.Items {
		items[i] = item
	}
	return list.ListMeta, items, nil
}

func (jsonFormat) encodeKind(gvk schema.GroupVersionKind) ([]byte, error) {
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	return json.Marshal(metav1.TypeMeta{APIVersion: apiVersion, Kind: kind})
}

func (jsonFormat) encodeList(gvk schema.GroupVersionKind, item []byte) ([]byte, error) {
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	return json.Marshal(jsonList{
		TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: kind},
		Items:    []json.RawMessage{item},
	})
}
