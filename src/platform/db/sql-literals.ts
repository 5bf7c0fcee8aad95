// A statement's $n parameters written into its text as literals, for the one
// statement that takes none (COPY). The values are converted exactly as pg
// sends a parameter (prepareValue: dates, arrays, JSON) and quoted with
// escapeLiteral; like a parameter, a quoted literal's type comes from where it
// stands, so `$2::uuid[]` and `'{...}'::uuid[]` read the same.
import pg from 'pg';

// pg's own conversion and quoting (its index exports both; the typings name only escapeLiteral).
const { escapeLiteral } = pg;
const { prepareValue } = (pg as unknown as { utils: { prepareValue(value: unknown): string | Buffer | null } }).utils;

/** A single-quoted literal (skipped: its text is not SQL), or a parameter. */
const LITERAL_OR_PARAMETER = /'(?:[^']|'')*'|\$(\d+)(?!\d)/g;

export function sqlWithLiterals(text: string, values: readonly unknown[]): string {
  return text.replace(LITERAL_OR_PARAMETER, (match, n: string | undefined) => {
    if (n === undefined) return match;
    const index = Number(n) - 1;
    if (index < 0 || index >= values.length) throw new Error(`sqlWithLiterals: $${n} has no value`);
    const prepared = prepareValue(values[index]);
    if (prepared === null) return 'NULL';
    return escapeLiteral(Buffer.isBuffer(prepared) ? `\\x${prepared.toString('hex')}` : prepared);
  });
}
