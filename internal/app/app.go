// Package app is what every Crucible service binary shares: configuration
// from flags and CRUCIBLE_* environment variables, structured logging,
// connections to NATS and Redis, the HTTP endpoint with Prometheus metrics
// and health checks, and shutdown on SIGTERM.
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Config is the part of every service's configuration that concerns the
// infrastructure. Each field has a flag and a CRUCIBLE_* variable; a flag
// given on the command line wins over the variable.
type Config struct {
	NATS  bus.Options
	Redis store.Options
	// Namespace isolates installations sharing servers (streams, subjects
	// and keys).
	Namespace string
	// HTTPAddr serves /metrics, /healthz and /readyz; "" disables it.
	HTTPAddr string
	// LogLevel is debug, info, warn or error; LogFormat json or console.
	LogLevel, LogFormat string
	// DrainTimeout bounds the time in-flight work may take after SIGTERM.
	DrainTimeout time.Duration
	// Provisioned: the streams and durable consumers were created by an
	// administrator (`crucible setup`); the service waits for them instead
	// of creating them.
	Provisioned bool
	// Probe checks the readiness of the instance serving HTTPAddr on this
	// host and exits, instead of running the service.
	Probe bool
	// secretErrs are the secret files named but unreadable (Validate
	// reports them).
	secretErrs []error
}

// env returns the variable's value or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// envDuration parses a duration variable, falling back to def.
func envDuration(name string, def time.Duration) time.Duration {
	if v, ok := os.LookupEnv(name); ok {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}

// envInt parses an integer variable, falling back to def.
func envInt(name string, def int) int {
	if v, ok := os.LookupEnv(name); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

// EnvString, EnvInt, EnvDuration and EnvFloat give services the same
// defaults-from-environment rule for their own flags.
func EnvString(name, def string) string { return env(name, def) }

// EnvInt parses an integer variable, falling back to def.
func EnvInt(name string, def int) int { return envInt(name, def) }

// EnvDuration parses a duration variable, falling back to def.
func EnvDuration(name string, def time.Duration) time.Duration { return envDuration(name, def) }

// EnvBool parses a boolean variable, falling back to def.
func EnvBool(name string, def bool) bool { return envBool(name, def) }

// EnvFloat parses a float variable, falling back to def.
func EnvFloat(name string, def float64) float64 {
	if v, ok := os.LookupEnv(name); ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	}
	return def
}

// secret reads a secret from NAME, or from the file named by NAME_FILE
// (Kubernetes and compose secrets are files). A file named but missing
// or unreadable is an error (reported by Validate), never an empty
// secret.
func (c *Config) secret(name string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	if f := os.Getenv(name + "_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			c.secretErrs = append(c.secretErrs, fmt.Errorf("config: %s_FILE: %w", name, err))
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	return ""
}

// Bind registers the flags of c on fs, with defaults from the environment.
func (c *Config) Bind(fs *pflag.FlagSet, service string) {
	c.BindConnection(fs)
	fs.IntVar(&c.NATS.Replicas, "stream-replicas", envInt("CRUCIBLE_STREAM_REPLICAS", 1), "replicas of each JetStream stream (3 on a cluster) [CRUCIBLE_STREAM_REPLICAS]")
	fs.StringVar(&c.HTTPAddr, "http", env("CRUCIBLE_HTTP_ADDR", DefaultHTTPAddr), "address of /metrics, /healthz, /readyz (this host only by default; containers set :9090); empty to disable [CRUCIBLE_HTTP_ADDR]")
	fs.StringVar(&c.LogLevel, "log-level", env("CRUCIBLE_LOG_LEVEL", "info"), "debug, info, warn or error [CRUCIBLE_LOG_LEVEL]")
	fs.StringVar(&c.LogFormat, "log-format", env("CRUCIBLE_LOG_FORMAT", "json"), "json or console [CRUCIBLE_LOG_FORMAT]")
	fs.DurationVar(&c.DrainTimeout, "drain-timeout", envDuration("CRUCIBLE_DRAIN_TIMEOUT", 30*time.Second), "time in-flight work may take after SIGTERM [CRUCIBLE_DRAIN_TIMEOUT]")
	fs.BoolVar(&c.Provisioned, "provisioned", envBool("CRUCIBLE_PROVISIONED", false), "the streams and consumers were created by \"crucible setup\": wait for them instead of creating them, so the NATS user needs no stream or consumer admin permission [CRUCIBLE_PROVISIONED]")
	fs.BoolVar(&c.Probe, "probe", false, "check /readyz of the instance serving --http on this host and exit 0 (ready) or 1, for container health checks")
	c.NATS.Name = service
}

// envBool parses a boolean variable, falling back to def.
func envBool(name string, def bool) bool {
	if v, ok := os.LookupEnv(name); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return def
}

// ProbeReady asks the instance serving addr (a --http address) on this
// host whether it is ready: nil when /readyz answers 200.
func ProbeReady(ctx context.Context, addr string) error {
	if addr == "" {
		return errors.New("probe: --http is empty: no endpoint to probe")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("probe: --http %q: %w", addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/readyz", nil)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("probe: %s/readyz: %s", addr, resp.Status)
	}
	return nil
}

// BindConnection registers the flags that reach NATS and Redis (what a
// client needs too), with defaults from the environment; secrets come from
// the environment only.
func (c *Config) BindConnection(fs *pflag.FlagSet) {
	fs.StringVar(&c.NATS.URL, "nats", env("CRUCIBLE_NATS_URL", "nats://127.0.0.1:4222"), "NATS server URL(s), comma-separated [CRUCIBLE_NATS_URL]")
	fs.StringVar(&c.NATS.User, "nats-user", env("CRUCIBLE_NATS_USER", ""), "NATS user [CRUCIBLE_NATS_USER]")
	fs.StringVar(&c.NATS.InboxPrefix, "nats-inbox-prefix", env("CRUCIBLE_NATS_INBOX_PREFIX", ""), "prefix of reply subjects (default _INBOX_<nats-user> for a named user, else _INBOX) [CRUCIBLE_NATS_INBOX_PREFIX]")
	c.NATS.Password = c.secret("CRUCIBLE_NATS_PASSWORD")
	c.NATS.Token = c.secret("CRUCIBLE_NATS_TOKEN")
	fs.StringVar(&c.NATS.NKeySeedFile, "nats-nkey", env("CRUCIBLE_NATS_NKEY_FILE", ""), "NATS nkey seed file [CRUCIBLE_NATS_NKEY_FILE]")
	fs.StringVar(&c.NATS.CredsFile, "nats-creds", env("CRUCIBLE_NATS_CREDS_FILE", ""), "NATS credentials file [CRUCIBLE_NATS_CREDS_FILE]")
	fs.StringVar(&c.NATS.TLSCAFile, "nats-tls-ca", env("CRUCIBLE_NATS_TLS_CA", ""), "CA bundle to verify NATS [CRUCIBLE_NATS_TLS_CA]")
	fs.StringVar(&c.NATS.TLSCertFile, "nats-tls-cert", env("CRUCIBLE_NATS_TLS_CERT", ""), "client certificate for NATS [CRUCIBLE_NATS_TLS_CERT]")
	fs.StringVar(&c.NATS.TLSKeyFile, "nats-tls-key", env("CRUCIBLE_NATS_TLS_KEY", ""), "client key for NATS [CRUCIBLE_NATS_TLS_KEY]")
	fs.StringVar(&c.Redis.URL, "redis", env("CRUCIBLE_REDIS_URL", "redis://127.0.0.1:6379"), "Redis URL, or host:port,... for a cluster [CRUCIBLE_REDIS_URL]")
	fs.StringVar(&c.Redis.MasterName, "redis-master", env("CRUCIBLE_REDIS_MASTER", ""), "Sentinel master name [CRUCIBLE_REDIS_MASTER]")
	fs.StringVar(&c.Redis.Username, "redis-user", env("CRUCIBLE_REDIS_USER", ""), "Redis ACL user [CRUCIBLE_REDIS_USER]")
	c.Redis.Password = c.secret("CRUCIBLE_REDIS_PASSWORD")
	fs.StringVar(&c.Redis.TLSCAFile, "redis-tls-ca", env("CRUCIBLE_REDIS_TLS_CA", ""), "CA bundle to verify Redis [CRUCIBLE_REDIS_TLS_CA]")
	fs.StringVar(&c.Redis.TLSCertFile, "redis-tls-cert", env("CRUCIBLE_REDIS_TLS_CERT", ""), "client certificate for Redis [CRUCIBLE_REDIS_TLS_CERT]")
	fs.StringVar(&c.Redis.TLSKeyFile, "redis-tls-key", env("CRUCIBLE_REDIS_TLS_KEY", ""), "client key for Redis [CRUCIBLE_REDIS_TLS_KEY]")
	fs.StringVar(&c.Namespace, "namespace", env("CRUCIBLE_NAMESPACE", ""), "isolate this installation on shared servers [CRUCIBLE_NAMESPACE]")
	if c.NATS.Replicas == 0 {
		c.NATS.Replicas = 1
	}
	if c.LogLevel == "" {
		c.LogLevel, c.LogFormat = "info", "json"
	}
}

// SecretErr reports the secret files named (*_FILE) but unreadable, or
// nil.
func (c *Config) SecretErr() error { return errors.Join(c.secretErrs...) }

// DefaultHTTPAddr is where a service serves its metrics and probes
// unless told otherwise: this host only. The container image and the
// manifests set the pod's address explicitly.
const DefaultHTTPAddr = "127.0.0.1:9090"

// Validate names the bad field.
func (c *Config) Validate() error {
	if len(c.secretErrs) > 0 {
		return errors.Join(c.secretErrs...)
	}
	switch {
	case c.NATS.URL == "":
		return errors.New("config: nats: empty URL")
	case c.Redis.URL == "":
		return errors.New("config: redis: empty URL")
	case c.NATS.Replicas < 1 || c.NATS.Replicas > 5:
		return fmt.Errorf("config: stream-replicas: %d outside [1, 5]", c.NATS.Replicas)
	case c.DrainTimeout < 0:
		return fmt.Errorf("config: drain-timeout: %v is negative", c.DrainTimeout)
	}
	if _, err := zapcore.ParseLevel(c.LogLevel); err != nil {
		return fmt.Errorf("config: log-level: %w", err)
	}
	if c.LogFormat != "json" && c.LogFormat != "console" {
		return fmt.Errorf("config: log-format: %q, want json or console", c.LogFormat)
	}
	return nil
}

// Logger builds the service's zap logger.
func Logger(level, format string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	cfg := zap.NewProductionConfig()
	if format == "console" {
		cfg = zap.NewDevelopmentConfig()
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.DisableStacktrace = lvl > zapcore.DebugLevel
	return cfg.Build()
}

// Infra is a service's live connections.
type Infra struct {
	Bus    *bus.Bus
	Store  *store.Store
	Log    *zap.Logger
	Config *Config
}

// Connect dials NATS (and ensures the streams) and Redis.
func Connect(ctx context.Context, c *Config, log *zap.Logger) (*Infra, error) {
	c.NATS.Namespace = c.Namespace
	c.NATS.Logger = log
	c.NATS.Provisioned = c.Provisioned
	c.Redis.Namespace = c.Namespace
	c.Redis.Notify = func(line string) { log.Warn(line) }
	// A service's work in flight must not reach a Redis restored from an
	// earlier state before the reflector has reconciled it.
	c.Redis.Fenced = true
	store.RouteLogs(log)
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	b, err := bus.Connect(cctx, c.NATS)
	if err != nil {
		return nil, err
	}
	if err := b.EnsureStreams(cctx); err != nil {
		b.Close()
		return nil, err
	}
	c.Redis.History = History(b)
	s, err := store.Open(cctx, c.Redis)
	if err != nil {
		b.Close()
		return nil, err
	}
	return &Infra{Bus: b, Store: s, Log: log, Config: c}, nil
}

// History tells the store whether the installation has a history in
// the streams (a campaign submitted): Redis without a reconciliation mark
// then lost its state (store.Options.History).
func History(b *bus.Bus) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		return b.Holds(ctx, messages.StreamCampaigns, messages.SubjectSubmit+".>")
	}
}

// Close closes the connections.
func (in *Infra) Close() {
	in.Bus.Close()
	_ = in.Store.Close()
}

// Health checks both connections.
func (in *Infra) Health(ctx context.Context) error {
	if err := in.Bus.Healthy(); err != nil {
		return &unready{what: "nats", err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := in.Store.Client().Ping(ctx).Err(); err != nil {
		return &unready{what: "redis", err: err}
	}
	return nil
}

// unready names the connection that is down.
type unready struct {
	what string
	err  error
}

func (e *unready) Error() string { return e.what + ": " + e.err.Error() }
func (e *unready) Unwrap() error { return e.err }

// readyStatus is /readyz's short answer: which connection is down.
func readyStatus(err error) string {
	var u *unready
	if errors.As(err, &u) {
		return u.what + " unavailable"
	}
	return "unavailable"
}

// Registry returns a Prometheus registry with the Go and process metrics,
// the bus's metrics and the given collectors.
func Registry(cs ...prometheus.Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, c := range bus.Collectors() {
		_ = reg.Register(c)
	}
	for _, c := range cs {
		_ = reg.Register(c)
	}
	return reg
}

// ServeHTTP serves /metrics, /healthz (the process is alive) and /readyz
// (its connections are up) on addr until ctx ends. It returns the bound
// address (useful with port 0).
func ServeHTTP(ctx context.Context, addr string, reg *prometheus.Registry, ready func(context.Context) error, log *zap.Logger) (string, error) {
	if addr == "" {
		return "", nil
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := ready(r.Context()); err != nil {
			// The details (addresses, server messages) go to the log, not
			// to whoever can reach the port.
			log.Warn("not ready", zap.Error(err))
			http.Error(w, "not ready: "+readyStatus(err), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("http %s: %w", addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server", zap.Error(err))
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr().String(), nil
}

// SignalContext is cancelled on SIGTERM or SIGINT.
func SignalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
}
