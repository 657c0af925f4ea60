import { createHash, timingSafeEqual } from 'node:crypto';

/** Who a request acts as: a tenant, the operator (admin), or anyone when authentication is off. */
export interface Caller {
  /** The tenant the caller's admissions belong to. Admin and open-mode callers admit as `default`. */
  tenant: string;
  /** Sees and operates every tenant's jobs, and may use /admin and /metrics. */
  admin: boolean;
  /** How the caller was recognised. */
  via: 'open' | 'bearer' | 'session' | 'custom';
}

/** The tenant admissions by the admin key, and every admission while authentication is off, belong to. */
export const DEFAULT_TENANT = 'default';

const TENANT = /^[A-Za-z0-9_.-]{1,64}$/;
/** Keys shorter than this are accepted (with a warning at start-up): `openssl rand -hex 32` makes a good one. */
export const RECOMMENDED_KEY_LENGTH = 24;

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Parses RUNLEDGER_API_KEYS (`tenant:key,tenant:key`; a key may contain `:`). Throws an Error naming
 * the bad entry by position, never echoing a key. A tenant may have several keys (for rotation);
 * the same key for two tenants is refused.
 */
export function parseApiKeys(spec: string | undefined): Array<{ tenant: string; key: string }> {
  if (!spec) return [];
  const entries = spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const parsed = entries.map((entry, i) => {
    const colon = entry.indexOf(':');
    const tenant = colon > 0 ? entry.slice(0, colon) : '';
    const key = entry.slice(colon + 1).trim();
    if (!TENANT.test(tenant)) throw new Error(`entry ${i + 1} must be tenant:key with a tenant of 1-64 letters, digits, '_', '.' or '-'`);
    if (key === '' || /\s/.test(key)) throw new Error(`entry ${i + 1} (tenant "${tenant}") has an empty key or one with spaces`);
    return { tenant, key };
  });
  const seen = new Set<string>();
  for (const { tenant, key } of parsed) {
    if (seen.has(key)) throw new Error(`tenant "${tenant}" reuses a key already given to a tenant; every key must be unique`);
    seen.add(key);
  }
  return parsed;
}

/**
 * The configured keys, held as SHA-256 digests and compared with crypto.timingSafeEqual. Every
 * lookup compares against every key, so the time taken does not say which key (if any) matched.
 */
export class KeyRing {
  private readonly tenants: Array<{ tenant: string; hash: Buffer }>;
  private readonly admin: Buffer | undefined;

  /** `apiKeys` as from parseApiKeys; `adminKey` the operator key, if any. */
  constructor(apiKeys: ReadonlyArray<{ tenant: string; key: string }>, adminKey?: string) {
    this.tenants = apiKeys.map(({ tenant, key }) => ({ tenant, hash: digest(key) }));
    this.admin = adminKey ? digest(adminKey) : undefined;
    if (this.admin && this.tenants.some((t) => timingSafeEqual(t.hash, this.admin as Buffer))) {
      throw new Error('RUNLEDGER_ADMIN_KEY must differ from every key in RUNLEDGER_API_KEYS');
    }
  }

  /** False when no key is configured: the producer then runs open. */
  get enabled(): boolean {
    return this.tenants.length > 0 || this.admin !== undefined;
  }

  /** True when an admin key is configured (otherwise /admin is denied to everyone). */
  get hasAdminKey(): boolean {
    return this.admin !== undefined;
  }

  /** The caller a presented key stands for, or undefined for an unknown key. */
  identify(presented: string): Caller | undefined {
    const hash = digest(presented);
    let tenant: string | undefined;
    for (const t of this.tenants) if (timingSafeEqual(t.hash, hash) && tenant === undefined) tenant = t.tenant;
    const admin = this.admin ? timingSafeEqual(this.admin, hash) : false;
    if (admin) return { tenant: DEFAULT_TENANT, admin: true, via: 'bearer' };
    return tenant === undefined ? undefined : { tenant, admin: false, via: 'bearer' };
  }

  /** True when `presented` is the admin key (constant time). */
  isAdminKey(presented: string): boolean {
    return this.admin ? timingSafeEqual(this.admin, digest(presented)) : false;
  }
}
