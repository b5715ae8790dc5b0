// Package messages is the contract between Crucible's services and its
// clients: the message types that travel over NATS JetStream, their
// subjects, the streams that hold them and the durable consumers that read
// them. It is the only package a client must share with the services.
//
// Every message is JSON with a "schema" field (SchemaVersion); a message
// with another schema version is rejected, not guessed at. Every message
// has a deterministic id (MsgID) derived from the campaign, episode,
// generation and index it belongs to. Publishers send it as the JetStream
// Nats-Msg-Id header, so a re-published message is dropped by the stream's
// duplicate window, and consumers use it as the idempotency key of every
// state update, so a redelivered message changes nothing twice.
//
// Subjects carry the campaign id as their last token
// (crucible.<kind>.<campaign>), so `nats sub 'crucible.discoveries.*'`
// follows every campaign's discoveries and
// `nats sub 'crucible.discoveries.wbg-01'` one campaign's.
//
// Validate on each type names the offending field
// ("candidate.structure.coords[3]: want 3 numbers").
package messages
