// The agents room owns no table: the request log and the approvals it serves
// are plumbing every operation passes through (src/platform/request-log/log.ts,
// approvals.ts), written by the platform alone. It reads no room's table
// either (READS, checked by test/house-rules.test.ts).
export const TABLES = [] as const;
export const READS = [] as const;
