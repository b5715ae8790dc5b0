package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/crucible-sci/crucible/internal/proc"
)

// Replica is one supervised service process.
type Replica struct {
	// Kind is the service ("proposer", "evaluator", "reflector", "judge"),
	// or "evaluator-relax", an evaluator with the relax role.
	Kind string
	P    *proc.Process
	// mu is held while the controller kills and restarts the process, so
	// the supervisor does not mistake the kill for a crash.
	mu sync.Mutex
}

// Controller kills service processes at random, restarts them, restarts
// the servers once each at given points of the campaign's progress, and
// supervises the processes as Kubernetes would: a process that exits on
// its own is restarted, and counted as a crash.
type Controller struct {
	Replicas []*Replica
	NATS     *proc.NATS
	Redis    *proc.Redis
	Rand     *rand.Rand
	// MinInterval and MaxInterval bound the pause between two actions.
	MinInterval, MaxInterval time.Duration
	// MaxRestartDelay bounds how long a killed process stays dead.
	MaxRestartDelay time.Duration
	// ServerDowntime is how long a killed server stays down at least
	// (MaxRestartDelay more at most); a replica is killed and restarted
	// meanwhile.
	ServerDowntime time.Duration
	// RedisAt and NATSAt are the progress fractions (0–1) at which Redis
	// and the NATS server are restarted (once each; a negative value
	// never).
	RedisAt, NATSAt float64
	// RollbackAt is the progress fraction at which a snapshot of Redis's
	// files is taken; RollbackAfter later, Redis is killed and started
	// again from that snapshot — it has lost everything written since,
	// while the streams kept it (a negative RollbackAt: never).
	RollbackAt    float64
	RollbackAfter time.Duration
	// GracefulShare is the fraction (0–1) of the replicas' stops that are
	// a graceful SIGTERM (the replica drains its in-flight work, as on a
	// rolling update) rather than a SIGKILL; StopTimeout bounds the drain
	// before the process is killed after all.
	GracefulShare float64
	StopTimeout   time.Duration
	// Logf receives one line per action.
	Logf func(format string, args ...any)

	mu    sync.Mutex
	stats Stats
	// running counts the supervisors, so Wait can tell when none can
	// start a process any more.
	running sync.WaitGroup
}

// Stats count what the controller did and saw.
type Stats struct {
	// Kills are SIGKILLs by service kind.
	Kills map[string]int
	// Terms are graceful stops (SIGTERM) by service kind.
	Terms map[string]int
	// Crashes are exits the controller did not cause, by service kind,
	// with the last log lines of each in CrashLogs.
	Crashes   map[string]int
	CrashLogs []string
	// NATSRestarts and RedisRestarts count server restarts; NATSKilled
	// are the times the NATS server was killed.
	NATSRestarts, RedisRestarts int
	NATSKilled                  []time.Time
	// RedisRollbacks count restarts from an earlier snapshot; RolledBack
	// is how far back the last one went.
	RedisRollbacks int
	RolledBack     time.Duration
}

// TotalTerms is the number of service processes stopped with SIGTERM.
func (s Stats) TotalTerms() int {
	n := 0
	for _, k := range s.Terms {
		n += k
	}
	return n
}

// TotalKills is the number of service processes killed.
func (s Stats) TotalKills() int {
	n := 0
	for _, k := range s.Kills {
		n += k
	}
	return n
}

// String lists the kills by kind.
func (s Stats) String() string {
	kinds := make([]string, 0, len(s.Kills))
	for k := range s.Kills {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, s.Kills[k]))
	}
	crashes := 0
	for _, n := range s.Crashes {
		crashes += n
	}
	return fmt.Sprintf("%d kills (%s), %d graceful stops, %d NATS restarts, %d Redis restarts, %d Redis rollbacks (%v back), %d crashes",
		s.TotalKills(), strings.Join(parts, ", "), s.TotalTerms(), s.NATSRestarts, s.RedisRestarts, s.RedisRollbacks, s.RolledBack.Round(100*time.Millisecond), crashes)
}

// Stats returns a copy of the counts so far.
func (c *Controller) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Stats{Kills: map[string]int{}, Terms: map[string]int{}, Crashes: map[string]int{}, CrashLogs: append([]string(nil), c.stats.CrashLogs...),
		NATSRestarts: c.stats.NATSRestarts, RedisRestarts: c.stats.RedisRestarts, NATSKilled: append([]time.Time(nil), c.stats.NATSKilled...),
		RedisRollbacks: c.stats.RedisRollbacks, RolledBack: c.stats.RolledBack}
	for k, v := range c.stats.Kills {
		out.Kills[k] = v
	}
	for k, v := range c.stats.Terms {
		out.Terms[k] = v
	}
	for k, v := range c.stats.Crashes {
		out.Crashes[k] = v
	}
	return out
}

func (c *Controller) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// Supervise restarts replicas that exit on their own until ctx ends. It
// returns at once; the supervisors stop with ctx (Wait waits for them).
func (c *Controller) Supervise(ctx context.Context) {
	for _, r := range c.Replicas {
		c.running.Add(1)
		go func() {
			defer c.running.Done()
			c.supervise(ctx, r)
		}()
	}
}

// Wait returns once every supervisor has stopped (after their context
// ended): from then on the controller starts no process.
func (c *Controller) Wait() { c.running.Wait() }

func (c *Controller) supervise(ctx context.Context, r *Replica) {
	for {
		done := r.P.Done()
		select {
		case <-ctx.Done():
			return
		case <-done:
		}
		r.mu.Lock()
		if ctx.Err() != nil {
			r.mu.Unlock()
			return
		}
		if r.P.Running() { // the controller killed and restarted it
			r.mu.Unlock()
			continue
		}
		c.mu.Lock()
		if c.stats.Crashes == nil {
			c.stats.Crashes = map[string]int{}
		}
		c.stats.Crashes[r.Kind]++
		c.stats.CrashLogs = append(c.stats.CrashLogs, fmt.Sprintf("%s exited (%v):\n%s", r.P.Name, r.P.ExitErr(), r.P.Tail(15)))
		c.mu.Unlock()
		c.logf("%s exited on its own (%v); restarting", r.P.Name, r.P.ExitErr())
		if !proc.WaitContext(ctx, 500*time.Millisecond) {
			r.mu.Unlock()
			return
		}
		if err := r.P.Start(); err != nil {
			c.logf("restart %s: %v", r.P.Name, err)
		}
		r.mu.Unlock()
	}
}

// Run acts until ctx ends or finished reports true: after a random pause
// it restarts a server whose progress point was passed, or kills a
// random replica — a kind not killed yet first — and restarts it after a
// random delay. progress reports the campaign's fraction done (ok false
// when it cannot be read).
func (c *Controller) Run(ctx context.Context, progress func() (float64, bool), finished func() bool) {
	c.mu.Lock()
	if c.stats.Kills == nil {
		c.stats.Kills = map[string]int{}
	}
	c.mu.Unlock()
	redisDone, natsDone := c.RedisAt < 0 || c.Redis == nil, c.NATSAt < 0 || c.NATS == nil
	rollbackDone := c.RollbackAt < 0 || c.Redis == nil || c.Redis.Embedded()
	var snapshotAt time.Time
	last := 0.0
	for ctx.Err() == nil && !finished() {
		pause := c.MinInterval + time.Duration(c.Rand.Int64N(int64(c.MaxInterval-c.MinInterval)+1))
		if !proc.WaitContext(ctx, pause) || finished() {
			return
		}
		if p, ok := progress(); ok {
			last = p
		}
		switch {
		case !rollbackDone && snapshotAt.IsZero() && last >= c.RollbackAt:
			if err := c.Redis.Snapshot(); err != nil {
				c.logf("snapshot redis: %v", err)
				rollbackDone = true
				break
			}
			snapshotAt = time.Now()
			c.logf("snapshot of Redis's files taken; Redis goes back to it in %v", c.RollbackAfter)
		case !rollbackDone && !snapshotAt.IsZero() && time.Since(snapshotAt) >= c.RollbackAfter:
			rollbackDone = true
			c.rollbackRedis(ctx, snapshotAt)
		case !redisDone && last >= c.RedisAt:
			redisDone = true
			c.restartServer(ctx, "redis", c.Redis, &c.stats.RedisRestarts)
		case !natsDone && last >= c.NATSAt:
			natsDone = true
			c.restartServer(ctx, "nats", c.NATS, &c.stats.NATSRestarts)
		default:
			c.killOne(ctx)
		}
	}
}

func (c *Controller) deadTime() time.Duration {
	return time.Duration(c.Rand.Int64N(int64(c.MaxRestartDelay) + 1))
}

func (c *Controller) killOne(ctx context.Context) {
	c.mu.Lock()
	var fresh []*Replica
	for _, r := range c.Replicas {
		if c.stats.Kills[r.Kind] == 0 {
			fresh = append(fresh, r)
		}
	}
	c.mu.Unlock()
	pool := c.Replicas
	if len(fresh) > 0 {
		pool = fresh
	}
	r := pool[c.Rand.IntN(len(pool))]
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.P.Running() {
		return // its supervisor restarts it
	}
	dead := c.deadTime()
	if c.GracefulShare > 0 && c.Rand.Float64() < c.GracefulShare {
		start := time.Now()
		if err := r.P.Stop(c.StopTimeout); err != nil {
			c.logf("SIGTERM %s: %v", r.P.Name, err)
		}
		c.mu.Lock()
		if c.stats.Terms == nil {
			c.stats.Terms = map[string]int{}
		}
		c.stats.Terms[r.Kind]++
		c.mu.Unlock()
		c.logf("SIGTERM %s (stopped in %v); restart in %v", r.P.Name, time.Since(start).Round(time.Millisecond), dead.Round(time.Millisecond))
	} else {
		if err := r.P.Kill(); err != nil {
			c.logf("kill %s: %v", r.P.Name, err)
			return
		}
		c.mu.Lock()
		if c.stats.Kills == nil {
			c.stats.Kills = map[string]int{}
		}
		c.stats.Kills[r.Kind]++
		c.mu.Unlock()
		c.logf("SIGKILL %s; restart in %v", r.P.Name, dead.Round(time.Millisecond))
	}
	if !proc.WaitContext(ctx, dead) {
		return // stopping: the process stays down
	}
	if err := r.P.Start(); err != nil {
		c.logf("restart %s: %v", r.P.Name, err)
	}
}

// restartDuringOutage kills a random replica while a server is down and
// starts it again at once: it must wait for the server, not give up.
func (c *Controller) restartDuringOutage(server string) {
	r := c.Replicas[c.Rand.IntN(len(c.Replicas))]
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.P.Running() || r.P.Kill() != nil {
		return
	}
	c.mu.Lock()
	c.stats.Kills[r.Kind]++
	c.mu.Unlock()
	c.logf("SIGKILL %s while %s is down; restarting it at once", r.P.Name, server)
	if err := r.P.Start(); err != nil {
		c.logf("restart %s: %v", r.P.Name, err)
	}
}

// server is a NATS or Redis server the controller kills and restarts.
type server interface {
	Kill() error
	Start() error
}

// restartServer SIGKILLs a server ("redis" or "nats"), kills a service
// during the outage, and starts the server again after the downtime,
// counting the restart in restarts.
func (c *Controller) restartServer(ctx context.Context, name string, srv server, restarts *int) {
	if err := srv.Kill(); err != nil {
		c.logf("kill %s: %v", name, err)
		return
	}
	if name == "nats" {
		c.mu.Lock()
		c.stats.NATSKilled = append(c.stats.NATSKilled, time.Now())
		c.mu.Unlock()
	}
	dead := c.ServerDowntime + c.deadTime()
	c.logf("SIGKILL %s-server; restart in %v", name, dead.Round(time.Millisecond))
	c.restartDuringOutage(name)
	proc.WaitContext(ctx, dead)
	if err := srv.Start(); err != nil {
		c.logf("restart %s: %v", name, err)
		return
	}
	c.mu.Lock()
	*restarts++
	c.mu.Unlock()
}

// rollbackRedis SIGKILLs Redis, puts back the files of the snapshot taken
// at snapshotAt, and starts it again after the downtime: it comes back
// having lost everything written since.
func (c *Controller) rollbackRedis(ctx context.Context, snapshotAt time.Time) {
	if err := c.Redis.Kill(); err != nil {
		c.logf("kill redis: %v", err)
		return
	}
	back := time.Since(snapshotAt)
	if err := c.Redis.RestoreSnapshot(); err != nil {
		c.logf("restore redis snapshot: %v", err)
	}
	dead := c.ServerDowntime/2 + c.deadTime()
	c.logf("SIGKILL redis-server; it restarts in %v from its files of %v ago", dead.Round(time.Millisecond), back.Round(time.Millisecond))
	proc.WaitContext(ctx, dead)
	if err := c.Redis.Start(); err != nil {
		c.logf("restart redis: %v", err)
		return
	}
	c.mu.Lock()
	c.stats.RedisRollbacks++
	c.stats.RolledBack = back
	c.mu.Unlock()
}
