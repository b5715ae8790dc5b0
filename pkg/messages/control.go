package messages

import (
	"regexp"
	"time"
)

// SubjectControl carries lifecycle actions on a campaign
// (crucible.campaigns.control.<id>), which the reflector applies.
const SubjectControl = "crucible.campaigns.control"

// Control actions.
const (
	// ActionPause stops new generations; those in flight finish.
	ActionPause = "pause"
	// ActionResume continues a paused campaign where it stopped.
	ActionResume = "resume"
	// ActionCancel stops new generations for good; the campaign finishes
	// as cancelled, with its summary, once those in flight are evaluated.
	ActionCancel = "cancel"
	// ActionExtend raises the budget to Budget (the extra evaluations go
	// to the last episode); a completed or exhausted campaign runs again.
	ActionExtend = "extend"
)

// Control is a lifecycle action on a campaign. ID names the action, so
// that a redelivered control message is applied once.
type Control struct {
	Schema   int    `json:"schema"`
	Campaign string `json:"campaign"`
	ID       string `json:"id"`
	Action   string `json:"action"`
	// Budget is the new budget of an extension.
	Budget int `json:"budget,omitempty"`
	// MaxLLMCalls and MaxLLMTokens, when not 0, are an extension's new
	// LLM limits, which replace the spec's max_llm_calls and
	// max_llm_tokens.
	MaxLLMCalls  int       `json:"max_llm_calls,omitempty"`
	MaxLLMTokens int       `json:"max_llm_tokens,omitempty"`
	At           time.Time `json:"at"`
}

var controlIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// MsgID is the action's deterministic message id.
func (c *Control) MsgID() string { return "control/" + c.Campaign + "/" + c.ID }

// Validate names the bad field.
func (c *Control) Validate() error {
	if err := checkSchema("control", c.Schema); err != nil {
		return err
	}
	if err := ValidateCampaignID(c.Campaign); err != nil {
		return invalid("control.campaign", "%v", err)
	}
	if !controlIDPattern.MatchString(c.ID) {
		return invalid("control.id", "%q: want 1 to 64 letters, digits, '-' or '_'", c.ID)
	}
	switch c.Action {
	case ActionPause, ActionResume, ActionCancel:
		if c.Budget != 0 || c.MaxLLMCalls != 0 || c.MaxLLMTokens != 0 {
			return invalid("control.budget", "only an extension has a budget and LLM limits")
		}
	case ActionExtend:
		if c.Budget < 1 || c.Budget > MaxBudget {
			return invalid("control.budget", "%d outside [1, %d]", c.Budget, MaxBudget)
		}
		if c.MaxLLMCalls < 0 || c.MaxLLMTokens < 0 {
			return invalid("control.max_llm_calls", "LLM limits %d and %d: negative", c.MaxLLMCalls, c.MaxLLMTokens)
		}
	default:
		return invalid("control.action", "unknown action %q (want pause, resume, cancel or extend)", c.Action)
	}
	return nil
}
