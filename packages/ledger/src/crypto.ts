import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Seals and opens the payload columns (job input, job result, effect results …) of the ledger,
 * and computes the keyed digests of the columns looked up by equality.
 * `context` names the column and row ("jobs.input:<jobId>") and is bound to the ciphertext as
 * associated data, so a sealed value copied into another row or column fails to open.
 */
export interface PayloadCodec {
  /** The value to store in the jsonb column instead of `value`. */
  seal(value: unknown, context: string): unknown;
  /** The plaintext of a stored value; values that are not sealed pass through unchanged. Throws when a sealed value cannot be opened. */
  open(stored: unknown, context: string): unknown;
  /**
   * Keyed digests of `value` for a column that needs equality lookups (an idempotency key, the
   * request fingerprint): `<kid>:<hex HMAC-SHA-256>`, one per configured key, the current key's
   * first (the one to store; the others match rows stored before a rotation). Deterministic, so
   * every process with the same keys computes the same digests. `purpose` names the column, and
   * each (key, purpose) has a key of its own, so equal values in two columns do not match.
   */
  digests(value: string, purpose: string): string[];
}

/** How a sealed value sits in its jsonb column. `kid` names the key that sealed it, so keys can rotate. */
export interface SealedEnvelope {
  enc: 'v1';
  kid: string;
  /** base64 of the 12-byte AES-GCM nonce. */
  iv: string;
  /** base64 of the 16-byte authentication tag. */
  tag: string;
  /** base64 of the ciphertext of the value's JSON text. */
  data: string;
}

/** One AES-256 key and the id stored next to every value it seals. */
export interface EncryptionKey {
  kid: string;
  key: Buffer;
}

const ALGORITHM = 'aes-256-gcm';
const KID = /^[A-Za-z0-9_.-]{1,32}$/;

/** True when `value` has the shape of a sealed envelope (`{ "enc": "v1", … }`). */
export function isSealedEnvelope(value: unknown): value is SealedEnvelope {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return v.enc === 'v1' && ['kid', 'iv', 'tag', 'data'].every((k) => typeof v[k] === 'string') && Object.keys(v).length === 5;
}

/**
 * Parses RUNLEDGER_ENCRYPTION_KEY: `kid:base64key[,kid:base64key…]`, each key 32 bytes. The first
 * key seals new values; every key opens. Throws an Error naming the bad entry by position and id,
 * never echoing key material.
 */
export function parseEncryptionKeys(spec: string): EncryptionKey[] {
  const entries = spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (entries.length === 0) throw new Error('expected kid:base64key[,kid:base64key…]');
  const keys = entries.map((entry, i) => {
    const colon = entry.indexOf(':');
    const kid = colon > 0 ? entry.slice(0, colon) : '';
    if (!KID.test(kid)) throw new Error(`entry ${i + 1} must be kid:base64key with a kid of 1-32 letters, digits, '_', '.' or '-'`);
    const material = entry.slice(colon + 1);
    const key = Buffer.from(material, 'base64');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(material) || key.length !== 32) {
      throw new Error(`key "${kid}" must be 32 bytes in base64 (for example: openssl rand -base64 32)`);
    }
    return { kid, key };
  });
  const seen = new Set<string>();
  for (const { kid } of keys) {
    if (seen.has(kid)) throw new Error(`key id "${kid}" appears twice`);
    seen.add(kid);
  }
  return keys;
}

/**
 * AES-256-GCM payload codec. Seals with the first key; opens with whichever key the envelope
 * names. A fresh random 96-bit nonce per value.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly byId: Map<string, Buffer>;
  private readonly current: EncryptionKey;
  private readonly keys: readonly EncryptionKey[];
  /** HMAC keys by `<kid>/<purpose>`, derived with HKDF so the AES key itself never keys an HMAC. */
  private readonly macKeys = new Map<string, Buffer>();

  /** Throws when `keys` is empty. */
  constructor(keys: readonly EncryptionKey[]) {
    const first = keys[0];
    if (!first) throw new Error('AesGcmPayloadCodec needs at least one key');
    this.current = first;
    this.keys = [...keys];
    this.byId = new Map(keys.map((k) => [k.kid, k.key]));
  }

  digests(value: string, purpose: string): string[] {
    return this.keys.map(({ kid, key }) => {
      let macKey = this.macKeys.get(`${kid}/${purpose}`);
      if (!macKey) {
        macKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `runledger digest ${purpose}`, 32));
        this.macKeys.set(`${kid}/${purpose}`, macKey);
      }
      return `${kid}:${createHmac('sha256', macKey).update(value, 'utf8').digest('hex')}`;
    });
  }

  /** A codec from a RUNLEDGER_ENCRYPTION_KEY value; throws like parseEncryptionKeys. */
  static fromSpec(spec: string): AesGcmPayloadCodec {
    return new AesGcmPayloadCodec(parseEncryptionKeys(spec));
  }

  /** The id of the key new values are sealed with. */
  get currentKeyId(): string {
    return this.current.kid;
  }

  seal(value: unknown, context: string): SealedEnvelope {
    const iv = randomBytes(12);
    const cipher = createCipheriv(ALGORITHM, this.current.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const data = Buffer.concat([cipher.update(JSON.stringify(value ?? null), 'utf8'), cipher.final()]);
    return { enc: 'v1', kid: this.current.kid, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
  }

  open(stored: unknown, context: string): unknown {
    if (!isSealedEnvelope(stored)) return stored;
    const key = this.byId.get(stored.kid);
    if (!key) {
      throw new Error(
        `${context} is sealed with key "${stored.kid}", which RUNLEDGER_ENCRYPTION_KEY does not list; add it (after the current key) to read it.`,
      );
    }
    try {
      const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(stored.iv, 'base64'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(stored.tag, 'base64'));
      const text = Buffer.concat([decipher.update(Buffer.from(stored.data, 'base64')), decipher.final()]).toString('utf8');
      return JSON.parse(text);
    } catch (err) {
      throw new Error(`${context} failed authentication with key "${stored.kid}": the value was altered or moved from another row.`, { cause: err });
    }
  }
}

/** The associated-data contexts of the sealed columns, shared by the writes and the row mappers. */
export const sealContext = {
  jobInput: (jobId: string) => `jobs.input:${jobId}`,
  jobResult: (jobId: string) => `jobs.result:${jobId}`,
  effectResult: (jobId: string, effectKey: string) => `effects.result:${jobId}:${effectKey}`,
  jobInterrupt: (jobId: string) => `jobs.interrupt:${jobId}`,
  jobResumeValue: (jobId: string) => `jobs.resume_value:${jobId}`,
  jobMetadata: (jobId: string) => `jobs.metadata:${jobId}`,
  /** The URL a run's ends are announced to (jobs.webhook). */
  jobWebhook: (jobId: string) => `jobs.webhook:${jobId}`,
  /** The plaintext idempotency key, kept beside its digest so readers can be shown it. */
  jobIdempotencyKey: (jobId: string) => `jobs.idempotency_key_sealed:${jobId}`,
  /** A field of the job's error (a resolve note). */
  jobError: (jobId: string, field: string) => `jobs.error.${field}:${jobId}`,
  /** A field of an effect's error (the note of the replay that abandoned it). */
  effectError: (jobId: string, field: string) => `effects.error.${field}:${jobId}`,
  /** A payload inside an event's detail (the interrupt it parked on, the resume value it was given). */
  eventDetail: (jobId: string, field: string) => `job_events.detail.${field}:${jobId}`,
  /** A chunk of a streamed run (run_stream_events.data). */
  streamData: (jobId: string) => `run_stream_events.data:${jobId}`,
  /** A field (config, context, description) of one version of a tenant's stored assistant. */
  assistantVersion: (tenant: string, assistantId: string, version: number, field: string) => `assistant_versions.${field}:${tenant}/${assistantId}/${version}`,
  /** A cron's input and metadata (each firing's job input and metadata, sealed again under the job). */
  cronInput: (cronId: string) => `crons.input:${cronId}`,
  cronMetadata: (cronId: string) => `crons.metadata:${cronId}`,
};
