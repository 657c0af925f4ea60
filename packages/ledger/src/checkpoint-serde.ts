import { JsonPlusSerializer, type SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { innerType, isSealedType, isUnboundSealedType, rowBoundType, UNBOUND_CONTEXT as UNBOUND, unboundType } from './checkpoint-seal';
import type { PayloadCodec } from './crypto';

export { checkpointContext, innerType, isSealedType, isUnboundSealedType } from './checkpoint-seal';

/**
 * LangGraph's serializer with encryption at rest: every channel value and pending write is
 * serialized by JsonPlusSerializer, then sealed with the ledger's payload codec (AES-256-GCM
 * from RUNLEDGER_ENCRYPTION_KEY). The savers call `dumpsBound`/`loadsBound` with the row's
 * context (type `sealed:row:<type>`), so a value copied to another row fails to open. Values of
 * the older unbound format (`sealed:<type>`) and values stored before encryption was turned on
 * (any other type) load as they are. Checkpoint metadata (step, source, parents) stays
 * readable: the savers serialize it with `plain`.
 */
export class SealingSerializer implements SerializerProtocol {
  readonly plain = new JsonPlusSerializer();

  constructor(readonly codec: PayloadCodec) {}

  /** Serializes and seals `data` bound to the row `context` names (checkpointContext). */
  async dumpsBound(data: unknown, context: string): Promise<[string, Uint8Array]> {
    const [type, bytes] = await this.plain.dumpsTyped(data);
    return [rowBoundType(type), this.sealBytes(bytes, context)];
  }

  /** The value of a stored row; throws when a sealed value was moved from another row or altered. */
  async loadsBound(type: string, data: Uint8Array | string, context: string): Promise<unknown> {
    if (!isSealedType(type)) return this.plain.loadsTyped(type, data);
    return this.plain.loadsTyped(innerType(type), this.openBytes(type, data, context));
  }

  /** The sealed bytes of a serialized value (a JSON envelope). */
  sealBytes(bytes: Uint8Array, context: string): Uint8Array {
    return new TextEncoder().encode(JSON.stringify(this.codec.seal(Buffer.from(bytes).toString('base64'), context)));
  }

  /** The serialized value inside sealed bytes stored in the row `context` names (ignored for the unbound format); throws like PayloadCodec.open. */
  openBytes(type: string, data: Uint8Array | string, context: string): Uint8Array {
    const text = typeof data === 'string' ? data : new TextDecoder().decode(data);
    const opened = this.codec.open(JSON.parse(text), isUnboundSealedType(type) ? UNBOUND : context);
    if (typeof opened !== 'string') throw new Error(`A sealed checkpoint value of type ${type} did not open to its serialized bytes.`);
    return new Uint8Array(Buffer.from(opened, 'base64'));
  }

  /** Without a row: the older unbound format (only LangGraph's own pre-v4 pending-sends migration calls this). */
  async dumpsTyped(data: unknown): Promise<[string, Uint8Array]> {
    const [type, bytes] = await this.plain.dumpsTyped(data);
    return [unboundType(type), this.sealBytes(bytes, UNBOUND)];
  }

  async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    if (isSealedType(type) && !isUnboundSealedType(type)) throw new Error(`A checkpoint value of type ${type} is bound to its row: load it through the saver.`);
    return this.loadsBound(type, data, UNBOUND);
  }
}
