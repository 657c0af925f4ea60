import { JsonPlusSerializer, type SerializerProtocol } from '@langchain/langgraph-checkpoint';
import type { PayloadCodec } from './crypto';

/** Type prefix of a sealed checkpoint value: `sealed:<LangGraph's own type>`. */
const SEALED = 'sealed:';
/** True for the type of a checkpoint value sealed by SealingSerializer. */
export const isSealedType = (type: string): boolean => type.startsWith(SEALED);

/** Associated data of every sealed checkpoint value (blobs and pending writes). */
const CONTEXT = 'checkpoint';

/**
 * LangGraph's serializer with encryption at rest: every channel value and pending write is
 * serialized by JsonPlusSerializer, then sealed with the ledger's payload codec (AES-256-GCM
 * from RUNLEDGER_ENCRYPTION_KEY) and stored with type `sealed:<type>`. Values stored before
 * encryption was turned on (any other type) load as they are. Checkpoint metadata (step,
 * source, parents) stays readable: the savers serialize it with `plain`.
 */
export class SealingSerializer implements SerializerProtocol {
  readonly plain = new JsonPlusSerializer();

  constructor(private readonly codec: PayloadCodec) {}

  async dumpsTyped(data: unknown): Promise<[string, Uint8Array]> {
    const [type, bytes] = await this.plain.dumpsTyped(data);
    const envelope = this.codec.seal(Buffer.from(bytes).toString('base64'), CONTEXT);
    return [`${SEALED}${type}`, new TextEncoder().encode(JSON.stringify(envelope))];
  }

  async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    if (!isSealedType(type)) return this.plain.loadsTyped(type, data);
    const text = typeof data === 'string' ? data : new TextDecoder().decode(data);
    const opened = this.codec.open(JSON.parse(text), CONTEXT);
    if (typeof opened !== 'string') throw new Error(`A sealed checkpoint value of type ${type} did not open to its serialized bytes.`);
    return this.plain.loadsTyped(type.slice(SEALED.length), new Uint8Array(Buffer.from(opened, 'base64')));
  }
}
