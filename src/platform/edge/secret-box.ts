// Secrets sealed at rest (issue 27): AES-256-GCM under a key that names
// itself, so a value sealed today opens after the key is rotated. A sealed
// value is one line of text:
//
//   v1.<key id>.<iv>.<tag>.<ciphertext>        (base64url parts)
//
// The keys come from ENCRYPTION_KEYS (`id:base64key,...`: the first seals,
// every one opens), else from a key generated once into DATA_DIR (0600), which
// every instance started from that directory shares. Each service has its
// keyring (Keyring), installed at start and carried by its Db: the rooms that
// keep secrets call sql.keyring.seal/open on the Sql they already have.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const KEYS_VARIABLE = 'ENCRYPTION_KEYS';
const VERSION = 'v1';
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
/** The file in DATA_DIR holding the generated key (`id:base64key`). */
export const KEY_FILE = 'encryption-key';

export interface SealingKey {
  id: string;
  key: Buffer;
}

/**
 * `id:base64key` entries separated by commas or white space; each key 32
 * bytes (base64 or base64url). Throws a sentence for config.ts to prefix with
 * the variable's name.
 */
export function parseKeys(text: string): SealingKey[] {
  const entries = text.split(/[\s,]+/).filter(Boolean);
  if (entries.length === 0) throw new Error('holds no key');
  const keys: SealingKey[] = [];
  for (const entry of entries) {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon);
    if (!KEY_ID.test(id)) throw new Error('entries must read <key id>:<base64 of 32 bytes>, the id of letters, digits, _ or - (at most 32)');
    const raw = entry.slice(colon + 1);
    const key = Buffer.from(raw, 'base64');
    if (key.length !== 32 || !/^[A-Za-z0-9+/_-]+=*$/.test(raw)) {
      throw new Error(`key "${id}" must be 32 bytes written in base64 (openssl rand -base64 32), got ${key.length} bytes`);
    }
    if (keys.some((k) => k.id === id)) throw new Error(`key id "${id}" appears twice`);
    keys.push({ id, key });
  }
  return keys;
}

export class SecretBox {
  readonly keys: readonly SealingKey[];
  constructor(keys: readonly SealingKey[]) {
    if (keys.length === 0) throw new Error('a SecretBox needs a key');
    this.keys = keys;
  }

  /** The key that seals new values. */
  get sealingKeyId(): string {
    return this.keys[0].id;
  }

  seal(plain: string): string {
    const { id, key } = this.keys[0];
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
    // The version and key id are authenticated too: a value cannot be moved under another id.
    cipher.setAAD(Buffer.from(`${VERSION}.${id}`));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== VERSION) throw new Error('not a sealed value');
    const [, id, iv, tag, body] = parts;
    const entry = this.keys.find((k) => k.id === id);
    if (!entry) throw new Error(`the value is sealed with key "${id}", which ${KEYS_VARIABLE} does not hold`);
    const decipher = crypto.createDecipheriv('aes-256-gcm', entry.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`${VERSION}.${id}`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** Whether a stored value is sealed under the key that seals now (the reseal leaves those alone). */
  isCurrent(stored: string): boolean {
    return stored.startsWith(`${VERSION}.${this.sealingKeyId}.`);
  }
}

/** A stored value in the sealed form, whatever its key (a plaintext value from before issue 27 is not). */
export function isSealed(stored: string): boolean {
  return /^v1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(stored);
}

/** The key id a sealed value names. */
export function keyIdOf(stored: string): string | null {
  return isSealed(stored) ? stored.split('.')[1] : null;
}

/**
 * The configured keys, else the key in DATA_DIR, generated on first start.
 * PGlite in memory keeps nothing past the process, so a per-process key suits
 * it. Two instances racing to generate agree: the file is linked into place
 * only if absent, and the loser reads the winner's.
 */
export function loadKeys(configured: SealingKey[] | null, dataDir: string): SealingKey[] {
  if (configured?.length) return configured;
  if (dataDir.startsWith('memory://')) return [processKey];
  const file = path.join(dataDir, KEY_FILE);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true });
    const fresh = `${crypto.randomBytes(6).toString('base64url')}:${crypto.randomBytes(32).toString('base64')}\n`;
    const partial = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
    fs.writeFileSync(partial, fresh, { mode: 0o600 });
    try {
      fs.linkSync(partial, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      fs.rmSync(partial, { force: true });
    }
  }
  try {
    return parseKeys(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`the encryption key file ${file} cannot be used: ${(err as Error).message}. Restore it, or set ${KEYS_VARIABLE}.`);
  }
}

const processKey: SealingKey = { id: `mem-${crypto.randomBytes(4).toString('hex')}`, key: crypto.randomBytes(32) };

/**
 * One service's keyring (issue 43: each service owns its own, made in the
 * composition root and carried by its Db, so two services in one process
 * seal under their own keys). Empty until openSecretsAtRest (startService,
 * the CLI) installs the keys it loaded, before anything reads a secret.
 */
export class Keyring {
  private box: SecretBox | null = null;

  install(box: SecretBox): void {
    this.box = box;
  }

  private opened(): SecretBox {
    if (!this.box) throw new Error('no encryption key installed: the service seals secrets with the keyring it loads at start');
    return this.box;
  }

  seal(plain: string): string {
    return this.opened().seal(plain);
  }

  /** The plaintext of a stored secret; a value stored before sealing existed (it is sealed at the next start) passes as it is. */
  open(stored: string): string;
  open(stored: string | null): string | null;
  open(stored: string | null): string | null {
    if (stored === null) return null;
    return isSealed(stored) ? this.opened().open(stored) : stored;
  }
}
