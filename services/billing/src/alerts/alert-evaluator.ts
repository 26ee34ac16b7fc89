/**
 * Evaluates one account's alerts and inserts each crossing into the outbox
 * (`alert_events`), `ON CONFLICT DO NOTHING` on the alert's deterministic id: evaluating twice,
 * or on several replicas at once, stores one event per alert. What "once per window" means:
 *
 * - `balance.low`: the available balance (credits − debits − pending holds, what admission
 *   spends from) below the threshold. Its window is an episode: it re-arms when the balance is
 *   seen at or above the threshold again after money came in (a credit or a refund; a hold
 *   settling cheaper than it reserved does not count), by counting `balance_low_episode` up.
 * - `budget.threshold`: a budget's spent + reserved (what admission counts against its limit)
 *   at or above each threshold percent; its window is the budget's current window (a new window,
 *   or a change of the budget, which starts one, re-arms it).
 * - `balance.exhaustion_projected`: the available balance lasts fewer than N hours at the last
 *   hour's settled spend (usage records); at most once per UTC day.
 */
import {
  microDzdToDzd,
  microDzdToWire,
  type AlertData,
  type BudgetThresholdData,
} from '@gateway/contracts';
import type { BudgetRepository, BudgetRow } from '../budgets/budget-repository.js';
import { alertEventId } from './alert-ids.js';
import type { AlertRepository, NewAlertEvent } from './alert-repository.js';
import type { AlertSettingsRow } from './alert-settings.js';

/** Budgets of one account read per evaluation, at most (MAX_BUDGETS_LISTED of the API). */
const MAX_BUDGETS_EVALUATED = 1_000;
const HOUR_MS = 3_600_000;

export type AlertEvent = NewAlertEvent;

interface Figures {
  availableMicroDzd: bigint;
  spentLastHourMicroDzd: bigint;
}

const money = (name: string, amount: bigint) => ({
  [`${name}_dzd`]: microDzdToDzd(amount),
  [`${name}_micro_dzd`]: microDzdToWire(amount),
});

export class AlertEvaluator {
  constructor(
    private readonly repository: AlertRepository,
    private readonly budgets: BudgetRepository,
  ) {}

  /** Evaluates the account as of `now`; answers the events it inserted (new ones only). */
  async evaluate(settings: AlertSettingsRow, now: Date): Promise<AlertEvent[]> {
    const figures = await this.figures(settings.accountId, now);
    const candidates: AlertEvent[] = [
      ...(await this.balanceLow(settings, figures)),
      ...(await this.budgetThresholds(settings, now)),
      ...this.exhaustion(settings, figures, now),
    ];
    const inserted: AlertEvent[] = [];
    for (const event of candidates) {
      if (await this.repository.insertEvent(event, now)) inserted.push(event);
    }
    return inserted;
  }

  private async figures(accountId: string, now: Date): Promise<Figures> {
    const since = new Date(now.getTime() - HOUR_MS);
    const figures = await this.repository.figures(accountId, since, now);
    return {
      availableMicroDzd: figures.availableMicroDzd,
      spentLastHourMicroDzd: figures.spentMicroDzd,
    };
  }

  private async balanceLow(settings: AlertSettingsRow, figures: Figures): Promise<AlertEvent[]> {
    const threshold = settings.balanceBelowMicroDzd;
    if (threshold === null) return [];
    const { accountId, balanceLowEpisode } = settings;
    const id = alertEventId(
      accountId,
      'balance.low',
      '',
      threshold.toString(),
      `episode:${balanceLowEpisode}`,
    );
    if (figures.availableMicroDzd >= threshold) {
      // Back above: the next fall is a new alert, once this episode's alert was raised.
      await this.repository.rearmBalance(accountId, balanceLowEpisode, id);
      return [];
    }
    return [
      {
        id,
        accountId,
        type: 'balance.low',
        data: {
          event_id: id,
          account_id: accountId,
          ...money('balance', figures.availableMicroDzd),
          ...money('threshold', threshold),
        } as AlertData,
      },
    ];
  }

  private async budgetThresholds(settings: AlertSettingsRow, now: Date): Promise<AlertEvent[]> {
    if (settings.budgetThresholdsPercent.length === 0) return [];
    const rows = await this.budgets.listForAccount(settings.accountId, now, MAX_BUDGETS_EVALUATED);
    return rows.flatMap((budget) =>
      settings.budgetThresholdsPercent
        .filter((percent) => reached(budget, percent))
        .map((percent) => budgetEvent(budget, percent)),
    );
  }

  private exhaustion(settings: AlertSettingsRow, figures: Figures, now: Date): AlertEvent[] {
    const hours = settings.exhaustionHours;
    const rate = figures.spentLastHourMicroDzd;
    if (hours === null || rate <= 0n) return [];
    // available / rate < hours, in integers: no rounding decides it.
    if (figures.availableMicroDzd >= rate * BigInt(hours)) return [];
    const { accountId } = settings;
    const day = now.toISOString().slice(0, 10);
    const id = alertEventId(accountId, 'balance.exhaustion_projected', '', String(hours), day);
    const projected = Number((figures.availableMicroDzd * 1000n) / rate) / 1000;
    return [
      {
        id,
        accountId,
        type: 'balance.exhaustion_projected',
        data: {
          event_id: id,
          account_id: accountId,
          ...money('balance', figures.availableMicroDzd),
          spend_rate_dzd_per_hour: microDzdToDzd(rate),
          spend_rate_micro_dzd_per_hour: microDzdToWire(rate),
          projected_hours: projected,
          threshold_hours: hours,
        } as AlertData,
      },
    ];
  }
}

/** used × 100 ≥ limit × percent, exactly (µDZD integers). */
const reached = (budget: BudgetRow, percent: number): boolean =>
  (budget.spentMicroDzd + budget.reservedMicroDzd) * 100n >= budget.limitMicroDzd * BigInt(percent);

function budgetEvent(budget: BudgetRow, percent: number): AlertEvent {
  const window = budget.windowStart.toISOString();
  const id = alertEventId(budget.accountId, 'budget.threshold', budget.id, String(percent), window);
  const data: BudgetThresholdData = {
    event_id: id,
    account_id: budget.accountId,
    budget: {
      applies_to: budget.apiKeyId === null ? 'scoped_token' : 'api_key',
      owner: budget.apiKeyId === null ? budget.scopedTokenId! : budget.apiKeyName!,
      period: budget.period,
      time_zone: budget.timeZone,
    },
    threshold_percent: percent,
    used_dzd: microDzdToDzd(budget.spentMicroDzd + budget.reservedMicroDzd),
    used_micro_dzd: microDzdToWire(budget.spentMicroDzd + budget.reservedMicroDzd),
    limit_dzd: microDzdToDzd(budget.limitMicroDzd),
    limit_micro_dzd: microDzdToWire(budget.limitMicroDzd),
    window_start: window,
    resets_at: budget.resetsAt?.toISOString() ?? null,
  };
  return { id, accountId: budget.accountId, type: 'budget.threshold', data };
}
