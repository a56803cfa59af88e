/*
 * llm.h — the HTTP side of the LLM client: JSON-over-HTTPS requests on
 * libcurl's multi interface, answered through the engine's event loop.
 *
 * This module knows nothing about providers.  A request is a URL, headers, a
 * body and limits; the Lua side (lua/avo/llm.lua) builds it for OpenAI-style
 * Chat Completions or Anthropic Messages and parses the answer.  What lives
 * here is what must not block the loop: many transfers in flight at once,
 * connect and total timeouts, and retries with exponential backoff and jitter
 * on 429, 408, 5xx (but 501 and 505) and network errors, honouring
 * Retry-After.
 *
 * Invariants:
 * - Headers (which carry API keys) are never copied into a result or an
 *   error message; results hold only the status, the response body and
 *   libcurl's error text, which names the host but not the headers.
 * - Jitter is drawn from a PCG32 stream derived from the run seed, so the
 *   schedule of retries is reproducible given the same failures.
 * - Every submitted request is answered exactly once (take()), also when
 *   libcurl cannot even start it.
 *
 * An avo_llm is used by one thread only.
 */
#ifndef AVO_LLM_H
#define AVO_LLM_H

#include <jansson.h>
#include <stdint.h>

#include "core/loop.h"

typedef struct avo_llm avo_llm;

/*
 * New client; `seed` and the stream name "llm.jitter" fix the jitter.  On
 * success *ret owns the client (free with avo_llm_free).
 */
int avo_llm_new(avo_llm **ret, uint64_t seed, char *err, size_t errlen);

/* Abort every transfer and free; accepts NULL. */
void avo_llm_free(avo_llm *llm);

/*
 * Queue one request.  `request` (borrowed) is an object:
 *   url              string, required (http:// or https://)
 *   method           "POST" (default) or "GET" (server metadata)
 *   headers          array of "Name: value" strings
 *   body             string, POSTed as is (required for POST)
 *   connect_timeout  seconds (default 10)
 *   timeout          seconds for one attempt, connect included (default 300)
 *   max_attempts     1.. (default 4)
 *   backoff          first backoff in seconds (default 1), doubled per retry
 *   max_backoff      cap of one backoff, Retry-After included (default 60)
 *   deadline         seconds from now after which no attempt runs: the
 *                    running one is cut off and none is retried (the run's
 *                    --max-time); default none
 *   stream_limit     for a streamed answer (server-sent events): read at most
 *                    this many "data:" events, then stop the transfer and
 *                    answer with what was read (a server that ignores
 *                    max_tokens); default 0, read all
 * The transfer starts on the next turn of the loop.  *ret_ticket identifies
 * the answer.  AVO_EINVAL with a message for a malformed request.
 *
 * The answer (take) is an object:
 *   status       "ok" (a 2xx response arrived) or "error"
 *   http_status  last HTTP status, 0 when none arrived
 *   body         response body text of the last attempt, or null
 *   error        one line when status is "error", else null
 *   attempts     attempts made
 *   latency_s    seconds from submission to the answer, retries included
 *   retryable    true when the last failure was of a retryable kind
 *   cancelled    true when the deadline ended the request
 *   content_type the answer's Content-Type, when it had one
 *   stopped      with stream_limit: true when the limit stopped the transfer
 *                (status "ok", body what was read)
 *   events       with stream_limit: the events read
 */
int avo_llm_submit(avo_llm *llm, const json_t *request, uint64_t *ret_ticket, char *err,
                   size_t errlen);

/* Requests submitted and not yet taken. */
size_t avo_llm_pending(const avo_llm *llm);

/* Events ("data:" lines, about one token each) read so far by the streamed
 * requests now in transfer: the progress of answers still arriving. */
long avo_llm_streamed(const avo_llm *llm);

/* The client as an event-loop source (borrowed; valid while llm lives). */
avo_loop_source avo_llm_source(avo_llm *llm);

#endif
