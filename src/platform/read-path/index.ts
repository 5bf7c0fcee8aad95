// The read path's one door (issue 43): rooms, transports, the operator and the
// composition root import what they use from here, never a file of this
// folder (house-rules.test.ts checks it); README.md says what each file
// behind it is for. The platform's own sub-rooms below it (db, contract,
// operations) import its files directly: the read path is built on them.

// Declare a view, and read it.
export { defineView, field, type View, type ViewSource } from './stored-view.ts';
export { isoTime, jsonArray, jsonNumber, jsonObject, type JsonView } from './json-view.ts';
export { readArray, readOffsetPage, readOne, readPage, storedEtag, type Filter } from './read-sql.ts';

// The answer: JSON PostgreSQL wrote, sent on as it is.
export { dataOf, JsonText, jsonOf, valueOf } from './json-text.ts';

// What a service owns (made in the composition root), and its stored views' upkeep.
export { AnswerBufferPool } from './answer-bytes.ts';
export { DocumentCache } from './document-cache.ts';
export { backfillViews, mismatchMessage, startBackfill, upkeepMismatches, type BackgroundBackfill } from './view-upkeep.ts';
