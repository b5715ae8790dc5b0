package messages

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Digest is a SHA-256 of what identifies a candidate and decides its
// evaluation — its id, campaign, place (generation, episode, island,
// index, seed), structure, formula and the finds its hull uses — but not
// its commentary (operator, rationale, time). The services compare it
// with the digest of the candidate the proposer recorded, so that a
// candidate published by anyone else, or altered, is not evaluated or
// counted.
func (c *Candidate) Digest() string {
	key := struct {
		ID         string    `json:"id"`
		Campaign   string    `json:"campaign"`
		Episode    int       `json:"episode"`
		Generation int       `json:"generation"`
		Index      int       `json:"index"`
		Island     int       `json:"island"`
		Seed       bool      `json:"seed"`
		Structure  Structure `json:"structure"`
		Formula    string    `json:"formula"`
		HullFinds  *int      `json:"hull_finds"`
	}{c.ID, c.Campaign, c.Episode, c.Generation, c.Index, c.Island, c.Seed, c.Structure, c.Formula, c.HullFinds}
	b, err := json.Marshal(key)
	if err != nil {
		return "unencodable:" + err.Error()
	}
	return DigestBytes(b)
}

// DigestBytes is the hexadecimal SHA-256 of b.
func DigestBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
