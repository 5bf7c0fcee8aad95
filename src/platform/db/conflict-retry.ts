// A statement run again when PostgreSQL gave it up for a conflict with
// another transaction (a serialization failure or a deadlock), which running
// it again resolves; any other error, or a fifth conflict, is thrown.
const CONFLICTS = new Set(['40001', '40P01']);
const TRIES = 5;

export async function retryOnConflict<T>(statement: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await statement();
    } catch (err) {
      if (tries >= TRIES || !CONFLICTS.has((err as { code?: string }).code ?? '')) throw err;
    }
  }
}
