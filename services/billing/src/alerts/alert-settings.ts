/**
 * Account alert settings: one row per account, set whole by PUT, read, removed.
 * The endpoint URL is sealed with MASTER_KEY (AAD `<accountId>:alerts`): a receiver's URL often
 * carries its own token, and the database must not show it.
 */
import type { Keyring } from '@gateway/crypto';
import {
  DEFAULT_BUDGET_THRESHOLDS_PERCENT,
  GatewayError,
  dzdToMicroDzd,
  microDzdToDzd,
  microDzdToWire,
  type AlertSettingsPutRequest,
  type AlertSettingsView,
} from '@gateway/contracts';
import type { AlertRepository, SealedSettingsRow } from './alert-repository.js';

export const alertUrlAad = (accountId: string): string => `${accountId}:alerts`;

export interface AlertSettingsRow {
  accountId: string;
  url: string;
  enabled: boolean;
  balanceBelowMicroDzd: bigint | null;
  budgetThresholdsPercent: number[];
  exhaustionHours: number | null;
  balanceLowEpisode: number;
  updatedAt: Date;
}

/** Opens a stored row (the URL decrypted with the key version it was sealed with). */
export function openSettings(keyring: Keyring, row: SealedSettingsRow): AlertSettingsRow {
  const url = keyring
    .open(
      {
        ciphertext: row.url_ciphertext,
        nonce: row.url_nonce,
        tag: row.url_tag,
        keyVersion: row.url_key_version,
      },
      alertUrlAad(row.account_id),
    )
    .toString('utf8');
  return {
    accountId: row.account_id,
    url,
    enabled: row.enabled,
    balanceBelowMicroDzd:
      row.balance_below_micro_dzd === null ? null : BigInt(row.balance_below_micro_dzd),
    budgetThresholdsPercent: row.budget_thresholds_percent,
    exhaustionHours: row.exhaustion_hours,
    balanceLowEpisode: row.balance_low_episode,
    updatedAt: row.updated_at,
  };
}

export function alertSettingsView(row: AlertSettingsRow): AlertSettingsView {
  const below = row.balanceBelowMicroDzd;
  return {
    object: 'alert_settings',
    account_id: row.accountId,
    url: row.url,
    enabled: row.enabled,
    balance_below_dzd: below === null ? null : microDzdToDzd(below),
    balance_below_micro_dzd: below === null ? null : microDzdToWire(below),
    budget_thresholds_percent: row.budgetThresholdsPercent,
    exhaustion_hours: row.exhaustionHours,
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The schema bounds the amount; a number's seventh decimal shows only when it is converted. */
function thresholdOf(amountDzd: number | string): bigint {
  try {
    return dzdToMicroDzd(amountDzd);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new GatewayError('invalid_request_body', `balance_below_dzd: ${error.message}`, {
      param: 'balance_below_dzd',
    });
  }
}

const notFound = (accountId: string) =>
  new GatewayError('resource_not_found', `Alert settings of account ${accountId} not found`);

export class AlertSettings {
  constructor(
    private readonly repository: AlertRepository,
    private readonly keyring: Keyring,
  ) {}

  async get(accountId: string): Promise<AlertSettingsView> {
    const row = await this.repository.find(accountId);
    if (!row) throw notFound(accountId);
    return alertSettingsView(openSettings(this.keyring, row));
  }

  /**
   * Replaces the account's settings (absent fields take their defaults). The balance alert's
   * episode is kept: changing the URL does not send an alert already sent again; a new
   * threshold is a new alert (the threshold is part of the alert's id).
   */
  async put(accountId: string, body: AlertSettingsPutRequest): Promise<AlertSettingsView> {
    const below = body.balance_below_dzd == null ? null : thresholdOf(body.balance_below_dzd);
    const thresholds = [
      ...new Set(body.budget_thresholds_percent ?? DEFAULT_BUDGET_THRESHOLDS_PERCENT),
    ].sort((a, b) => a - b);
    const row = await this.repository.put(accountId, {
      sealedUrl: this.keyring.seal(body.url, alertUrlAad(accountId)),
      enabled: body.enabled ?? true,
      balanceBelowMicroDzd: below,
      budgetThresholdsPercent: thresholds,
      exhaustionHours: body.exhaustion_hours ?? null,
    });
    return alertSettingsView(openSettings(this.keyring, row));
  }

  /** Removes the settings; alerts not published yet are then dropped by the outbox. */
  async remove(accountId: string): Promise<void> {
    if (!(await this.repository.remove(accountId))) throw notFound(accountId);
  }
}
