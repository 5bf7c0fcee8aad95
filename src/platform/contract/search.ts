// q filters: a case-insensitive substring of a lower-cased search text that a
// trigram index and a short-substring index (migration 017) are built on.
// GAPS: % and _ are literal characters in q.

/**
 * The WHERE conditions for "`text` contains q". LIKE is the test; the
 * trigram index serves it from three characters on. A shorter q has no
 * trigram, so it is also looked up among the text's one- and two-character
 * substrings (merx_short_grams): the text contains q exactly when q is one of
 * them, so the extra condition finds the rows and changes no answer.
 */
export function substringSearch(text: string, q: string, bind: (value: unknown) => string): string[] {
  const lowered = q.toLowerCase();
  const conditions = [`${text} LIKE ${bind(`%${lowered.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)}`];
  // Characters as PostgreSQL counts them (code points), not UTF-16 units; chr(2) is the index's own separator.
  // oxlint-disable-next-line typescript/no-misused-spread
  if ([...lowered].length <= 2 && !lowered.includes('\u0002')) conditions.push(`merx_short_grams(${text}) @> ARRAY[${bind(lowered)}]::text[]`);
  return conditions;
}
