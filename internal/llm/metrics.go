package llm

import "github.com/prometheus/client_golang/prometheus"

var (
	metricRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "crucible", Subsystem: "llm", Name: "requests_total",
		Help: "LLM HTTP requests by outcome: ok, connection_refused, dns, tls, connection, timeout, rate_limited, server_error, context_length, format_unsupported, unauthorized, model_not_found, quota, bad_request, budget (not sent: the campaign's call budget is spent).",
	}, []string{"outcome"})
	metricLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "crucible", Subsystem: "llm", Name: "request_seconds",
		Help:    "Latency of LLM HTTP requests, by outcome.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 14), // 50 ms … 7 min
	}, []string{"outcome"})
	metricTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "crucible", Subsystem: "llm", Name: "tokens_total",
		Help: "LLM tokens of answered requests (the server's usage, or estimates when it reports none), by kind: prompt, completion.",
	}, []string{"kind"})
	metricPromptTokens = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "crucible", Subsystem: "llm", Name: "prompt_tokens",
		Help:    "Prompt tokens per answered request (LLEMA Table 10 reports 563).",
		Buckets: prometheus.ExponentialBuckets(128, 1.5, 12),
	})
	metricInFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "crucible", Subsystem: "llm", Name: "requests_in_flight",
		Help: "LLM requests waiting for an answer.",
	})
	metricRetryWait = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "crucible", Subsystem: "llm", Name: "retry_wait_seconds_total",
		Help: "Time spent waiting before retries (backoff and Retry-After).",
	})
	metricLimiterWait = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "crucible", Subsystem: "llm", Name: "rate_limit_wait_seconds_total",
		Help: "Time spent waiting for the client-side requests- and tokens-per-minute limits.",
	})
	metricCandidates = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "crucible", Subsystem: "llm", Name: "candidates_total",
		Help: "Candidates in LLM answers, by outcome: parsed (handed to the proposer's checks), rejected (unusable: bad JSON, unknown element, length or formula mismatch, duplicate).",
	}, []string{"outcome"})
)

// Collectors are the LLM client's and generator's Prometheus metrics, for
// the proposer's registry.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{metricRequests, metricLatency, metricTokens, metricPromptTokens,
		metricInFlight, metricRetryWait, metricLimiterWait, metricCandidates}
}
