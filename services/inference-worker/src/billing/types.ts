import { GatewayError, MODEL_KINDS, type ModelKind } from '@gateway/contracts';

export type NodeProtocol = 'openai' | 'tgi';

/** What the worker needs of a catalog entry (billing owns the catalog; prices stay there). */
export interface CatalogEntry {
  id: string;
  kind: ModelKind;
  provider: 'node' | 'external';
  protocol: NodeProtocol;
  upstreamModel: string;
  maxOutputTokens: number;
  nodes: { url: string; weight: number }[];
}

export type { SettleOutcome, VoidOutcome } from '@gateway/billing-client';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Reads billing's catalog entry (camelCase wire form); a malformed one is a gateway fault. */
export function catalogEntryFromWire(value: unknown): CatalogEntry {
  const bad = () =>
    new GatewayError('GATEWAY_TIMEOUT', 'The model catalog answered malformed data.');
  if (!isRecord(value) || typeof value.id !== 'string') throw bad();
  const kind = value.kind as ModelKind;
  if (!MODEL_KINDS.includes(kind)) throw bad();
  const nodes = Array.isArray(value.nodes) ? value.nodes.filter(isRecord) : [];
  return {
    id: value.id,
    kind,
    provider: value.provider === 'external' ? 'external' : 'node',
    protocol: value.protocol === 'tgi' ? 'tgi' : 'openai',
    upstreamModel: typeof value.upstreamModel === 'string' ? value.upstreamModel : value.id,
    maxOutputTokens: Number(value.maxOutputTokens) || 1,
    nodes: nodes
      .filter((node) => typeof node.url === 'string')
      .map((node) => ({
        url: String(node.url),
        weight: typeof node.weight === 'number' && node.weight > 0 ? node.weight : 1,
      })),
  };
}
