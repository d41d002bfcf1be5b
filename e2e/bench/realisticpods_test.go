package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/generic-informers/generic/e2e/internal/cluster"
)

// The fixture of BenchmarkCacheSize: `objects` realistic Pods in namespaces
// real-0..real-9, labelled bench-set=real, and `objects` ConfigMaps with a
// payload of their own in uniq-0..uniq-9, labelled bench-set=uniq (ported
// from docs/profiles/typedacct.go.txt; docs/profiles/typed-cache-accounting.md
// tells why these Pods are realistic).
//
// The Pods are those of 200 Deployments of 50 replicas at 10,000, on 50
// nodes: three containers (an app, an envoy and a fluent-bit sidecar) with
// ports, env, probes, resources and mounts, five volumes, the ReplicaSet's
// ownerReference and labels, and the status a kubelet writes for a running
// Pod. Each is created as the ReplicaSet controller sends it
// (FieldManager kube-controller-manager), then its status is written by
// the kubelet (UpdateStatus, FieldManager kubelet): the server defaults the
// Pod and computes both managedFields entries.
//
// The shared server runs without the ServiceAccount admission plugin
// (apiserver.DefaultFlags), so the seed adds what it would to each Pod
// itself: the kube-api-access-<random> projected volume, mounted in every
// container (DefaultTolerationSeconds, on, adds the tolerations). On a
// cluster the field manager runs before admission, so the controller's
// managedFields entry does not name that volume, and is the same for all the
// Pods of a ReplicaSet; here the volume is in the create request, so the
// server would record it there too. The seed therefore asks the server,
// once per Deployment, for the entry of the Pod without the volume (a
// dry-run create), and after the status update writes it in place of the
// computed one (an update of nothing else): the stored Pods hold the
// managedFields a cluster's would (checkRealisticPod checks one).
//
// Everything random (names, uids, digests, container IDs) is drawn from a
// PCG seeded by the Pod's or the Deployment's index: every run seeds the
// same objects.

const (
	podsPerDeployment = 50 // 10,000 Pods: 200 Deployments
	podNamespaces     = 10 // Deployments spread over real-0..real-9
	podNodes          = 50 // Pods spread over 50 nodes
	controllerManager = "kube-controller-manager"

	realisticPodsSelector     = "bench-set=real"
	uniqueConfigMapsSelector  = "bench-set=uniq"
	uniqueConfigMapNamespaces = 10
)

// seeding is the seeding of one part of the fixture, once per process.
type seeding struct {
	once sync.Once
	err  error
}

// do runs seed the first time, and fails b if it failed.
func (s *seeding) do(b *testing.B, seed func() error) {
	b.Helper()
	s.once.Do(func() { s.err = seed() })
	if s.err != nil {
		b.Fatal(s.err)
	}
}

// The fixture's parts, each seeded when a benchmark first needs it: a run
// of BenchmarkCacheSize's Pods alone (as the growth runs at 100,000 are)
// seeds no ConfigMaps.
var namespacesSeeding, podsSeeding, configMapsSeeding seeding

// realisticServer returns the shared embedded server with the fixture's
// namespaces, creating them on first use.
func realisticServer(b *testing.B) *rest.Config {
	b.Helper()
	config := sharedServer(b).Config
	namespacesSeeding.do(b, func() error {
		if scheme == nil {
			var err error
			if scheme, err = newScheme(); err != nil {
				return err
			}
		}
		return seedNamespaces(config)
	})
	return config
}

// seedResource seeds the fixture's objects of gvr (podsGVR or
// configMapsGVR) into the server at config, on first use.
func seedResource(b *testing.B, config *rest.Config, gvr schema.GroupVersionResource) {
	b.Helper()
	seedConfig := rest.CopyConfig(config)
	seedConfig.QPS, seedConfig.Burst = 5000, 5000
	clientset, err := kubernetes.NewForConfig(seedConfig)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	timed := func(what string, seed func() error) func() error {
		return func() error {
			started := time.Now()
			if err := seed(); err != nil {
				return err
			}
			fmt.Printf("seeded %d %s in %v\n", objects, what, time.Since(started).Round(time.Millisecond))
			return nil
		}
	}
	if gvr == podsGVR {
		podsSeeding.do(b, timed("realistic Pods", func() error {
			if err := seedRealisticPods(ctx, clientset); err != nil {
				return err
			}
			return checkRealisticPod(ctx, clientset)
		}))
		return
	}
	configMapsSeeding.do(b, timed("unique ConfigMaps", func() error { return seedUniqueConfigMaps(ctx, clientset) }))
}

// seedNamespaces creates the fixture's namespaces.
func seedNamespaces(config *rest.Config) error {
	c, err := cluster.New(config)
	if err != nil {
		return err
	}
	var prelude []*unstructured.Unstructured
	for i := range podNamespaces {
		prelude = append(prelude, cluster.Namespace("real-"+strconv.Itoa(i)))
	}
	for i := range uniqueConfigMapNamespaces {
		prelude = append(prelude, cluster.Namespace("uniq-"+strconv.Itoa(i)))
	}
	return c.Apply(context.Background(), prelude...)
}

// seedRealisticPods creates the Pods, each with its status, and the
// managedFields a cluster's would hold (see the top of this file).
func seedRealisticPods(ctx context.Context, clientset kubernetes.Interface) error {
	controllerFields, err := controllerManagedFields(ctx, clientset)
	if err != nil {
		return err
	}
	return createConcurrently(objects, func(i int) error {
		return seedRealisticPod(ctx, clientset, i, controllerFields[i/podsPerDeployment])
	})
}

// controllerManagedFields returns, for each Deployment, the fieldsV1 of the
// controller's managedFields entry of its Pods as a cluster records it:
// that of a dry-run create of a Pod without the admission's additions.
func controllerManagedFields(ctx context.Context, clientset kubernetes.Interface) ([]*metav1.FieldsV1, error) {
	fields := make([]*metav1.FieldsV1, (objects+podsPerDeployment-1)/podsPerDeployment)
	err := createConcurrently(len(fields), func(d int) error {
		pod := templatePod(d*podsPerDeployment, podRand(d*podsPerDeployment))
		created, err := clientset.CoreV1().Pods(pod.Namespace).Create(ctx, pod,
			metav1.CreateOptions{FieldManager: controllerManager, DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		fields[d] = managedFieldsOf(created, controllerManager)
		if fields[d] == nil {
			return fmt.Errorf("dry-run Pod %s: no managedFields entry of %s", pod.Name, controllerManager)
		}
		return nil
	})
	return fields, err
}

// seedRealisticPod creates Pod i as the controller and admission make it,
// writes its status as the kubelet does, then replaces the controller's
// managedFields entry by controllerFields (an update that changes nothing
// else keeps the managedFields it is sent).
func seedRealisticPod(ctx context.Context, clientset kubernetes.Interface, i int, controllerFields *metav1.FieldsV1) error {
	r := podRand(i)
	pod := templatePod(i, r)
	addAdmission(pod, r)
	pods := clientset.CoreV1().Pods(pod.Namespace)
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{FieldManager: controllerManager})
	if err != nil {
		return err
	}
	created.Status = podStatus(i, created, r)
	running, err := pods.UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: "kubelet"})
	if err != nil {
		return err
	}
	for j := range running.ManagedFields {
		if running.ManagedFields[j].Manager == controllerManager {
			running.ManagedFields[j].FieldsV1 = controllerFields
		}
	}
	_, err = pods.Update(ctx, running, metav1.UpdateOptions{FieldManager: controllerManager})
	return err
}

func managedFieldsOf(pod *corev1.Pod, manager string) *metav1.FieldsV1 {
	for _, e := range pod.ManagedFields {
		if e.Manager == manager {
			return e.FieldsV1
		}
	}
	return nil
}

// checkRealisticPod checks that the server kept Pod 0 as the seed meant
// it: two managedFields entries, the controller's not naming the
// kube-api-access volume, the default tolerations, and the status written.
func checkRealisticPod(ctx context.Context, clientset kubernetes.Interface) error {
	want := templatePod(0, podRand(0))
	pod, err := clientset.CoreV1().Pods(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	controller, kubelet := managedFieldsOf(pod, controllerManager), managedFieldsOf(pod, "kubelet")
	switch {
	case len(pod.ManagedFields) != 2 || controller == nil || kubelet == nil:
		return fmt.Errorf("realistic Pod %s: managedFields %v, want %s's and kubelet's", pod.Name, pod.ManagedFields, controllerManager)
	case strings.Contains(controller.GetRawString(), "kube-api-access"):
		return errors.New("realistic Pod: the controller's managedFields name the kube-api-access volume")
	case len(pod.Spec.Tolerations) != 2:
		return fmt.Errorf("realistic Pod %s: tolerations %v, want DefaultTolerationSeconds' two", pod.Name, pod.Spec.Tolerations)
	case pod.Status.Phase != corev1.PodRunning:
		return fmt.Errorf("realistic Pod %s: phase %q, want Running", pod.Name, pod.Status.Phase)
	}
	fmt.Printf("realistic Pod: managedFields of %s %d B, of kubelet %d B\n", controllerManager, len(controller.GetRawString()), len(kubelet.GetRawString()))
	return nil
}

// seedUniqueConfigMaps creates the ConfigMaps with a payload of their own.
func seedUniqueConfigMaps(ctx context.Context, clientset kubernetes.Interface) error {
	return createConcurrently(objects, func(i int) error {
		cm := uniqueConfigMap(i)
		_, err := clientset.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
}

// uniqueConfigMap is ConfigMap i of the cache-size fixture: BenchmarkSync's
// ConfigMap (syncConfigMap), with a payload of its own of the same length,
// data that does not repeat across objects.
func uniqueConfigMap(i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "uniq-" + strconv.Itoa(i%uniqueConfigMapNamespaces), Name: "cm-" + strconv.Itoa(i),
			Labels: map[string]string{"app": "app-" + strconv.Itoa(i%10), "bench-set": "uniq"},
		},
		Data: map[string]string{"payload": fmt.Sprintf("%08d", i) + payload[8:]},
	}
}

// fixtureRand draws the fixture's random parts.
type fixtureRand struct{ *rand.Rand }

// podRand is what Pod i's random parts are drawn from; deploymentRand
// Deployment d's.
func podRand(i int) fixtureRand        { return fixtureRand{rand.New(rand.NewPCG(uint64(i), 1))} }
func deploymentRand(d int) fixtureRand { return fixtureRand{rand.New(rand.NewPCG(uint64(d), 2))} }

// nameChars are the characters of generated names, as
// k8s.io/apimachinery/pkg/util/rand's.
const nameChars = "bcdfghjklmnpqrstvwxz2456789"

func (r fixtureRand) draw(n int, chars string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[r.IntN(len(chars))]
	}
	return string(b)
}

func (r fixtureRand) name(n int) string { return r.draw(n, nameChars) }

// podSuffix is the five characters after Pod i's ReplicaSet name: three
// drawn from r, then two that spell i's place in its Deployment, so that
// no two Pods of a Deployment have one name. Five drawn characters (27^5
// names) made two of the 100,000 Pods' one: the seed failed with "already
// exists" at svc-619.
func podSuffix(i int, r fixtureRand) string {
	place := i % podsPerDeployment
	return r.name(3) + string(nameChars[place/len(nameChars)]) + string(nameChars[place%len(nameChars)])
}

func (r fixtureRand) hex(n int) string { return r.draw(n, "0123456789abcdef") }

func (r fixtureRand) uid() string {
	h := r.hex(32)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// deployment is what the Pods of one Deployment's current ReplicaSet share.
type deployment struct {
	name, namespace, hash, rsUID, image, imageID string
}

// sidecarImageIDs are the digests of the envoy and fluent-bit images, the
// same in every Pod.
var sidecarImageIDs = func() [2]string {
	r := deploymentRand(-1)
	return [2]string{"docker.io/envoyproxy/envoy@sha256:" + r.hex(64), "cr.fluentbit.io/fluent/fluent-bit@sha256:" + r.hex(64)}
}()

// deploymentOf returns the Deployment of Pod i.
func deploymentOf(i int) deployment {
	d := i / podsPerDeployment
	r := deploymentRand(d)
	name := fmt.Sprintf("svc-%03d", d)
	dep := deployment{
		name: name, namespace: "real-" + strconv.Itoa(d%podNamespaces), hash: r.name(10), rsUID: r.uid(),
		image: fmt.Sprintf("registry.example.com/team-%d/%s:v1.%d.0", d%podNamespaces, name, d%7),
	}
	dep.imageID = strings.Split(dep.image, ":")[0] + "@sha256:" + r.hex(64)
	return dep
}

func nodeOf(i int) int        { return (i * 7) % podNodes }
func nodeNameOf(n int) string { return fmt.Sprintf("pool-a-%02d.prod.example.internal", n) }
func nodeIPOf(n int) string   { return fmt.Sprintf("10.0.%d.%d", n/10, 10+n%10) }

// templatePod is Pod i as the ReplicaSet controller sends it to the API
// server: before admission adds the service account's volume and the
// default tolerations, and without status. It draws the name's suffix
// from r.
func templatePod(i int, r fixtureRand) *corev1.Pod {
	dep := deploymentOf(i)
	rsName := dep.name + "-" + dep.hash
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: rsName + "-" + podSuffix(i, r), GenerateName: rsName + "-", Namespace: dep.namespace,
			Labels: map[string]string{"app": dep.name, "pod-template-hash": dep.hash, "bench-set": "real"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rsName, UID: types.UID(dep.rsUID),
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			Volumes:            podVolumes(dep),
			Containers:         []corev1.Container{appContainer(dep), envoyContainer(dep), fluentBitContainer()},
			ServiceAccountName: "default",
			NodeName:           nodeNameOf(nodeOf(i)),
		},
	}
}

func podVolumes(dep deployment) []corev1.Volume {
	configMap := func(name, configMap string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: configMap}, DefaultMode: ptr.To(int32(420)),
		}}}
	}
	return []corev1.Volume{
		configMap("config", dep.name+"-config"),
		{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		configMap("envoy-config", "envoy-bootstrap"),
		{Name: "varlog", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log", Type: ptr.To(corev1.HostPathDirectory)}}},
		configMap("fluent-bit-config", "fluent-bit"),
	}
}

func appContainer(dep deployment) corev1.Container {
	return corev1.Container{
		Name: "app", Image: dep.image, Args: []string{"--config=/etc/app/config.yaml", "--listen=:8080"},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}, {Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
		Env: []corev1.EnvVar{
			fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace"), fieldEnv("NODE_NAME", "spec.nodeName"),
			{Name: "LOG_LEVEL", Value: "info"},
			{Name: "DATABASE_URL", Value: "postgres://" + dep.name + "-db." + dep.namespace + ".svc.cluster.local:5432/app"},
			{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: "http://otel-collector.observability.svc.cluster.local:4317"},
		},
		Resources:      resources("250m", "256Mi", "1", "512Mi"),
		VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app", ReadOnly: true}, {Name: "data", MountPath: "/var/lib/app"}},
		LivenessProbe:  httpProbe("/livez", 8080, 10),
		ReadinessProbe: httpProbe("/readyz", 8080, 5),
	}
}

func envoyContainer(dep deployment) corev1.Container {
	return corev1.Container{
		Name: "envoy", Image: "docker.io/envoyproxy/envoy:v1.31.2", Args: []string{"-c", "/etc/envoy/envoy.yaml", "--service-cluster", dep.name},
		Ports:          []corev1.ContainerPort{{Name: "http-envoy-prom", ContainerPort: 15090, Protocol: corev1.ProtocolTCP}},
		Env:            []corev1.EnvVar{fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_IP", "status.podIP"), {Name: "ENVOY_LOG_LEVEL", Value: "warning"}},
		Resources:      resources("100m", "128Mi", "", "256Mi"),
		VolumeMounts:   []corev1.VolumeMount{{Name: "envoy-config", MountPath: "/etc/envoy", ReadOnly: true}},
		ReadinessProbe: httpProbe("/healthz/ready", 15021, 1),
	}
}

func fluentBitContainer() corev1.Container {
	return corev1.Container{
		Name: "fluent-bit", Image: "cr.fluentbit.io/fluent/fluent-bit:3.1.9",
		Ports:         []corev1.ContainerPort{{Name: "http", ContainerPort: 2020, Protocol: corev1.ProtocolTCP}},
		Env:           []corev1.EnvVar{fieldEnv("NODE_NAME", "spec.nodeName"), {Name: "FLUENT_OUTPUT_HOST", Value: "logs.observability.svc.cluster.local"}},
		Resources:     resources("50m", "64Mi", "", "128Mi"),
		VolumeMounts:  []corev1.VolumeMount{{Name: "varlog", MountPath: "/var/log", ReadOnly: true}, {Name: "fluent-bit-config", MountPath: "/fluent-bit/etc"}},
		LivenessProbe: httpProbe("/", 2020, 10),
	}
}

// resources requests cpu and memory and limits them; an empty limit is
// none.
func resources(cpu, memory, cpuLimit, memoryLimit string) corev1.ResourceRequirements {
	limits := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memoryLimit)}
	if cpuLimit != "" {
		limits[corev1.ResourceCPU] = resource.MustParse(cpuLimit)
	}
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
		Limits:   limits,
	}
}

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
}

func httpProbe(path string, port int32, delay int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port), Scheme: corev1.URISchemeHTTP}},
		InitialDelaySeconds: delay, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
	}
}

// addAdmission adds to pod what the ServiceAccount admission plugin adds:
// the kube-api-access-<random> projected volume (its suffix drawn from r),
// mounted in every container.
func addAdmission(pod *corev1.Pod, r fixtureRand) {
	apiAccess := "kube-api-access-" + r.name(5)
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: apiAccess, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To(int32(420)),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To(int64(3607)), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}})
	for j := range pod.Spec.Containers {
		c := &pod.Spec.Containers[j]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: apiAccess, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"})
	}
}

// podStatus is the status the kubelet writes for Pod i once it runs, its
// container IDs drawn from r.
func podStatus(i int, pod *corev1.Pod, r fixtureRand) corev1.PodStatus {
	node := nodeOf(i)
	created := pod.CreationTimestamp.Time
	started := metav1.NewTime(created.Add(2 * time.Second))
	podIP := fmt.Sprintf("10.244.%d.%d", node, 2+i/podNodes%250)
	return corev1.PodStatus{
		Phase: corev1.PodRunning, Conditions: podConditions(created),
		HostIP: nodeIPOf(node), HostIPs: []corev1.HostIP{{IP: nodeIPOf(node)}},
		PodIP: podIP, PodIPs: []corev1.PodIP{{IP: podIP}},
		StartTime: &started, ContainerStatuses: containerStatuses(i, pod, started, r), QOSClass: corev1.PodQOSBurstable,
	}
}

func podConditions(created time.Time) []corev1.PodCondition {
	started := metav1.NewTime(created.Add(2 * time.Second))
	ready := metav1.NewTime(created.Add(9 * time.Second))
	var conditions []corev1.PodCondition
	for _, c := range []struct {
		t  corev1.PodConditionType
		at metav1.Time
	}{{"PodReadyToStartContainers", started}, {corev1.PodInitialized, metav1.NewTime(created)}, {corev1.PodReady, ready}, {corev1.ContainersReady, ready}, {corev1.PodScheduled, metav1.NewTime(created)}} {
		conditions = append(conditions, corev1.PodCondition{Type: c.t, Status: corev1.ConditionTrue, LastTransitionTime: c.at})
	}
	return conditions
}

// containerStatuses are as kubelets of 1.33 and later report them: with
// resources, volume mounts and user.
func containerStatuses(i int, pod *corev1.Pod, started metav1.Time, r fixtureRand) []corev1.ContainerStatus {
	imageIDs := []string{deploymentOf(i).imageID, sidecarImageIDs[0], sidecarImageIDs[1]}
	var statuses []corev1.ContainerStatus
	for j, c := range pod.Spec.Containers {
		var mounts []corev1.VolumeMountStatus
		for _, m := range c.VolumeMounts {
			mounts = append(mounts, corev1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly, RecursiveReadOnly: ptr.To(corev1.RecursiveReadOnlyDisabled)})
		}
		statuses = append(statuses, corev1.ContainerStatus{
			Name: c.Name, Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
			Image: c.Image, ImageID: imageIDs[j], ContainerID: "containerd://" + r.hex(64),
			Resources:    c.Resources.DeepCopy(),
			VolumeMounts: mounts,
			User:         &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 0, GID: 0, SupplementalGroups: []int64{0}}},
		})
	}
	return statuses
}

// TestRealisticPodNamesUnique: the fixture's 100,000 Pods (the growth
// run's largest size) have names of their own in their namespaces. With
// five drawn characters two had one, and the seed failed.
func TestRealisticPodNamesUnique(t *testing.T) {
	seen := map[string]int{}
	for i := range 100000 {
		pod := templatePod(i, podRand(i))
		key := pod.Namespace + "/" + pod.Name
		if other, ok := seen[key]; ok {
			t.Fatalf("Pods %d and %d are both %s", other, i, key)
		}
		seen[key] = i
	}
}
