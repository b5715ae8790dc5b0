package deploy

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The manifests use two custom resources. Their Go types live in projects
// too heavy to import for a test (KEDA, the Prometheus Operator), so these
// structs mirror the parts of their CRD schemas Crucible uses, field for
// field and with the same JSON names; decoding rejects any other field, so
// a typo or a field from another version fails the test instead of being
// dropped by the API server.

// ScaledObject mirrors keda.sh/v1alpha1 ScaledObject (KEDA 2.8 and later;
// fields as in the 2.14 CRD).
type ScaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ScaledObjectSpec `json:"spec"`
}

// ScaledObjectSpec mirrors the spec of a ScaledObject.
type ScaledObjectSpec struct {
	ScaleTargetRef        ScaleTarget     `json:"scaleTargetRef"`
	PollingInterval       *int32          `json:"pollingInterval,omitempty"`
	InitialCooldownPeriod *int32          `json:"initialCooldownPeriod,omitempty"`
	CooldownPeriod        *int32          `json:"cooldownPeriod,omitempty"`
	IdleReplicaCount      *int32          `json:"idleReplicaCount,omitempty"`
	MinReplicaCount       *int32          `json:"minReplicaCount,omitempty"`
	MaxReplicaCount       *int32          `json:"maxReplicaCount,omitempty"`
	Advanced              *ScaledAdvanced `json:"advanced,omitempty"`
	Triggers              []ScaleTrigger  `json:"triggers"`
	Fallback              *ScaledFallback `json:"fallback,omitempty"`
}

// ScaleTarget is the workload a ScaledObject scales.
type ScaleTarget struct {
	APIVersion             string `json:"apiVersion,omitempty"`
	Kind                   string `json:"kind,omitempty"`
	Name                   string `json:"name"`
	EnvSourceContainerName string `json:"envSourceContainerName,omitempty"`
}

// ScaledAdvanced mirrors spec.advanced.
type ScaledAdvanced struct {
	HorizontalPodAutoscalerConfig *HPAConfig `json:"horizontalPodAutoscalerConfig,omitempty"`
	RestoreToOriginalReplicaCount bool       `json:"restoreToOriginalReplicaCount,omitempty"`
}

// HPAConfig mirrors spec.advanced.horizontalPodAutoscalerConfig.
type HPAConfig struct {
	Name     string                                         `json:"name,omitempty"`
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// ScaledFallback mirrors spec.fallback.
type ScaledFallback struct {
	FailureThreshold int32 `json:"failureThreshold"`
	Replicas         int32 `json:"replicas"`
}

// ScaleTrigger mirrors one entry of spec.triggers.
type ScaleTrigger struct {
	Type              string            `json:"type"`
	Name              string            `json:"name,omitempty"`
	UseCachedMetrics  bool              `json:"useCachedMetrics,omitempty"`
	Metadata          map[string]string `json:"metadata"`
	AuthenticationRef *struct {
		Name string `json:"name"`
		Kind string `json:"kind,omitempty"`
	} `json:"authenticationRef,omitempty"`
	MetricType autoscalingv2.MetricTargetType `json:"metricType,omitempty"`
}

// ServiceMonitor mirrors monitoring.coreos.com/v1 ServiceMonitor
// (Prometheus Operator 0.50 and later).
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ServiceMonitorSpec `json:"spec"`
}

// ServiceMonitorSpec mirrors the spec of a ServiceMonitor.
type ServiceMonitorSpec struct {
	JobLabel          string               `json:"jobLabel,omitempty"`
	TargetLabels      []string             `json:"targetLabels,omitempty"`
	PodTargetLabels   []string             `json:"podTargetLabels,omitempty"`
	Endpoints         []MonitorEndpoint    `json:"endpoints"`
	Selector          metav1.LabelSelector `json:"selector"`
	NamespaceSelector *NamespaceSelector   `json:"namespaceSelector,omitempty"`
	SampleLimit       *uint64              `json:"sampleLimit,omitempty"`
}

// MonitorEndpoint mirrors one entry of spec.endpoints (the plain-HTTP
// subset).
type MonitorEndpoint struct {
	Port            string              `json:"port,omitempty"`
	Path            string              `json:"path,omitempty"`
	Scheme          string              `json:"scheme,omitempty"`
	Params          map[string][]string `json:"params,omitempty"`
	Interval        string              `json:"interval,omitempty"`
	ScrapeTimeout   string              `json:"scrapeTimeout,omitempty"`
	HonorLabels     bool                `json:"honorLabels,omitempty"`
	HonorTimestamps *bool               `json:"honorTimestamps,omitempty"`
}

// NamespaceSelector mirrors spec.namespaceSelector.
type NamespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}
