// Issue 27: how deep a request's JSON may nest, checked on the raw text
// before anything parses or walks it. 10,000 levels fit in 60 KB, far under
// the 1 MB body limit; walking such a value (validation, cloning, hashing)
// cost 0.1-0.8 s of CPU and 100-250 MB per request. No resource this API
// describes nests deeper than a handful of levels.
import { AppError } from './errors.ts';

/** The deepest nesting of objects and arrays a body or an MCP tool's arguments may hold: `{}` is one level, `{"a":[]}` two. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether `text` opens more than `limit` objects or arrays inside one
 * another, counting brackets outside strings. One pass, no recursion, no
 * allocation; it stops at the first level past the limit. It does not check
 * that the text is JSON: JSON.parse does that afterwards.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The 400 for JSON nested too deep; `what` names it ("the body", "the arguments"). */
export function tooDeep(what: string): AppError {
  return new AppError('validation_failed', `${what} nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`, {
    reason: 'json_too_deep',
    max_depth: MAX_JSON_DEPTH,
  });
}
