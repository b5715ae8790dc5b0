package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/crucible-sci/crucible/internal/proc"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// rendered is one kustomization's output, decoded strictly into typed
// objects.
type rendered struct {
	dir             string
	Namespaces      []*corev1.Namespace
	ServiceAccounts []*corev1.ServiceAccount
	Services        []*corev1.Service
	ConfigMaps      []*corev1.ConfigMap
	Secrets         []*corev1.Secret
	Deployments     []*appsv1.Deployment
	StatefulSets    []*appsv1.StatefulSet
	Jobs            []*batchv1.Job
	PDBs            []*policyv1.PodDisruptionBudget
	HPAs            []*autoscalingv2.HorizontalPodAutoscaler
	NetworkPolicies []*networkingv1.NetworkPolicy
	ScaledObjects   []*ScaledObject
	ServiceMonitors []*ServiceMonitor
}

// render builds a kustomization with the kustomize API (what `kubectl
// apply -k` runs) and decodes every resource strictly: an unknown field, a
// wrong type or an unknown kind fails.
func render(t *testing.T, dir string) *rendered {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out := &rendered{dir: dir}
	for _, r := range rm.Resources() {
		data, err := r.AsYAML()
		if err != nil {
			t.Fatalf("%s: %v", r.CurId(), err)
		}
		gvk := r.GetGvk()
		key := gvk.Group + "/" + gvk.Version + "/" + gvk.Kind
		decode := func(obj any) {
			if err := yaml.UnmarshalStrict(data, obj); err != nil {
				t.Errorf("%s: %s %s: %v", dir, key, r.GetName(), err)
			}
		}
		switch key {
		case "/v1/Namespace":
			o := &corev1.Namespace{}
			decode(o)
			out.Namespaces = append(out.Namespaces, o)
		case "/v1/ServiceAccount":
			o := &corev1.ServiceAccount{}
			decode(o)
			out.ServiceAccounts = append(out.ServiceAccounts, o)
		case "/v1/Service":
			o := &corev1.Service{}
			decode(o)
			out.Services = append(out.Services, o)
		case "/v1/ConfigMap":
			o := &corev1.ConfigMap{}
			decode(o)
			out.ConfigMaps = append(out.ConfigMaps, o)
		case "/v1/Secret":
			o := &corev1.Secret{}
			decode(o)
			out.Secrets = append(out.Secrets, o)
		case "apps/v1/Deployment":
			o := &appsv1.Deployment{}
			decode(o)
			out.Deployments = append(out.Deployments, o)
		case "apps/v1/StatefulSet":
			o := &appsv1.StatefulSet{}
			decode(o)
			out.StatefulSets = append(out.StatefulSets, o)
		case "batch/v1/Job":
			o := &batchv1.Job{}
			decode(o)
			out.Jobs = append(out.Jobs, o)
		case "policy/v1/PodDisruptionBudget":
			o := &policyv1.PodDisruptionBudget{}
			decode(o)
			out.PDBs = append(out.PDBs, o)
		case "autoscaling/v2/HorizontalPodAutoscaler":
			o := &autoscalingv2.HorizontalPodAutoscaler{}
			decode(o)
			out.HPAs = append(out.HPAs, o)
		case "networking.k8s.io/v1/NetworkPolicy":
			o := &networkingv1.NetworkPolicy{}
			decode(o)
			out.NetworkPolicies = append(out.NetworkPolicies, o)
		case "keda.sh/v1alpha1/ScaledObject":
			o := &ScaledObject{}
			decode(o)
			out.ScaledObjects = append(out.ScaledObjects, o)
		case "monitoring.coreos.com/v1/ServiceMonitor":
			o := &ServiceMonitor{}
			decode(o)
			out.ServiceMonitors = append(out.ServiceMonitors, o)
		default:
			t.Errorf("%s: %s %s: a kind these tests do not know; add its type", dir, key, r.GetName())
		}
	}
	return out
}

// overlay is what each kustomization must render to.
type overlay struct {
	dir string
	// namespace of every namespaced object ("" for the base).
	namespace string
	// natsReplicas and streamReplicas: servers and stream copies.
	natsReplicas, streamReplicas int
	// keda: evaluators scale with KEDA (else with the CPU HPA).
	keda, serviceMonitor, tls bool
}

var overlays = []overlay{
	{dir: "k8s/base", natsReplicas: 3, streamReplicas: 3},
	{dir: "k8s/overlays/dev", namespace: "crucible-dev", natsReplicas: 1, streamReplicas: 1},
	{dir: "k8s/overlays/prod", namespace: "crucible", natsReplicas: 3, streamReplicas: 3, keda: true, serviceMonitor: true, tls: true},
}

// services are the four service Deployments; secretKeys the Secrets the
// manifests may reference, with their keys (docs/deploy.md creates them).
var (
	services   = []string{"proposer", "evaluator", "reflector", "judge"}
	secretKeys = map[string][]string{
		"crucible-nats-users": {"admin", "proposer", "evaluator", "reflector", "judge", "client"},
		"crucible-console":    {"token"},
		"crucible-redis":      {"password"},
		"crucible-llm":        {"api-key"},
		"crucible-nats-tls":   {"tls.crt", "tls.key", "ca.crt"},
		"crucible-redis-tls":  {"tls.crt", "tls.key", "ca.crt"},
	}
)

func TestKubernetesManifests(t *testing.T) {
	for _, ov := range overlays {
		t.Run(ov.dir, func(t *testing.T) {
			r := render(t, ov.dir)
			if t.Failed() {
				return
			}
			checkNamespaces(t, r, ov)
			checkWorkloads(t, r)
			checkServices(t, r, ov)
			checkSecrets(t, r)
			checkAutoscaling(t, r, ov)
			checkMonitoring(t, r, ov)
			checkNATS(t, r, ov)
			checkRedis(t, r, ov)
		})
	}
}

func checkNamespaces(t *testing.T, r *rendered, ov overlay) {
	t.Helper()
	var metas []metav1.ObjectMeta
	for _, o := range r.Deployments {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range r.StatefulSets {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range r.Services {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range r.ConfigMaps {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range r.Jobs {
		metas = append(metas, o.ObjectMeta)
	}
	for _, m := range metas {
		if m.Namespace != ov.namespace {
			t.Errorf("%s in namespace %q, want %q", m.Name, m.Namespace, ov.namespace)
		}
		if m.Labels["app.kubernetes.io/part-of"] != "crucible" {
			t.Errorf("%s lacks the part-of label", m.Name)
		}
	}
	if ov.namespace != "" {
		if len(r.Namespaces) != 1 || r.Namespaces[0].Name != ov.namespace {
			t.Errorf("want one Namespace %s", ov.namespace)
		} else if r.Namespaces[0].Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
			t.Errorf("namespace %s does not enforce the restricted pod security standard", ov.namespace)
		}
	}
}

// workload is a pod template with where it came from.
type workload struct {
	kind, name string
	replicas   *int32
	labels     map[string]string
	pod        corev1.PodSpec
	podLabels  map[string]string
	podAnnots  map[string]string
}

func (r *rendered) workloads() []workload {
	var ws []workload
	for _, d := range r.Deployments {
		ws = append(ws, workload{"Deployment", d.Name, d.Spec.Replicas, d.Labels, d.Spec.Template.Spec, d.Spec.Template.Labels, d.Spec.Template.Annotations})
	}
	for _, s := range r.StatefulSets {
		ws = append(ws, workload{"StatefulSet", s.Name, s.Spec.Replicas, s.Labels, s.Spec.Template.Spec, s.Spec.Template.Labels, s.Spec.Template.Annotations})
	}
	for _, j := range r.Jobs {
		ws = append(ws, workload{"Job", j.Name, nil, j.Labels, j.Spec.Template.Spec, j.Spec.Template.Labels, j.Spec.Template.Annotations})
	}
	return ws
}

// checkWorkloads: the restricted pod security standard, resources on
// every container, probes on every long-running one, a disruption budget
// for every replicated workload.
func checkWorkloads(t *testing.T, r *rendered) {
	t.Helper()
	for _, w := range r.workloads() {
		sc := w.pod.SecurityContext
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s %s: pod must run as non-root with the RuntimeDefault seccomp profile", w.kind, w.name)
		}
		if w.pod.AutomountServiceAccountToken == nil || *w.pod.AutomountServiceAccountToken {
			t.Errorf("%s %s: mounts a service account token it does not need", w.kind, w.name)
		}
		all := append(append([]corev1.Container{}, w.pod.InitContainers...), w.pod.Containers...)
		for _, c := range all {
			where := fmt.Sprintf("%s %s container %s", w.kind, w.name, c.Name)
			for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, okReq := c.Resources.Requests[res]
				lim, okLim := c.Resources.Limits[res]
				if !okReq || !okLim {
					t.Errorf("%s: %s request and limit required", where, res)
				} else if req.Cmp(lim) > 0 {
					t.Errorf("%s: %s request %s above its limit %s", where, res, req.String(), lim.String())
				}
			}
			csc := c.SecurityContext
			if csc == nil || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation ||
				csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem ||
				csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("%s: needs allowPrivilegeEscalation false, a read-only root and all capabilities dropped", where)
			}
		}
		if w.kind == "Job" {
			continue
		}
		for _, c := range w.pod.Containers {
			if c.LivenessProbe == nil || c.ReadinessProbe == nil {
				t.Errorf("%s %s container %s: liveness and readiness probes required", w.kind, w.name, c.Name)
			}
		}
		if w.name == "redis" {
			continue // one replica: a budget would only block node drains
		}
		covered := false
		for _, p := range r.PDBs {
			sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
			if err == nil && sel.Matches(labels.Set(w.podLabels)) {
				covered = true
			}
		}
		if !covered {
			t.Errorf("%s %s: no PodDisruptionBudget selects its pods", w.kind, w.name)
		}
	}
}

// env returns a container's value of an environment variable: its own
// env first, then the ConfigMaps of its envFrom.
func (r *rendered) env(c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef == nil {
			continue
		}
		if cm := r.configMap(ef.ConfigMapRef.Name); cm != nil {
			if v, ok := cm.Data[name]; ok {
				return v, true
			}
		}
	}
	return "", false
}

// configMap finds a ConfigMap by its name before kustomize's hash suffix.
func (r *rendered) configMap(name string) *corev1.ConfigMap {
	for _, cm := range r.ConfigMaps {
		if cm.Name == name || strings.HasPrefix(cm.Name, name+"-") && len(cm.Name) == len(name)+11 {
			return cm
		}
	}
	return nil
}

func (r *rendered) deployment(name string) *appsv1.Deployment {
	for _, d := range r.Deployments {
		if d.Name == name {
			return d
		}
	}
	return nil
}

func (r *rendered) statefulSet(name string) *appsv1.StatefulSet {
	for _, s := range r.StatefulSets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// checkServices: the four services run the Crucible image with their own
// binary, their own NATS user and password key, wait for the provisioned
// streams, probe the endpoints the binary serves, and are scraped.
func checkServices(t *testing.T, r *rendered, ov overlay) {
	t.Helper()
	binaries := map[string]bool{}
	for _, b := range proc.Binaries {
		binaries[b.Name] = true
	}
	var image string
	for _, name := range services {
		d := r.deployment(name)
		if d == nil {
			t.Errorf("no Deployment %s", name)
			continue
		}
		pod := d.Spec.Template.Spec
		c := pod.Containers[0]
		if len(pod.Containers) != 1 || c.Name != name || !slices.Equal(c.Command, []string{name}) {
			t.Errorf("Deployment %s: want one container %s running the %s binary, got command %v", name, name, name, c.Command)
		}
		if image == "" {
			image = c.Image
		} else if c.Image != image {
			t.Errorf("Deployment %s: image %s, the others %s", name, c.Image, image)
		}
		for _, ic := range pod.InitContainers {
			if ic.Image != image || len(ic.Command) == 0 || !binaries[ic.Command[0]] {
				t.Errorf("Deployment %s init container %s: want the Crucible image and one of its binaries", name, ic.Name)
			}
		}
		if user, _ := r.env(c, "CRUCIBLE_NATS_USER"); user != name {
			t.Errorf("Deployment %s: NATS user %q, want its own", name, user)
		}
		if v, _ := r.env(c, "CRUCIBLE_PROVISIONED"); v != "true" {
			t.Errorf("Deployment %s: CRUCIBLE_PROVISIONED=%q; its NATS user may not create streams", name, v)
		}
		pwFile, _ := r.env(c, "CRUCIBLE_NATS_PASSWORD_FILE")
		if key := mountedSecretKey(pod, c, pwFile, "crucible-nats-users"); key != name {
			t.Errorf("Deployment %s: NATS password file %q holds key %q of crucible-nats-users, want %q", name, pwFile, key, name)
		}
		redisFile, _ := r.env(c, "CRUCIBLE_REDIS_PASSWORD_FILE")
		if key := mountedSecretKey(pod, c, redisFile, "crucible-redis"); key != "password" {
			t.Errorf("Deployment %s: Redis password file %q is not the password of crucible-redis", name, redisFile)
		}
		addr, _ := r.env(c, "CRUCIBLE_HTTP_ADDR")
		port := addr[strings.LastIndexByte(addr, ':')+1:]
		if len(c.Ports) != 1 || strconv.Itoa(int(c.Ports[0].ContainerPort)) != port || c.Ports[0].Name != "http" {
			t.Errorf("Deployment %s: container port %v, want http on %s (CRUCIBLE_HTTP_ADDR)", name, c.Ports, port)
		}
		for probe, want := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz", c.StartupProbe: "/healthz"} {
			if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want || probe.HTTPGet.Port.String() != "http" {
				t.Errorf("Deployment %s: a probe does not GET %s on port http", name, want)
			}
		}
		ann := d.Spec.Template.Annotations
		if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != port || ann["prometheus.io/path"] != "/metrics" {
			t.Errorf("Deployment %s: Prometheus scrape annotations missing", name)
		}
		if tg := d.Spec.Template.Spec.TerminationGracePeriodSeconds; tg == nil || *tg < 35 {
			t.Errorf("Deployment %s: the grace period must outlast the 30 s drain", name)
		}
		if ov.tls {
			for _, v := range []string{"CRUCIBLE_NATS_TLS_CA", "CRUCIBLE_REDIS_TLS_CA"} {
				f, _ := r.env(c, v)
				if f == "" || !mountedFile(c, f) {
					t.Errorf("Deployment %s: %s=%q is not a mounted file", name, v, f)
				}
			}
			if u, _ := r.env(c, "CRUCIBLE_NATS_URL"); !strings.HasPrefix(u, "tls://") {
				t.Errorf("Deployment %s: NATS URL %s without TLS", name, u)
			}
			if u, _ := r.env(c, "CRUCIBLE_REDIS_URL"); !strings.HasPrefix(u, "rediss://") {
				t.Errorf("Deployment %s: Redis URL %s without TLS", name, u)
			}
		}
	}
	if len(r.Jobs) != 1 || r.Jobs[0].Name != "crucible-setup" {
		t.Fatalf("want the crucible-setup Job")
	}
	job := r.Jobs[0]
	c := job.Spec.Template.Spec.Containers[0]
	if !slices.Equal(c.Command[:2], []string{"crucible", "setup"}) || c.Image != image {
		t.Errorf("setup Job runs %v in %s", c.Command, c.Image)
	}
	if user, _ := r.env(c, "CRUCIBLE_NATS_USER"); user != "admin" {
		t.Errorf("setup Job: NATS user %q, want admin", user)
	}
	if n, _ := r.env(c, "CRUCIBLE_STREAM_REPLICAS"); n != strconv.Itoa(ov.streamReplicas) {
		t.Errorf("streams get %s replicas, want %d", n, ov.streamReplicas)
	}
}

// mountedSecretKey returns the key of secret that file (a path inside c)
// holds, or "".
func mountedSecretKey(pod corev1.PodSpec, c corev1.Container, file, secret string) string {
	for _, m := range c.VolumeMounts {
		rel, ok := strings.CutPrefix(file, m.MountPath+"/")
		if !ok {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name != m.Name || v.Secret == nil || v.Secret.SecretName != secret {
				continue
			}
			for _, it := range v.Secret.Items {
				if it.Path == rel {
					return it.Key
				}
			}
		}
	}
	return ""
}

func mountedFile(c corev1.Container, file string) bool {
	for _, m := range c.VolumeMounts {
		if strings.HasPrefix(file, m.MountPath+"/") {
			return true
		}
	}
	return false
}

// credentialName: an environment variable that would carry a secret.
var credentialName = regexp.MustCompile(`(?i)(password|passwd|token|secret|api_?key|credential)`)

// checkSecrets: no Secret object and no credential in a manifest; every
// Secret referenced is one docs/deploy.md creates, with its keys; the
// Secret volumes are not world-readable.
func checkSecrets(t *testing.T, r *rendered) {
	t.Helper()
	for _, s := range r.Secrets {
		t.Errorf("Secret %s is in the manifests; secrets are created outside them", s.Name)
	}
	for _, cm := range r.ConfigMaps {
		for k, v := range cm.Data {
			if credentialName.MatchString(k) && !strings.HasSuffix(k, "_FILE") && v != "" {
				t.Errorf("ConfigMap %s: %s holds a value", cm.Name, k)
			}
		}
	}
	refKey := func(where, secret, key string) {
		keys, ok := secretKeys[secret]
		if !ok {
			t.Errorf("%s: references Secret %s, which docs/deploy.md does not create", where, secret)
		} else if key != "" && !slices.Contains(keys, key) {
			t.Errorf("%s: references key %s of Secret %s", where, key, secret)
		}
	}
	for _, w := range r.workloads() {
		for _, c := range append(append([]corev1.Container{}, w.pod.InitContainers...), w.pod.Containers...) {
			where := fmt.Sprintf("%s %s container %s", w.kind, w.name, c.Name)
			for _, e := range c.Env {
				if e.Value != "" && credentialName.MatchString(e.Name) && !strings.HasSuffix(e.Name, "_FILE") {
					t.Errorf("%s: %s has a literal value", where, e.Name)
				}
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					refKey(where, e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key)
				}
			}
			for _, a := range append(append([]string{}, c.Command...), c.Args...) {
				if credentialName.MatchString(a) && strings.Contains(a, "=") {
					t.Errorf("%s: a command argument sets a credential: %q", where, a)
				}
			}
		}
		for _, v := range w.pod.Volumes {
			if v.Secret == nil {
				continue
			}
			where := fmt.Sprintf("%s %s volume %s", w.kind, w.name, v.Name)
			if m := v.Secret.DefaultMode; m == nil || (*m != 0o400 && *m != 0o440) {
				t.Errorf("%s: secret files readable by others (defaultMode %v)", where, v.Secret.DefaultMode)
			}
			if len(v.Secret.Items) == 0 {
				refKey(where, v.Secret.SecretName, "")
			}
			for _, it := range v.Secret.Items {
				refKey(where, v.Secret.SecretName, it.Key)
			}
		}
	}
}

// checkAutoscaling: exactly one autoscaler owns each evaluator role — the
// CPU HPA, or KEDA on the lag of the role's own consumer: evaluator on
// CANDIDATES for the screen, evaluator-relax on RELAX for the relax role.
func checkAutoscaling(t *testing.T, r *rendered, ov overlay) {
	t.Helper()
	for _, role := range []struct{ name, stream, consumer, flag string }{
		{"evaluator", messages.StreamCandidates, messages.ConsumerEvaluator, "screen"},
		{"evaluator-relax", messages.StreamRelax, messages.ConsumerRelax, "relax"},
	} {
		checkRoleAutoscaling(t, r, ov, role.name, role.stream, role.consumer)
		if d := r.deployment(role.name); d != nil && len(d.Spec.Template.Spec.Containers) > 0 {
			var got string
			for _, e := range d.Spec.Template.Spec.Containers[0].Env {
				if e.Name == "CRUCIBLE_EVALUATOR_ROLE" {
					got = e.Value
				}
			}
			if got != role.flag {
				t.Errorf("Deployment %s: CRUCIBLE_EVALUATOR_ROLE %q, want %q", role.name, got, role.flag)
			}
		}
	}
}

func checkRoleAutoscaling(t *testing.T, r *rendered, ov overlay, name, stream, consumer string) {
	t.Helper()
	ev := r.deployment(name)
	if ev == nil {
		t.Errorf("no Deployment %s", name)
		return
	}
	if ev.Spec.Replicas != nil {
		t.Errorf("Deployment %s sets replicas: every apply would fight its autoscaler", name)
	}
	var hpas []*autoscalingv2.HorizontalPodAutoscaler
	for _, h := range r.HPAs {
		if h.Spec.ScaleTargetRef.Kind == "Deployment" && h.Spec.ScaleTargetRef.Name == name {
			hpas = append(hpas, h)
		}
	}
	var sos []*ScaledObject
	for _, s := range r.ScaledObjects {
		if s.Spec.ScaleTargetRef.Name == name {
			sos = append(sos, s)
		}
	}
	if ov.keda {
		if len(sos) != 1 || len(hpas) != 0 {
			t.Fatalf("want one ScaledObject and no HPA for %s, got %d and %d", name, len(sos), len(hpas))
		}
		so := sos[0]
		if so.Name != name {
			t.Errorf("ScaledObject %s scales %s", so.Name, name)
		}
		if so.Spec.ScaleTargetRef.Kind != "Deployment" || so.Spec.MinReplicaCount == nil || so.Spec.MaxReplicaCount == nil ||
			*so.Spec.MinReplicaCount < 1 || *so.Spec.MaxReplicaCount < 20 {
			t.Errorf("ScaledObject %s: want a Deployment scaled from at least 1 to at least 20", name)
		}
		if len(so.Spec.Triggers) != 1 || so.Spec.Triggers[0].Type != "nats-jetstream" {
			t.Fatalf("ScaledObject %s: want one nats-jetstream trigger", name)
		}
		md := so.Spec.Triggers[0].Metadata
		if md["stream"] != stream || md["consumer"] != consumer {
			t.Errorf("ScaledObject %s scales on %s/%s, want %s/%s", name, md["stream"], md["consumer"], stream, consumer)
		}
		if c, err := messages.ConsumerByName(md["consumer"]); err != nil || c.Stream != md["stream"] {
			t.Errorf("ScaledObject %s: %s is no consumer of %s", name, md["consumer"], md["stream"])
		}
		if n, err := strconv.Atoi(md["lagThreshold"]); err != nil || n < 1 {
			t.Errorf("ScaledObject %s: lagThreshold %q", name, md["lagThreshold"])
		}
		want := "nats-headless." + ov.namespace + ".svc.cluster.local:8222"
		if md["natsServerMonitoringEndpoint"] != want {
			t.Errorf("ScaledObject %s: monitoring endpoint %q, want %q (the headless Service of this namespace)", name, md["natsServerMonitoringEndpoint"], want)
		}
		return
	}
	if len(hpas) != 1 || len(sos) != 0 {
		t.Fatalf("want one HPA and no ScaledObject for %s, got %d and %d", name, len(hpas), len(sos))
	}
	h := hpas[0]
	if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 1 || h.Spec.MaxReplicas < *h.Spec.MinReplicas {
		t.Errorf("HPA %s: replicas %v–%d", name, h.Spec.MinReplicas, h.Spec.MaxReplicas)
	}
	if len(h.Spec.Metrics) != 1 || h.Spec.Metrics[0].Resource == nil || h.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
		t.Errorf("HPA %s: want one CPU metric", name)
	}
}

// checkMonitoring: a Service exposes every service pod's metrics port,
// and the ServiceMonitor (when present) selects it by port name.
func checkMonitoring(t *testing.T, r *rendered, ov overlay) {
	t.Helper()
	var metrics *corev1.Service
	for _, s := range r.Services {
		if s.Name == "crucible-metrics" {
			metrics = s
		}
	}
	if metrics == nil {
		t.Fatal("no crucible-metrics Service")
	}
	sel := labels.SelectorFromSet(metrics.Spec.Selector)
	for _, name := range services {
		if d := r.deployment(name); d != nil && !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("crucible-metrics does not select the %s pods", name)
		}
	}
	if (len(r.ServiceMonitors) > 0) != ov.serviceMonitor {
		t.Errorf("%d ServiceMonitors, want them: %v", len(r.ServiceMonitors), ov.serviceMonitor)
	}
	for _, sm := range r.ServiceMonitors {
		msel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
		if err != nil || !msel.Matches(labels.Set(metrics.Labels)) {
			t.Errorf("ServiceMonitor %s does not select crucible-metrics", sm.Name)
		}
		for _, ep := range sm.Spec.Endpoints {
			if ep.Port != metrics.Spec.Ports[0].Name || ep.Path != "/metrics" {
				t.Errorf("ServiceMonitor %s scrapes %s%s", sm.Name, ep.Port, ep.Path)
			}
		}
	}
}

// checkNATS: the StatefulSet and its configuration agree (replicas and
// routes, JetStream on the persistent volume, TLS where wanted), the
// configuration parses with the NATS server's own parser, and it has a
// user for every service with the password the server's environment gets.
func checkNATS(t *testing.T, r *rendered, ov overlay) {
	t.Helper()
	ss := r.statefulSet("nats")
	if ss == nil {
		t.Fatal("no StatefulSet nats")
	}
	if ss.Spec.Replicas == nil || int(*ss.Spec.Replicas) != ov.natsReplicas {
		t.Errorf("NATS replicas %v, want %d", ss.Spec.Replicas, ov.natsReplicas)
	}
	if len(ss.Spec.VolumeClaimTemplates) != 1 {
		t.Fatal("NATS needs one persistent volume per server")
	}
	cm := r.configMap("nats-config")
	if cm == nil {
		t.Fatal("no nats-config ConfigMap")
	}
	dir := t.TempDir()
	conf := cm.Data["nats.conf"]
	if ov.tls {
		// The parser loads the certificates: give it real ones.
		certs := writeTestCerts(t, dir)
		conf = strings.NewReplacer("/etc/nats-tls/tls.crt", certs.cert, "/etc/nats-tls/tls.key", certs.key, "/etc/nats-tls/ca.crt", certs.ca).Replace(conf)
	}
	for name, data := range map[string]string{"nats.conf": conf, "auth.conf": cm.Data["auth.conf"]} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := ss.Spec.Template.Spec.Containers[0]
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			t.Setenv(e.Name, "nats-0")
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			t.Setenv(e.Name, "pw-"+e.ValueFrom.SecretKeyRef.Key)
		}
	}
	opts, err := server.ProcessConfigFile(filepath.Join(dir, "nats.conf"))
	if err != nil {
		t.Fatalf("nats.conf: %v", err)
	}
	if !opts.JetStream || !strings.HasPrefix(opts.StoreDir, c.VolumeMounts[slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == ss.Spec.VolumeClaimTemplates[0].Name
	})].MountPath+"/") {
		t.Errorf("JetStream must store on the persistent volume, got %q", opts.StoreDir)
	}
	if ov.natsReplicas > 1 {
		if len(opts.Routes) != ov.natsReplicas || opts.Cluster.Name == "" {
			t.Errorf("%d routes in a cluster of %d", len(opts.Routes), ov.natsReplicas)
		}
	} else if len(opts.Routes) != 0 {
		t.Errorf("a single server with %d routes", len(opts.Routes))
	}
	if (opts.TLSConfig != nil) != ov.tls || (opts.Cluster.TLSConfig != nil) != (ov.tls && ov.natsReplicas > 1) {
		t.Errorf("client TLS %v, route TLS %v; want %v", opts.TLSConfig != nil, opts.Cluster.TLSConfig != nil, ov.tls)
	}
	users := map[string]*server.User{}
	for _, u := range opts.Users {
		users[u.Username] = u
	}
	for _, name := range secretKeys["crucible-nats-users"] {
		u := users[name]
		if u == nil {
			t.Errorf("auth.conf has no user %s", name)
			continue
		}
		if u.Password != "pw-"+name {
			t.Errorf("user %s does not get its password from its own Secret key", name)
		}
		if name != "admin" && (u.Permissions == nil || u.Permissions.Publish == nil) {
			t.Errorf("user %s may publish anything", name)
		}
	}
	if len(users) != len(secretKeys["crucible-nats-users"]) {
		t.Errorf("auth.conf has %d users, want %d", len(users), len(secretKeys["crucible-nats-users"]))
	}
}

// checkRedis: the append-only file on the persistent volume and AUTH
// from the init container's file; TLS where wanted.
func checkRedis(t *testing.T, r *rendered, ov overlay) {
	t.Helper()
	ss := r.statefulSet("redis")
	cm := r.configMap("redis-config")
	if ss == nil || cm == nil {
		t.Fatal("no Redis StatefulSet or configuration")
	}
	conf := map[string]string{}
	for _, line := range strings.Split(cm.Data["redis.conf"], "\n") {
		if f := strings.Fields(line); len(f) >= 2 && !strings.HasPrefix(f[0], "#") {
			conf[f[0]] = strings.Join(f[1:], " ")
		}
	}
	if conf["appendonly"] != "yes" || conf["maxmemory-policy"] != "noeviction" {
		t.Errorf("redis.conf: appendonly %q, maxmemory-policy %q", conf["appendonly"], conf["maxmemory-policy"])
	}
	if conf["requirepass"] != "" {
		t.Error("redis.conf holds a password")
	}
	pod := ss.Spec.Template.Spec
	if len(pod.InitContainers) != 1 || !mountedFile(pod.InitContainers[0], conf["include"]) || !mountedFile(pod.Containers[0], conf["include"]) {
		t.Errorf("the AUTH file %s is not written by the init container and read by Redis", conf["include"])
	}
	if !mountedFile(pod.Containers[0], conf["dir"]+"/appendonly.aof") {
		t.Errorf("Redis data dir %s is not a mounted volume", conf["dir"])
	}
	if ov.tls != (conf["tls-port"] == "6379" && conf["port"] == "0") {
		t.Errorf("redis.conf: port %q, tls-port %q; TLS wanted: %v", conf["port"], conf["tls-port"], ov.tls)
	}
}

// TestKubernetesDocs: the Secrets the manifests need are those
// docs/deploy.md tells the user to create.
func TestKubernetesDocs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(secretKeys))
	for name := range secretKeys {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.Contains(string(doc), "secret generic "+name) && !strings.Contains(string(doc), "secret tls "+name) && !strings.Contains(string(doc), "secretName: "+name) {
			t.Errorf("docs/deploy.md never creates the Secret %s", name)
		}
	}
}
