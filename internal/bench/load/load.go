// Package load measures a whole installation under many campaigns at
// once: it starts the servers (or uses given ones), runs the four services
// in this process or as their binaries, submits K campaigns together and
// reports evaluations per second, the latency from a candidate's proposal
// to its evaluation, Redis commands per second and the memory of each
// service. `crucible bench load` is its command line.
package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/proc"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Description is what the benchmark measures and how (the command's help).
const Description = `load starts an installation, submits K campaigns together (each with --budget
evaluations of --task) and waits until all are done and the judge has caught
up. It reports:

  evaluations/s     evaluations of proposed candidates (seeds excluded) over
                    the time from the first submission to the last evaluation
  latency p50/p99   from a candidate's proposed_at (set when the proposer
                    publishes it) to its evaluation's evaluated_at (set when
                    the evaluator has scored it, just before publishing)
  Redis ops/s       commands the Redis server processed during the run
                    (INFO stats total_commands_processed; the embedded server
                    counts its commands)
  memory            the peak resident memory of every service process and
                    server; with the services in this process (the default)
                    they share one process, reported with its Go heap

Servers: nats-server and redis-server as child processes on random ports when
this machine has them, else embedded in this process (--embedded forces
that), or running ones with --nats and --redis. Services: goroutines of this
process, or with --processes the four binaries from --bin (default: next to
this crucible binary), one process each.`

// Options configure a load run.
type Options struct {
	// Campaigns submitted at once, each with Budget evaluations of Task.
	Campaigns, Budget int
	Task              string
	// Evaluators is the number of evaluator replicas.
	Evaluators int
	// OracleDelay is added per candidate (a costlier oracle).
	OracleDelay time.Duration
	// NATSURL and RedisURL use running servers; empty starts them:
	// nats-server and redis-server child processes when this machine has
	// them (unless Embedded), else servers inside this process.
	NATSURL, RedisURL string
	Embedded          bool
	// Processes runs the services as their binaries from BinDir (one
	// process each, memory measured per process); otherwise they run as
	// goroutines of this process.
	Processes bool
	BinDir    string
	// DataDir holds the reference data and checkpoints.
	DataDir string
	// Dir receives the servers' data and the processes' logs ("" = a
	// temporary directory, removed at the end).
	Dir string
	// Timeout bounds the run.
	Timeout time.Duration
	Log     *zap.Logger
}

// Memory is the peak memory of one service (or server) during the run.
type Memory struct {
	Name string
	// RSS is the peak resident set; Heap the peak Go heap in use (0 when
	// not measured, for processes).
	RSS, Heap int64
}

// Result is what a run measured.
type Result struct {
	Campaigns, Budget, Evaluators int
	// Evaluations counts the evaluations of proposed candidates (seed
	// materials excluded); Seeds the seed evaluations.
	Evaluations, Seeds int
	// Wall is from the first submission to the last evaluation.
	Wall              time.Duration
	EvaluationsPerSec float64
	// Latency from a candidate's ProposedAt to its evaluation's
	// EvaluatedAt, over the evaluations of proposed candidates.
	LatencyP50, LatencyP99, LatencyMax time.Duration
	// RedisCommands processed during the run, from INFO stats
	// (total_commands_processed) or miniredis's counter; RedisSource says
	// which.
	RedisCommands     int64
	RedisOpsPerSec    float64
	RedisSource       string
	Memory            []Memory
	Servers, Services string
}

// Run runs one load test.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Campaigns < 1 || o.Budget < 1 || o.Evaluators < 1 {
		return nil, errors.New("bench load: campaigns, budget and evaluators must be at least 1")
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	tk, err := task.ByName(o.Task)
	if err != nil {
		return nil, err
	}
	dir := o.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "crucible-load-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	res := &Result{Campaigns: o.Campaigns, Budget: o.Budget, Evaluators: o.Evaluators}
	ns := "load" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)

	// Servers.
	var (
		natsSrv  *proc.NATS
		redisSrv *proc.Redis
	)
	natsURL, redisURL := o.NATSURL, o.RedisURL
	if natsURL == "" {
		if natsSrv, err = proc.StartNATS(proc.NATSOptions{Dir: filepath.Join(dir, "jetstream"), Embedded: o.Embedded, Log: filepath.Join(dir, "nats.log")}); err != nil {
			return nil, err
		}
		defer natsSrv.Close()
		natsURL = natsSrv.URL()
	}
	if redisURL == "" {
		if err := os.MkdirAll(filepath.Join(dir, "redis"), 0o755); err != nil {
			return nil, err
		}
		if redisSrv, err = proc.StartRedis(proc.RedisOptions{Dir: filepath.Join(dir, "redis"), Embedded: o.Embedded, Log: filepath.Join(dir, "redis.log")}); err != nil {
			return nil, err
		}
		defer redisSrv.Close()
		redisURL = redisSrv.URL()
	}
	res.Servers = describeServers(o, natsSrv, redisSrv)

	// Services.
	var (
		stack *local.Stack
		procs []*proc.Process
	)
	if o.Processes {
		res.Services = fmt.Sprintf("processes: 1 proposer, %d evaluators, 1 reflector, 1 judge", o.Evaluators)
		if procs, err = startProcesses(o, dir, natsURL, redisURL, ns); err != nil {
			return nil, err
		}
		defer func() {
			for _, p := range procs {
				_ = p.Stop(10 * time.Second)
			}
		}()
	} else {
		res.Services = fmt.Sprintf("in this process: 1 proposer, %d evaluators, 1 reflector, 1 judge", o.Evaluators)
		_, oracle, err := wire.Oracle(o.DataDir, 0)
		if err != nil {
			return nil, err
		}
		db, err := wire.Reference(o.DataDir)
		if err != nil {
			return nil, err
		}
		lo := local.Options{NATSURL: natsURL, RedisURL: redisURL, Namespace: ns, Oracle: oracle, Evaluators: o.Evaluators, Log: o.Log,
			Proposer: func(s *store.Store) proposer.Config { return wire.Proposer(db, s, wire.ProposerOptions{}) }}
		lo.Evaluator.Delay = o.OracleDelay
		if stack, err = local.Start(ctx, lo); err != nil {
			return nil, err
		}
		defer stack.Close()
	}

	// A client of our own.
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	b, err := bus.Connect(cctx, bus.Options{URL: natsURL, Name: "crucible-load", Namespace: ns, Logger: o.Log})
	if err != nil {
		return nil, err
	}
	defer b.Close()
	st, err := store.Open(cctx, store.Options{URL: redisURL, Namespace: ns})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	cl := &client.Client{Bus: b, Store: st}

	redisBefore, source, err := redisCommands(ctx, st, redisSrv)
	if err != nil {
		return nil, err
	}
	res.RedisSource = source
	sampler := startSampler(stack, procs, natsSrv, redisSrv)

	start := time.Now()
	specs := make([]*messages.CampaignSpec, o.Campaigns)
	for i := range specs {
		specs[i] = &messages.CampaignSpec{ID: fmt.Sprintf("%s-c%d", ns, i), Task: tk, Budget: o.Budget, Seed: uint64(i + 1)}
		if err := cl.Submit(ctx, specs[i]); err != nil {
			return nil, fmt.Errorf("bench load: submit: %w", err)
		}
	}
	if err := waitDone(ctx, cl, specs); err != nil {
		return nil, err
	}
	redisAfter, _, err := redisCommands(ctx, st, redisSrv)
	if err != nil {
		return nil, err
	}
	res.Memory = sampler.stop()

	var latencies []time.Duration
	var last time.Time
	err = cl.Follow(ctx, messages.StreamEvaluations, messages.SubjectEvaluations+".>", true, func(_ string, data []byte) (bool, error) {
		var ev messages.Evaluation
		if err := messages.Decode(data, &ev); err != nil {
			return false, err
		}
		if ev.EvaluatedAt.After(last) {
			last = ev.EvaluatedAt
		}
		if ev.Candidate.Seed {
			res.Seeds++
			return false, nil
		}
		res.Evaluations++
		latencies = append(latencies, ev.EvaluatedAt.Sub(ev.Candidate.ProposedAt))
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if res.Evaluations == 0 {
		return nil, errors.New("bench load: no evaluation in the stream")
	}
	res.Wall = last.Sub(start)
	res.EvaluationsPerSec = float64(res.Evaluations) / res.Wall.Seconds()
	slices.Sort(latencies)
	res.LatencyP50 = quantile(latencies, 0.50)
	res.LatencyP99 = quantile(latencies, 0.99)
	res.LatencyMax = latencies[len(latencies)-1]
	res.RedisCommands = redisAfter - redisBefore
	res.RedisOpsPerSec = float64(res.RedisCommands) / time.Since(start).Seconds()
	return res, nil
}

// quantile is the q-quantile of sorted xs (nearest rank).
func quantile(xs []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(xs))+0.5) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

func describeServers(o Options, n *proc.NATS, r *proc.Redis) string {
	kind := func(external string, embedded bool, program string) string {
		switch {
		case external != "":
			return "external"
		case embedded:
			return "embedded"
		default:
			return program + " child process"
		}
	}
	nk := kind(o.NATSURL, n != nil && n.Embedded(), "nats-server")
	rk := kind(o.RedisURL, r != nil && r.Embedded(), "redis-server")
	return "NATS " + nk + ", Redis " + rk
}

// startProcesses starts the four service binaries.
func startProcesses(o Options, dir, natsURL, redisURL, ns string) ([]*proc.Process, error) {
	env := []string{"CRUCIBLE_NATS_URL=" + natsURL, "CRUCIBLE_REDIS_URL=" + redisURL, "CRUCIBLE_NAMESPACE=" + ns,
		"CRUCIBLE_DATA=" + o.DataDir, "CRUCIBLE_LOG_LEVEL=warn"}
	var (
		out   []*proc.Process
		addrs []string
	)
	add := func(kind string, i int, extra ...string) error {
		port, err := proc.FreePort()
		if err != nil {
			return err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		addrs = append(addrs, addr)
		extra = append(extra, "CRUCIBLE_HTTP_ADDR="+addr)
		path := filepath.Join(o.BinDir, kind)
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("bench load: --processes needs the %s binary: %w", kind, err)
		}
		name := kind
		if kind == "evaluator" {
			name = fmt.Sprintf("evaluator-%d", i)
		}
		p := &proc.Process{Name: name, Path: path, Env: append(append([]string{}, env...), extra...), Log: filepath.Join(dir, name+".log")}
		if err := p.Start(); err != nil {
			return err
		}
		out = append(out, p)
		return nil
	}
	err := add("proposer", 0)
	for i := 1; i <= o.Evaluators && err == nil; i++ {
		err = add("evaluator", i, "CRUCIBLE_ORACLE_DELAY="+o.OracleDelay.String())
	}
	if err == nil {
		err = add("reflector", 0)
	}
	if err == nil {
		err = add("judge", 0)
	}
	// Submit only once every service is ready (connected, oracle
	// loaded), so the measurement does not include start-up.
	for i := 0; err == nil && i < len(out); i++ {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			perr := app.ProbeReady(context.Background(), addrs[i])
			if perr == nil {
				break
			}
			if !out[i].Running() || time.Now().After(deadline) {
				err = fmt.Errorf("bench load: %s not ready: %w\n%s", out[i].Name, perr, out[i].Tail(10))
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if err != nil {
		for _, p := range out {
			_ = p.Kill()
		}
		return nil, err
	}
	return out, nil
}

// redisCommands reads the server's processed-command count.
func redisCommands(ctx context.Context, st *store.Store, r *proc.Redis) (int64, string, error) {
	if r != nil && r.Miniredis() != nil {
		return int64(r.Miniredis().CommandCount()), "miniredis command counter", nil
	}
	info, err := st.Client().Info(ctx, "stats").Result()
	if err != nil {
		return 0, "", fmt.Errorf("bench load: redis INFO: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, "INFO stats total_commands_processed", err
		}
	}
	return 0, "", errors.New("bench load: redis INFO stats has no total_commands_processed")
}

// waitDone waits until every campaign finished and the judge caught up.
func waitDone(ctx context.Context, cl *client.Client, specs []*messages.CampaignSpec) error {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	pending := slices.Clone(specs)
	for {
		pending = slices.DeleteFunc(pending, func(s *messages.CampaignSpec) bool {
			st, err := cl.Store.State(ctx, s.ID)
			return err == nil && (st.Status == messages.StateCompleted || st.Status == messages.StateExhausted)
		})
		if len(pending) == 0 {
			idle := true
			for _, c := range []string{messages.ConsumerReflector, messages.ConsumerJudge} {
				ok, err := cl.ConsumerIdle(ctx, c)
				idle = idle && err == nil && ok
			}
			if idle {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench load: %d campaigns still running: %w", len(pending), ctx.Err())
		case <-t.C:
		}
	}
}

// sampler records peak memory every 100 ms.
type sampler struct {
	mu    sync.Mutex
	peak  map[string]*Memory
	order []string
	done  chan struct{}
	wg    sync.WaitGroup
}

func startSampler(stack *local.Stack, procs []*proc.Process, n *proc.NATS, r *proc.Redis) *sampler {
	s := &sampler{peak: map[string]*Memory{}, done: make(chan struct{})}
	type source struct {
		name string
		read func() (rss, heap int64)
	}
	var sources []source
	if stack != nil {
		sources = append(sources, source{"this process (all four services)", func() (int64, int64) {
			rss, _ := proc.RSSOf(os.Getpid())
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return rss, int64(ms.HeapInuse)
		}})
	}
	for _, p := range procs {
		sources = append(sources, source{p.Name, func() (int64, int64) { rss, _ := p.RSS(); return rss, 0 }})
	}
	if n != nil && n.Process() != nil {
		sources = append(sources, source{"nats-server", func() (int64, int64) { rss, _ := n.Process().RSS(); return rss, 0 }})
	}
	if r != nil && r.Process() != nil {
		sources = append(sources, source{"redis-server", func() (int64, int64) { rss, _ := r.Process().RSS(); return rss, 0 }})
	}
	for _, src := range sources {
		s.order = append(s.order, src.name)
		s.peak[src.name] = &Memory{Name: src.name}
	}
	sample := func() {
		for _, src := range sources {
			rss, heap := src.read()
			s.mu.Lock()
			m := s.peak[src.name]
			m.RSS, m.Heap = max(m.RSS, rss), max(m.Heap, heap)
			s.mu.Unlock()
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			sample()
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) stop() []Memory {
	close(s.done)
	s.wg.Wait()
	out := make([]Memory, 0, len(s.order))
	for _, name := range s.order {
		out = append(out, *s.peak[name])
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i].Name) < rank(out[j].Name) })
	return out
}

// rank orders memory rows: services first, then servers.
func rank(name string) int {
	for i, p := range []string{"this process", "proposer", "evaluator", "reflector", "judge", "nats-server", "redis-server"} {
		if strings.HasPrefix(name, p) {
			return i
		}
	}
	return 99
}

// Write writes the result as text: rates, latencies, Redis load and the
// peak memory of each process.
func (r *Result) Write(w io.Writer) error {
	fmt.Fprintf(w, "%d campaigns × %d evaluations, %d evaluators (%s; %s)\n", r.Campaigns, r.Budget, r.Evaluators, r.Services, r.Servers)
	fmt.Fprintf(w, "  %d evaluations (+%d seeds) in %.1f s: %.1f evaluations/s\n", r.Evaluations, r.Seeds, r.Wall.Seconds(), r.EvaluationsPerSec)
	fmt.Fprintf(w, "  proposed → evaluated: p50 %s, p99 %s, max %s\n", r.LatencyP50.Round(time.Millisecond), r.LatencyP99.Round(time.Millisecond), r.LatencyMax.Round(time.Millisecond))
	fmt.Fprintf(w, "  Redis: %d commands, %.0f ops/s (%s)\n", r.RedisCommands, r.RedisOpsPerSec, r.RedisSource)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  memory (peak)\tRSS MiB\tGo heap MiB")
	for _, m := range r.Memory {
		heap := "-"
		if m.Heap > 0 {
			heap = fmt.Sprintf("%.1f", float64(m.Heap)/(1<<20))
		}
		fmt.Fprintf(tw, "  %s\t%.1f\t%s\n", m.Name, float64(m.RSS)/(1<<20), heap)
	}
	return tw.Flush()
}
