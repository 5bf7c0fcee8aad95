-- The request log takes appends (bench/RESULTS-request-log.md): entry ids are
-- time-ordered UUIDs from now on (request-log.ts), and retention finds old
-- entries through a block-range index on `at` instead of a third b-tree. A
-- BRIN index keeps one summary per 128 pages, so an insert into the table's
-- newest pages costs it next to nothing; entries arrive nearly in time order.
DROP INDEX request_logs_age;
CREATE INDEX request_logs_age ON request_logs USING brin (at);
