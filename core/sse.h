/*
 * sse.h — a streamed Chat Completions answer (server-sent events, the
 * OpenAI shape that self-hosted servers speak) joined into the one
 * completion document an unstreamed request would have received.
 *
 * A server streams about a token per event, so an answer of a few thousand
 * tokens is thousands of small JSON documents; joining them here, in one
 * pass with yajl's event parser, costs under half a microsecond an event
 * where the Lua version (lua/avo/llm/families.lua used to hold it) spent
 * most of an LLM candidate's engine time on a fast local server.
 *
 * What is read:
 * - The body is a stream when it opens, after white space, with "data:",
 *   or with a comment (":", as sse-starlette's ": ping" while the prompt is
 *   read) and has a "data:" line further on.
 * - Lines end with LF (a CR before it is white space); each "data:" line,
 *   one optional white-space character after the colon and trailing white
 *   space dropped, is a JSON document; "[DONE]", other lines and documents
 *   that are not objects are skipped.
 * - A delta (choices[0].delta) that carries content or tool_calls (JSON
 *   null is absent) counts as one; past `cap` counted deltas (when cap >= 0)
 *   the events' content, tool calls and finish reason are dropped (an
 *   answer stopped at its max_tokens), usage still read.
 * - Content strings are joined; tool calls are gathered by their "index"
 *   (an integer; without one, the next free place), their ids, names and
 *   argument fragments (joined); the last string finish_reason and the last
 *   usage (an object or array) are kept.
 */
#ifndef AVO_SSE_H
#define AVO_SSE_H

#include <jansson.h>
#include <stddef.h>

/*
 * The completion document of the stream in body[0..len):
 *   {"choices": [{"message": {"content": "...", "tool_calls": [...]},
 *                 "finish_reason": "..."}], "usage": {...}}
 * with "tool_calls", "finish_reason" and "usage" only when the stream had
 * them.  *ret_deltas gets the deltas counted, at most `cap` when cap >= 0
 * (a negative cap reads them all).
 * Returns a new reference the caller owns; NULL when the body is not an
 * event stream (a server may answer a streamed request with plain JSON) or
 * memory ran out (*ret_deltas is then -1).
 */
json_t *avo_sse_chat_join(const char *body, size_t len, long cap, long *ret_deltas);

#endif
