/**
 * Domain types of billing's identity part: accounts, API keys, scoped tokens, the model catalog,
 * rate-limit state, and admission's request and answer. Framework-free: no Express and no Prisma
 * types here (the repositories map their rows to these).
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
import type { WebhookFormat } from '@gateway/ledger-calls';

/** The current time. Injected everywhere a decision depends on time, so tests can move it. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

export type AccountStatus = 'active' | 'suspended';

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

// The catalog's model, the caller and admission's request and answer are read from the
// admission function's row by edge as well as billing (ADR 0070): defined in @gateway/ledger-calls.
export type {
  Admission,
  AdmitRequest,
  ModelNode,
  ModelRecord,
  PlacedHold,
  Principal,
  PrincipalToken,
  WebhookFormat,
} from '@gateway/ledger-calls';
