// The names of the test files' own databases (test/setup/own-database.ts).

/** The database of the test process `pid`, copied from the stage's database `template`. */
export function fileDatabaseName(template: string, pid: number): string {
  return `${template}_f${pid}`;
}

/** The pattern (LIKE) matching every test file's database made from `template`. */
export function fileDatabasePattern(template: string): string {
  return `${template.replace(/_/g, '\\_')}\\_f%`;
}

export function renameDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}
