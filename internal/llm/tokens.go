package llm

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// EstimateTokens estimates the tokens of s for a BPE tokenizer of the
// GPT-4 family (cl100k, o200k), whose pre-tokenizer splits text into
// words with their leading space, runs of at most three digits,
// punctuation runs with their leading space, and whitespace; BPE then
// merges inside each piece only. The estimate counts the pieces the same
// way and what BPE makes of each:
//
//   - a run of L letters: 1 + ⌊(L−1)/8⌋ tokens (words up to 8 letters are
//     one token; longer ones split);
//   - a run of D digits: ⌈D/3⌉ tokens (exact: every 1–3 digit group is a
//     token);
//   - a run of L ASCII punctuation characters: ⌈L/2⌉ tokens (`{"`, `":`,
//     `],` are single tokens); other symbols (≥, –, ✓): one each;
//   - whitespace: a newline run is one token; spaces before a letter or
//     punctuation belong to it, except the extra ones of an indentation;
//     spaces before a digit are a token.
//
// On Crucible's prompts (JSON structures, numbers, short prose) it is
// within about 15% of the GPT-4 tokenizers; tokenizers that split every
// digit (Llama 2, Mistral) give more. Where the server reports usage the
// generator records that instead, and the client calibrates its estimates
// against it (see Client.EstimatePrompt).
func EstimateTokens(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		j := i + size
		switch {
		case unicode.IsLetter(r) || unicode.IsMark(r):
			l := 1
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsLetter(r2) && !unicode.IsMark(r2) {
					break
				}
				j += sz
				l++
			}
			n += 1 + (l-1)/8
		case unicode.IsDigit(r):
			d := 1
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsDigit(r2) {
					break
				}
				j += sz
				d++
			}
			n += (d + 2) / 3
		case unicode.IsSpace(r):
			spaces, newline := 1, r == '\n' || r == '\r'
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsSpace(r2) {
					break
				}
				newline = newline || r2 == '\n' || r2 == '\r'
				j += sz
				spaces++
			}
			next, _ := utf8.DecodeRuneInString(s[j:])
			switch {
			case newline:
				n++
			case j < len(s) && unicode.IsDigit(next):
				n++
			case spaces > 1:
				n++ // an indentation; its last space joins the next piece
			}
		case r < utf8.RuneSelf:
			l := 1
			for j < len(s) && s[j] < utf8.RuneSelf && isASCIIPunct(s[j]) {
				j++
				l++
			}
			n += (l + 1) / 2
		default:
			n++
		}
		i = j
	}
	return n
}

func isASCIIPunct(b byte) bool {
	return b > ' ' && b < 0x7f && !(b >= '0' && b <= '9') && !(b >= 'a' && b <= 'z') && !(b >= 'A' && b <= 'Z')
}

// messageOverhead is what the chat format adds per message (role and
// separators) and per request (the reply's priming): 3 and 3 tokens for
// OpenAI's chat models.
const (
	messageOverhead = 3
	replyOverhead   = 3
)

// EstimateChat estimates the prompt tokens of a system and a user message.
func EstimateChat(system, user string) int {
	return EstimateTokens(system) + EstimateTokens(user) + 2*messageOverhead + replyOverhead
}

// calibration keeps, per model, the ratio of the server's prompt tokens to
// the estimate, as an exponentially weighted mean (weight 0.3 on the
// newest call), clamped to [0.5, 2.5]: it adapts the estimate to tokenizers
// unlike GPT-4's within a few calls.
type calibration struct {
	mu    sync.Mutex
	ratio map[string]float64
}

func (c *calibration) observe(model string, estimated, actual int) {
	if estimated <= 0 || actual <= 0 {
		return
	}
	r := min(max(float64(actual)/float64(estimated), 0.5), 2.5)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ratio == nil {
		c.ratio = map[string]float64{}
	}
	if old, ok := c.ratio[model]; ok {
		r = 0.7*old + 0.3*r
	}
	c.ratio[model] = r
}

func (c *calibration) scale(model string, estimated int) int {
	c.mu.Lock()
	r, ok := c.ratio[model]
	c.mu.Unlock()
	if !ok {
		return estimated
	}
	return int(float64(estimated)*r + 0.5)
}
