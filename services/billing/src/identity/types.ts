import type { InputModality } from '@gateway/contracts';
/**
 * Domain types of billing's identity part: accounts, API keys, scoped tokens, the model catalog
 * and rate-limit state. Framework-free: no Express and no Prisma types here (the Prisma store maps
 * its rows to these).
 */

import {
  MODEL_KINDS,
  MODEL_PROVIDERS,
  NODE_PROTOCOLS,
  type ModelKind,
  type ModelProvider,
  type NodeProtocol,
} from '@gateway/contracts';
import type { SealedValue } from '@gateway/crypto';

/** The current time. Injected everywhere a decision depends on time, so tests can move it. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

export type AccountStatus = 'active' | 'suspended';
export type WebhookFormat = 'A' | 'B';

export interface Account {
  /** Public user id: `usr_` + 20 lowercase base32 characters. */
  id: string;
  name: string;
  status: AccountStatus;
  rateLimitPerMinute: number;
  webhookFormat: WebhookFormat;
  createdAt: Date;
}

/** An AES-256-GCM sealed secret with the MASTER_KEY version that sealed it, as stored. */
export type SealedSecret = SealedValue;

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  /** SHA-256 of the raw key, lowercase hex. */
  keyDigest: string;
  /** The raw key, sealed (it is the HS256 secret of the key's scoped tokens). */
  secret: SealedSecret;
  createdAt: Date;
}

/** What an operator or dashboard may see of a key: never the key or its secret. */
export interface ApiKeySummary {
  name: string;
  createdAt: Date;
  /** Approximate (written at most once a minute per key); null: never used. */
  lastUsedAt: Date | null;
}

export type TokenOrigin = 'issued' | 'client';

export interface ScopedTokenRecord {
  id: string;
  /** SHA-256 of the full token string (`jwt:...`), lowercase hex. */
  digest: string;
  accountId: string;
  apiKeyName: string;
  /** Allowed models; null = any model. */
  models: string[] | null;
  expiresAt: Date;
  /** null = no limit. */
  spendingLimitMicroDzd: bigint | null;
  spentMicroDzd: bigint;
  reservedMicroDzd: bigint;
  revokedAt: Date | null;
  origin: TokenOrigin;
  createdAt: Date;
}

// Model kinds, providers and protocols are a contract shared with edge and the worker: defined
// once in contracts.
export { MODEL_KINDS, MODEL_PROVIDERS, NODE_PROTOCOLS };
export type { ModelKind, ModelProvider, NodeProtocol };

export interface ModelNode {
  /** http:// or https:// base address of a model server. */
  url: string;
  /** Relative routing weight; 1 when omitted. */
  weight?: number;
}

export interface CatalogModel {
  /** Public model id; may contain '/'. */
  id: string;
  kind: ModelKind;
  provider: ModelProvider;
  protocol: NodeProtocol;
  upstreamModel: string;
  inputPriceMicroDzdPerM: bigint;
  outputPriceMicroDzdPerM: bigint;
  maxOutputTokens: number;
  nodes: ModelNode[];
  /** What the model reads besides text (issue 21); always includes `text`. */
  inputModalities: InputModality[];
  /** The hold's token ceiling per image part. */
  imageTokens: number;
  /** Whether image parts may be remote http(s) URLs, which the model's nodes fetch. */
  remoteImages: boolean;
  updatedAt: Date;
}

/** The authenticated caller, as `authenticate` returns it. */
export interface Principal {
  accountId: string;
  kind: 'api_key' | 'scoped_token';
  /** The API key used, or the key that signed the scoped token (usage is counted against it). */
  apiKeyName: string;
  /** Present exactly when kind is 'scoped_token'. */
  token?: PrincipalToken;
  rateLimitPerMinute: number;
  webhookFormat: WebhookFormat;
}

export interface PrincipalToken {
  /**
   * Registry id (`tok_...`), for holds and spend accounting; null for a client-minted token not
   * registered yet: admission registers it with its first hold (a refused request writes nothing).
   */
  id: string | null;
  /** SHA-256 of the token: the registry key admission registers it under. */
  digest: string;
  /** null = any model. */
  models: string[] | null;
  /** null = no limit. */
  spendingLimitMicroDzd: bigint | null;
  expiresAt: Date;
}
