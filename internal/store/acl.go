package store

import (
	"fmt"
	"strings"
)

// ACLUser is one Redis ACL user of an installation: the keys it may write
// (and read), the keys it may only read, and the commands it may run. The
// table below is the one source of the deployment's users.acl (see
// ACLFile); a test checks that every key the store writes matches the
// patterns of the service that writes it.
type ACLUser struct {
	Name string
	// Write are key patterns, after the installation's prefix
	// ("crucible:" or "crucible:<namespace>:"), the user may read and
	// write. Read are patterns it may only read.
	Write, Read []string
	// Commands are Redis ACL command rules.
	Commands string
	// Role says what the user is for (documentation).
	Role string
}

// Command rules. A service reads and writes through commands and Lua
// scripts (every call inside a script is checked against the user's keys);
// a reader may run read commands only. Neither may run administrative or
// dangerous commands (FLUSHALL, KEYS, CONFIG, DEBUG, …), publish, or
// manage scripts beyond loading them. INFO is allowed: the server's run
// id tells a service that Redis was restarted or replaced (Store.Ready).
const (
	serviceCommands = "-@all +@read +@write +@transaction +@connection +eval +evalsha +script|load +script|exists -@dangerous -@admin +info"
	readerCommands  = "-@all +@read +@connection -@dangerous -@admin +info"
)

// everything is every key of the installation.
const everything = "*"

// ACLUsers are the Redis users of an installation: one per service and
// one for the command-line client. The operator keeps Redis's default user
// (full access, the installation's Redis password) for administration,
// `crucible memory import` and backups.
func ACLUsers() []ACLUser {
	return []ACLUser{
		{
			Name: "proposer",
			Role: "creates campaigns, reserves generations, records proposals and rejects",
			Write: []string{
				"campaigns",
				"{*}:spec", "{*}:state", "{*}:triggers", "{*}:gens", "{*}:seen",
				"{*}:island:*:rejects",
				// Counting campaigns against the operator's limits.
				"submit-lock",
			},
			Read:     []string{everything},
			Commands: serviceCommands,
		},
		{
			Name:     "evaluator",
			Role:     "reads campaigns and their finds; writes nothing",
			Read:     []string{everything},
			Commands: readerCommands,
		},
		{
			Name: "reflector",
			Role: "records evaluations, islands and episodes; requests generations; applies lifecycle actions and reflections to memory banks; reconciles a restored Redis with the streams (verdicts included)",
			Write: []string{
				"{*}:state", "{*}:control", "{*}:triggers", "{*}:gens", "{*}:evaluated", "{*}:comps", "{*}:docs",
				"{*}:findlist", "{*}:islands", "{*}:hits", "{*}:curve", "{*}:log",
				"{*}:island:*:success", "{*}:island:*:failure",
				"{mem:*}:*",
				// Reconciling a Redis restored from an earlier state: the
				// mark and its lock, the campaigns it creates again and the
				// verdicts it re-counts.
				"reconciled", "reconcile-lock", "campaigns", "{*}:spec",
				"{*}:judged:*", "{*}:discoveries", "{*}:judge_rejected",
			},
			Read:     []string{everything},
			Commands: serviceCommands,
		},
		{
			Name: "judge",
			Role: "records verdicts, discoveries and debates",
			Write: []string{
				"{*}:judged:*", "{*}:discoveries", "{*}:findlist", "{*}:judge_rejected",
				"{*}:debate:*",
			},
			Read:     []string{everything},
			Commands: serviceCommands,
		},
		{
			Name:     "client",
			Role:     "the command-line client: reads campaigns, results and transcripts; submits through NATS",
			Read:     []string{everything},
			Commands: readerCommands,
		},
	}
}

// Rules are the user's ACL rules for the key prefix (without a password
// and without on/off): no channels, its command rules, read-only key
// selectors (%R~) and read-write ones (~).
func (u ACLUser) Rules(prefix string) string {
	r := []string{"resetkeys", "resetchannels", u.Commands}
	for _, p := range u.Read {
		r = append(r, "%R~"+prefix+p)
	}
	for _, p := range u.Write {
		r = append(r, "~"+prefix+p)
	}
	return strings.Join(r, " ")
}

// MayWrite reports whether the user may write key (a full key, with the
// prefix).
func (u ACLUser) MayWrite(prefix, key string) bool {
	for _, p := range u.Write {
		if globMatch(prefix+p, key) {
			return true
		}
	}
	return false
}

// globMatch matches s against a pattern whose only special character is
// "*" (any characters), the subset of Redis's glob the table uses.
func globMatch(pattern, s string) bool {
	head, rest, ok := strings.Cut(pattern, "*")
	if !ok {
		return pattern == s
	}
	if !strings.HasPrefix(s, head) {
		return false
	}
	for i := len(head); i <= len(s); i++ {
		if globMatch(rest, s[i:]) {
			return true
		}
	}
	return false
}

// ACLFile is the Redis ACL file of an installation whose keys start with
// prefix: the default user line first (the operator's, authenticated with
// the installation's Redis password), then one line per user of ACLUsers,
// all "on" without passwords. The deployments add each user's password
// (">password") when Redis starts; a line left without one cannot log in.
func ACLFile(prefix string) string {
	var b strings.Builder
	b.WriteString("user default on ~* &* +@all\n")
	for _, u := range ACLUsers() {
		fmt.Fprintf(&b, "user %s on %s\n", u.Name, u.Rules(prefix))
	}
	return b.String()
}
