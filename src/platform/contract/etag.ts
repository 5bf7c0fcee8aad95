// EXTENSIONS 3, optimistic concurrency: one strong ETag per resource, the
// hash of its view as served. Hashing the view (not a version column) makes
// the tag change whatever path changed the resource (API, admin, courier
// mirror, checkout, payment, a shipment summary or stock moving), and needs
// no path to remember to bump anything.
//
// A stored view (issue 29: orders, products) has its tag written by the
// database with its text (merx_view_etag, the same function as etagOfText),
// and every answer and If-Match check reads that stored tag. A view built
// when read (a webhook subscription) is hashed here, by etagOf, in its
// canonical form. Either way GET, the write's answer and the If-Match check
// take the tag from the same place, so they can never disagree.
import crypto from 'node:crypto';
import { canonicalJson } from './canonical-json.ts';
import { AppError } from './errors.ts';
import { dataOf, JsonText } from '../read-path/json-text.ts';

export const ETAG_HEADER = 'ETag';
export const IF_MATCH_HEADER = 'If-Match';
export const IF_NONE_MATCH_HEADER = 'If-None-Match';

/**
 * The strong ETag of a resource view (the `data` an answer serves). Keys are
 * sorted, so the tag depends on the values alone; a read path that builds the
 * view as JSON text must hash the same canonical form.
 */
export function etagOf(view: unknown): string {
  return `"${crypto.hash('sha256', canonicalJson(view), 'base64url').slice(0, 32)}"`;
}

/** The strong ETag of a stored view's exact text: what the database's merx_view_etag writes (migration 021). */
export function etagOfText(text: string): string {
  return `"${crypto.hash('sha256', text, 'base64url').slice(0, 32)}"`;
}

/** The ETag of an answer's `data`: the stored tag that came with a stored view, else the hash of the view. */
export function etagOfData(answer: unknown): string {
  const data = answer instanceof JsonText ? answer.fields?.data : (answer as { data?: unknown }).data;
  if (data instanceof JsonText && data.etag) return data.etag;
  return etagOf(dataOf(answer));
}

/**
 * A read's ETag without hashing its bytes, when it is made of stored views
 * (issue 29): a page's tag (read-sql.ts pageText), or the stored tag of the
 * one view an answer `{data: <view>}` holds. Null: hash the bytes.
 */
export function storedAnswerEtag(answer: unknown): string | null {
  if (!(answer instanceof JsonText)) return null;
  if (answer.etag) return answer.etag;
  const fields = answer.fields;
  if (fields && Object.keys(fields).length === 1 && fields.data instanceof JsonText && fields.data.etag) return fields.data.etag;
  return null;
}

/** The strong ETag of an answer that is not a versioned resource (a list, a report): the hash of its bytes. */
export function etagOfAnswer(body: string | Buffer): string {
  return `"${crypto.hash('sha1', body, 'base64url')}"`;
}

/** The entity tags of an If-Match / If-None-Match value: `*`, or a comma-separated list (an unquoted tag is taken as quoted). */
function listedTags(value: string): string[] {
  return value
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean);
}

const opaque = (tag: string) => (tag.startsWith('"') && tag.endsWith('"') && tag.length >= 2 ? tag.slice(1, -1) : tag);

/** RFC 9110 If-Match: strong comparison; `*` matches any existing resource; a weak tag (W/) never matches. */
export function ifMatchAllows(value: string, etag: string): boolean {
  return listedTags(value).some((tag) => tag === '*' || (!tag.startsWith('W/') && opaque(tag) === opaque(etag)));
}

/** RFC 9110 If-None-Match: weak comparison; true when the client's copy is current (answer 304). */
export function ifNoneMatchHits(value: string, etag: string): boolean {
  return listedTags(value).some((tag) => tag === '*' || opaque(tag.replace(/^W\//, '')) === opaque(etag));
}

/** 412: the resource changed since the caller read it; nothing was changed. */
export function preconditionFailed(currentEtag: string): AppError {
  return new AppError(
    'precondition_failed',
    `the resource changed since you read it (If-Match does not match its current ETag ${currentEtag}); read it again and retry`,
    { current_etag: currentEtag },
    { headers: { [ETAG_HEADER]: currentEtag } },
  );
}

/** Throws 412 unless `ifMatch` admits the resource's current ETag. */
export function checkIfMatch(ifMatch: string, current: string): void {
  if (!ifMatchAllows(ifMatch, current)) throw preconditionFailed(current);
}
